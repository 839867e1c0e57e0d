//go:build e2e

package kubeflow

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/compat"
)

var (
	sparkApplications = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}
	pods              = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	services          = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configMaps        = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// recorder watches a namespace while one application runs: the last version seen of every Pod,
// Service and ConfigMap made after it started (deleted ones too: Spark deletes its executors as
// it ends), and every state the application went through.
type recorder struct {
	app string

	mu      sync.Mutex
	objects map[schema.GroupVersionResource]map[string]*unstructured.Unstructured
	states  []string
	last    *unstructured.Unstructured
	errs    []error

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// record starts watching; the objects that exist already are left out.
func record(dyn dynamic.Interface, namespace, app string) (*recorder, error) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{app: app, objects: map[schema.GroupVersionResource]map[string]*unstructured.Unstructured{}, cancel: cancel}
	for _, gvr := range []schema.GroupVersionResource{pods, services, configMaps, sparkApplications} {
		list, err := dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			return nil, err
		}
		before := map[string]bool{}
		for _, o := range list.Items {
			before[o.GetName()] = true
		}
		r.objects[gvr] = map[string]*unstructured.Unstructured{}
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			r.watch(ctx, dyn.Resource(gvr).Namespace(namespace), gvr, list.GetResourceVersion(), before)
		}()
	}
	return r, nil
}

// watch follows one resource from version, again from the last event seen when the API server
// ends the watch.
func (r *recorder) watch(ctx context.Context, client dynamic.ResourceInterface, gvr schema.GroupVersionResource, version string, before map[string]bool) {
	for ctx.Err() == nil {
		w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: version, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() == nil {
				r.fail(fmt.Errorf("watching %s: %w", gvr.Resource, err))
			}
			return
		}
		for event := range w.ResultChan() {
			if event.Type == watch.Error {
				r.fail(fmt.Errorf("watching %s: %v", gvr.Resource, event.Object))
				w.Stop()
				return
			}
			obj, ok := event.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			version = obj.GetResourceVersion()
			if event.Type == watch.Bookmark || before[obj.GetName()] {
				continue
			}
			r.seen(gvr, obj)
		}
		w.Stop()
	}
}

func (r *recorder) seen(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects[gvr][obj.GetName()] = obj
	if gvr != sparkApplications || obj.GetName() != r.app {
		return
	}
	r.last = obj
	state, _, _ := unstructured.NestedString(obj.Object, "status", "applicationState", "state")
	if state != "" && (len(r.states) == 0 || r.states[len(r.states)-1] != state) {
		r.states = append(r.states, state)
	}
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// stop ends the watches.
func (r *recorder) stop() {
	r.cancel()
	r.done.Wait()
}

// terminalStates end an application: no operator acts on it again.
var terminalStates = map[string]bool{"COMPLETED": true, "FAILED": true}

// submissionFailedFor is how long SUBMISSION_FAILED must stay to count as the end: with retries
// left, both operators submit again (the corpus' retry intervals are a second or two).
const submissionFailedFor = 20 * time.Second

// waitForEnd waits until the application reaches a terminal state, and returns its states so far.
func (r *recorder) waitForEnd(timeout time.Duration) ([]string, error) {
	var changed time.Time
	seen := 0
	for deadline := time.Now().Add(timeout); ; time.Sleep(250 * time.Millisecond) {
		r.mu.Lock()
		states, errs := append([]string(nil), r.states...), r.errs
		r.mu.Unlock()
		if len(errs) > 0 {
			return states, errs[0]
		}
		if len(states) != seen {
			seen, changed = len(states), time.Now()
		}
		if len(states) > 0 && terminalStates[states[len(states)-1]] {
			return states, nil
		}
		if len(states) > 0 && states[len(states)-1] == "SUBMISSION_FAILED" && time.Since(changed) > submissionFailedFor {
			return states, nil
		}
		if time.Now().After(deadline) {
			return states, fmt.Errorf("no terminal state within %s: states %v", timeout, states)
		}
	}
}

// capture is what the recorder saw, as compat compares it.
func (r *recorder) capture() compat.Capture {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := compat.Capture{States: append([]string(nil), r.states...)}
	if r.last != nil {
		c.Status, _, _ = unstructured.NestedMap(r.last.Object, "status")
	}
	var executors []*unstructured.Unstructured
	for _, pod := range r.objects[pods] {
		switch pod.GetLabels()["spark-role"] {
		case "driver":
			c.Driver = pod.Object
		case "executor":
			executors = append(executors, pod)
		}
	}
	// The first executor: ids are 1, 2, … in the order Spark asked for them.
	sort.Slice(executors, func(i, j int) bool {
		a, _ := strconv.Atoi(executors[i].GetLabels()["spark-exec-id"])
		b, _ := strconv.Atoi(executors[j].GetLabels()["spark-exec-id"])
		return a < b
	})
	if len(executors) > 0 {
		c.Executor = executors[0].Object
	}
	for _, s := range r.objects[services] {
		c.Services = append(c.Services, s.Object)
	}
	for _, cm := range r.objects[configMaps] {
		c.ConfigMaps = append(c.ConfigMaps, cm.Object)
	}
	if conf := driverConfMap(c.Driver); conf != "" {
		if cm := r.objects[configMaps][conf]; cm != nil {
			text, _, _ := unstructured.NestedString(cm.Object, "data", "spark.properties")
			c.Properties = compat.ParseProperties(text)
		}
	}
	return c
}

// sparkConfDir is where both operators' drivers read spark.properties from.
const sparkConfDir = "/opt/spark/conf"

// driverConfMap is the ConfigMap the driver's container mounts at sparkConfDir.
func driverConfMap(driver map[string]any) string {
	if driver == nil {
		return ""
	}
	containers, _, _ := unstructured.NestedSlice(driver, "spec", "containers")
	volumes, _, _ := unstructured.NestedSlice(driver, "spec", "volumes")
	for _, c := range containers {
		mounts, _, _ := unstructured.NestedSlice(c.(map[string]any), "volumeMounts")
		for _, m := range mounts {
			mount := m.(map[string]any)
			if mount["mountPath"] != sparkConfDir {
				continue
			}
			for _, v := range volumes {
				volume := v.(map[string]any)
				if volume["name"] != mount["name"] {
					continue
				}
				name, _, _ := unstructured.NestedString(volume, "configMap", "name")
				return name
			}
		}
	}
	return ""
}
