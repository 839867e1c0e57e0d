//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// apiWrites counts the writes that reached the objects of one namespace, from watches on the API
// server: what the controller did as the cluster saw it, whichever controller it is. The
// stand-in's own counts say more (syncs, answers that would have changed a child, statuses
// computed from a stale parent) but exist only under the stand-in; these hold under Metacontroller
// too.
type apiWrites struct {
	mu sync.Mutex
	// status counts the writes that changed a parent's status, by resource/name.
	status map[string]int
	// created and updated are the children each owner (its kind/name, from the controller owner
	// reference) got, and those whose content changed after their creation.
	created map[string]int
	updated map[string][]string
	// content is the last version of each object seen: its status for a parent, what its
	// controller writes for a child.
	content map[string]string
	// broken is why a watch ended before the test did: the counts are incomplete then.
	broken error
}

var (
	parentResources = []schema.GroupVersionResource{sparkApplications, scheduledSparkApplications, sparkConnects, sparkClusters}
	childResources  = []schema.GroupVersionResource{
		{Version: "v1", Resource: "pods"}, {Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "services"},
	}
)

// watchWrites starts counting the writes in the world's namespace until the test ends.
func (w *world) watchWrites(ctx context.Context) {
	w.t.Helper()
	a := &apiWrites{status: map[string]int{}, created: map[string]int{}, updated: map[string][]string{}, content: map[string]string{}}
	w.writes = a
	for _, gvr := range parentResources {
		w.startWatch(ctx, gvr, a.parentEvent)
	}
	for _, gvr := range childResources {
		w.startWatch(ctx, gvr, a.childEvent)
	}
}

// startWatch watches one resource of the namespace from now on, resuming after the API server
// closes the watch, and hands each event to record.
func (w *world) startWatch(ctx context.Context, gvr schema.GroupVersionResource, record func(watch.EventType, string, *unstructured.Unstructured)) {
	w.t.Helper()
	client := w.dyn.Resource(gvr).Namespace(w.ns)
	list, err := client.List(ctx, metav1.ListOptions{})
	require.NoError(w.t, err, "listing %s to watch them", gvr.Resource)
	watcher, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, options)
		},
	})
	require.NoError(w.t, err, "watching %s", gvr.Resource)
	go func() {
		for ev := range watcher.ResultChan() {
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				if ctx.Err() == nil {
					w.writes.fail(fmt.Errorf("watch of %s: %v", gvr.Resource, ev.Object))
				}
				continue
			}
			record(ev.Type, gvr.Resource+"/"+obj.GetName(), obj)
		}
	}()
	w.t.Cleanup(watcher.Stop)
}

func (a *apiWrites) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.broken == nil {
		a.broken = err
	}
}

func (a *apiWrites) parentEvent(t watch.EventType, key string, obj *unstructured.Unstructured) {
	a.mu.Lock()
	defer a.mu.Unlock()
	status := fingerprint(obj.Object["status"])
	switch t {
	case watch.Added:
		a.content[key] = status
	case watch.Modified:
		if a.content[key] != status {
			a.status[key]++
		}
		a.content[key] = status
	case watch.Deleted:
		delete(a.content, key)
	}
}

func (a *apiWrites) childEvent(t watch.EventType, key string, obj *unstructured.Unstructured) {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return
	}
	owner := ref.Kind + "/" + ref.Name
	a.mu.Lock()
	defer a.mu.Unlock()
	written := writtenContent(obj)
	switch t {
	case watch.Added:
		a.created[owner]++
		a.content[key] = written
	case watch.Modified:
		if a.content[key] != written && !slices.Contains(a.updated[owner], key) {
			a.updated[owner] = append(a.updated[owner], key)
		}
		a.content[key] = written
	case watch.Deleted:
		delete(a.content, key)
	}
}

// writtenContent is what a controller writes of a child: its labels, annotations and everything
// but its metadata and status. The scheduler's binding (spec.nodeName) is not the controller's.
func writtenContent(obj *unstructured.Unstructured) string {
	content := runtime.DeepCopyJSON(obj.Object)
	delete(content, "metadata")
	delete(content, "status")
	unstructured.RemoveNestedField(content, "spec", "nodeName")
	content["labels"] = obj.GetLabels()
	content["annotations"] = obj.GetAnnotations()
	return fingerprint(content)
}

func fingerprint(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable: %v", err)
	}
	return string(b)
}

// statusWrites is how many writes changed the status of the parent resource/name.
func (a *apiWrites) statusWrites(t *testing.T, gvr schema.GroupVersionResource, name string) int {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	require.NoError(t, a.broken, "the watches that count the writes")
	return a.status[gvr.Resource+"/"+name]
}

// children is how many children the owner (kind, name) got, and which of them changed after
// their creation.
func (a *apiWrites) children(t *testing.T, kind, name string) (created int, updated []string) {
	t.Helper()
	owner := kind + "/" + name
	a.mu.Lock()
	defer a.mu.Unlock()
	require.NoError(t, a.broken, "the watches that count the writes")
	return a.created[owner], slices.Clone(a.updated[owner])
}
