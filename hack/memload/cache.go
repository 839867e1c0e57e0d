package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// runCache is the -cache mode: what one Pod costs a cache that keeps objects as Metacontroller's
// informers do, decoded into unstructured maps (managedFields included, no transform). It decodes
// n of them as the API server serves them, keeps them, and reports the heap they hold per object
// next to their JSON size: small Pods (the kind of the +132 MiB per 10,000 measured with
// Metacontroller, to compare) and running Spark executor Pods.
func runCache(n int, out io.Writer) error {
	if err := measureCache(n, "small Pods (kubectl run, no kubelet yet)", func(id int) ([]byte, error) {
		return []byte(fmt.Sprintf(smallPod, id, id, 1000+id, id)), nil
	}, out); err != nil {
		return err
	}
	return measureCache(n, "executor Pods (running, as served)", func(id int) ([]byte, error) { return json.Marshal(executorPod(id)) }, out)
}

func measureCache(n int, what string, pod func(id int) ([]byte, error), out io.Writer) error {
	var jsonBytes int
	objs := make([]*unstructured.Unstructured, 0, n)
	before := heapInUse()
	for id := 1; id <= n; id++ {
		raw, err := pod(id)
		if err != nil {
			return fmt.Errorf("encode %s: %w", what, err)
		}
		jsonBytes += len(raw)
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("decode %s: %w", what, err)
		}
		objs = append(objs, u)
	}
	held := heapInUse() - before
	runtime.KeepAlive(objs)
	fmt.Fprintf(out, "%d %s: %.1f KiB of JSON each, %.1f KiB of heap each decoded (%.1fx), %.0f MiB in all\n",
		n, what, float64(jsonBytes)/float64(n)/1024, float64(held)/float64(n)/1024, float64(held)/float64(jsonBytes), float64(held)/(1<<20))
	return nil
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// smallPod is a Pod as `kubectl run` makes it and the API server returns it before a kubelet
// has reported on it: one container, the server's defaults, one managedFields entry.
const smallPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":"2026-11-24T10:00:00Z","labels":{"run":"pause-%d"},"managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:run":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"pause\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}},"manager":"kubectl-run","operation":"Update","time":"2026-11-24T10:00:00Z"}],"name":"pause-%d","namespace":"default","resourceVersion":"%d","uid":"6a1c7d2e-0000-4000-8000-%012d"},"spec":{"containers":[{"image":"registry.k8s.io/pause:3.10","imagePullPolicy":"IfNotPresent","name":"pause","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority","priority":0,"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"serviceAccount":"default","serviceAccountName":"default","terminationGracePeriodSeconds":30,"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}]},"status":{"phase":"Pending","qosClass":"BestEffort"}}`
