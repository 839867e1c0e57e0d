//go:build e2e

package mcstandin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// With ignoreStatusChanges, a parent update enqueues a sync only when Metacontroller's
// updateParentObject would: a new generation, labels, annotations or a deletion timestamp, or
// an informer resync (the same object twice). Without it, every update does.
func TestParentUpdatesWithIgnoreStatusChanges(t *testing.T) {
	base := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
			"metadata": map[string]any{"name": "app", "namespace": "ns", "generation": int64(1),
				"labels": map[string]any{"team": "a"}, "annotations": map[string]any{"note": "x"}, "resourceVersion": "1"},
			"status": map[string]any{"applicationState": map[string]any{"state": "SUBMITTED"}},
		}}
		return u
	}
	changed := func(f func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := base()
		u.SetResourceVersion("2")
		f(u)
		return u
	}
	same := base()
	tests := []struct {
		name        string
		old, cur    *unstructured.Unstructured
		whenIgnored bool
	}{
		{"status only", base(), changed(func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "RUNNING", "status", "applicationState", "state")
		}), false},
		{"finalizers only", base(), changed(func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{"metacontroller.io/compositecontroller-x"})
		}), false},
		{"generation", base(), changed(func(u *unstructured.Unstructured) { u.SetGeneration(2) }), true},
		{"labels", base(), changed(func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "b"}) }), true},
		{"annotations", base(), changed(func(u *unstructured.Unstructured) { u.SetAnnotations(nil) }), true},
		{"deletion", base(), changed(func(u *unstructured.Unstructured) {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
		}), true},
		{"informer resync", same, same, true},
	}
	for _, ignore := range []bool{true, false} {
		for _, tt := range tests {
			cc := &CompositeController{}
			cc.Spec.ParentResource.IgnoreStatusChanges = ptr.To(ignore)
			c := &Controller{cc: cc, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
			c.onParentUpdate(tt.old, tt.cur)
			want := tt.whenIgnored || !ignore
			assert.Equal(t, want, c.queue.Len() == 1, "ignoreStatusChanges=%v, %s: enqueued", ignore, tt.name)
			c.queue.ShutDown()
		}
	}
}
