package sparkcluster

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// clusterYAML is Apache's cluster-with-template example, in shape.
const clusterYAML = `
apiVersion: spark.apache.org/v1
kind: SparkCluster
metadata:
  name: prod
spec:
  runtimeVersions:
    sparkVersion: "4.0.1"
  clusterTolerations:
    instanceConfig:
      initWorkers: 3
      minWorkers: 3
      maxWorkers: 3
  sparkConf:
    spark.master.ui.title: "Prod Spark Cluster"
    spark.master.rest.host: "0.0.0.0"
    spark.ui.reverseProxy: "true"
  workerSpec:
    statefulSetSpec:
      template:
        spec:
          containers:
            - name: worker
              resources:
                requests: {cpu: "1", memory: 2Gi}
`

// world plays Metacontroller (creates and deletes children) and the StatefulSet controller
// (readyReplicas) for one SparkCluster.
type world struct {
	t        testing.TB
	now      time.Time
	c        *sparkv1.SparkCluster
	children coretest.Objects
	pods     map[string]map[string]any // the cluster's Pods, sent as related objects
	uids     int
	// deletingStatefulSets: an undesired StatefulSet stays observed, being deleted (its Pods
	// terminate first), instead of going at once.
	deletingStatefulSets bool
}

func newWorld(t testing.TB, doc string) *world {
	t.Helper()
	c := &sparkv1.SparkCluster{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), c))
	c.Namespace, c.UID, c.Generation = "spark", "3c1a0000-0000-4000-8000-0000000000a1", 1
	c.CreationTimestamp = metav1.NewTime(coretest.WorldStart)
	w := &world{t: t, now: coretest.WorldStart, c: c, children: coretest.Objects{}, pods: map[string]map[string]any{}}
	for _, key := range childKeys {
		w.children[key] = map[string]map[string]any{}
	}
	return w
}

func (w *world) request(finalizing bool) *metacontroller.SyncRequest {
	req := coretest.Request(w.t, coretest.MustJSON(w.t, w.c), w.children, coretest.Objects{keyPod: w.pods})
	req.Finalizing = finalizing
	return req
}

func (w *world) sync() error {
	w.t.Helper()
	resp, _, err := Sync(w.request(false), w.now)
	if err != nil {
		return err
	}
	require.NoError(w.t, json.Unmarshal(coretest.MustJSON(w.t, resp.Status), &w.c.Status))
	desired := map[string]bool{}
	for _, c := range coretest.Children(w.t, resp) {
		desired[c.Key+"/"+c.Name] = true
		// Metacontroller writes the answer over what runs (its apply takes every answered
		// field); the status and identity stay the observed ones.
		if prev, ok := w.children[c.Key][c.Name]; ok {
			md := c.Obj["metadata"].(map[string]any)
			md["uid"] = prev["metadata"].(map[string]any)["uid"]
			if st, ok := prev["status"]; ok {
				c.Obj["status"] = st
			}
			coretest.SetLastApplied(md, c.Answered)
		} else {
			w.uids++
			coretest.Created(c, w.uids)
		}
		w.children[c.Key][c.Name] = c.Obj
	}
	for key, objs := range w.children {
		for n, obj := range objs {
			if desired[key+"/"+n] {
				continue
			}
			if key == keyStatefulSet && w.deletingStatefulSets {
				obj["metadata"].(map[string]any)["deletionTimestamp"] = w.now.Format(time.RFC3339)
				continue
			}
			delete(objs, n)
		}
	}
	return nil
}

func (w *world) settle() {
	w.t.Helper()
	for range 5 {
		before := string(coretest.MustJSON(w.t, w.c.Status))
		require.NoError(w.t, w.sync())
		if before == string(coretest.MustJSON(w.t, w.c.Status)) {
			return
		}
	}
}

// ready sets the readyReplicas of a StatefulSet (master or worker).
func (w *world) ready(role string, n int) {
	sts := w.children[keyStatefulSet][w.c.Name+"-"+role]
	require.NotNil(w.t, sts, "no %s StatefulSet", role)
	sts["status"] = map[string]any{"replicas": n, "readyReplicas": n}
}

func (w *world) advance(d time.Duration) { w.now = w.now.Add(d) }

func (w *world) edit(f func(*sparkv1.ClusterSpec)) {
	f(&w.c.Spec)
	w.c.Generation++
}

// pod adds one of the cluster's Pods with the given status.
func (w *world) pod(role string, index int, status map[string]any) {
	n := fmt.Sprintf("%s-%s-%d", w.c.Name, role, index)
	w.pods[n] = map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": n, "namespace": w.c.Namespace, "labels": map[string]any{LabelClusterName: w.c.Name, LabelSparkRole: role}},
		"status":   status,
	}
}
