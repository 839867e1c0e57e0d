package mcstandin

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err == nil {
		c.queue.Add(key)
	}
}

// onParentUpdate enqueues an updated parent unless ignoreStatusChanges is set and the update
// changed none of what Metacontroller's updateParentObject looks at: generation, labels,
// annotations, deletion timestamp. As there, an informer resync (the same object twice) is
// always enqueued, and a change of the finalizers, owner references or status alone is not.
func (c *Controller) onParentUpdate(old, cur any) {
	if c.cc.Spec.ParentResource.ignoresStatusChanges() {
		oldObj, ok1 := old.(*unstructured.Unstructured)
		curObj, ok2 := cur.(*unstructured.Unstructured)
		if ok1 && ok2 && oldObj != curObj &&
			oldObj.GetGeneration() == curObj.GetGeneration() &&
			equality.Semantic.DeepEqual(oldObj.GetLabels(), curObj.GetLabels()) &&
			equality.Semantic.DeepEqual(oldObj.GetAnnotations(), curObj.GetAnnotations()) &&
			curObj.GetDeletionTimestamp() == nil {
			return
		}
	}
	c.enqueue(cur)
}

func (c *Controller) onChildUpdate(old, cur any) {
	oldObj, curObj := old.(*unstructured.Unstructured), cur.(*unstructured.Unstructured)
	if oldObj.GetResourceVersion() == curObj.GetResourceVersion() {
		return
	}
	if oldRef, curRef := metav1.GetControllerOf(oldObj), metav1.GetControllerOf(curObj); oldRef != nil && (curRef == nil || oldRef.UID != curRef.UID) {
		c.onChild(oldObj)
	}
	c.onChild(curObj)
}

// onChild enqueues the parent that owns (or, for an orphan, would adopt) a child.
func (c *Controller) onChild(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	child, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	lister := c.factory.ForResource(c.parent.gvr).Lister()
	if ref := metav1.GetControllerOf(child); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != c.parent.gvk.Group || ref.Kind != c.parent.gvk.Kind {
			return
		}
		parent, err := lister.ByNamespace(child.GetNamespace()).Get(ref.Name)
		if err != nil {
			return
		}
		if p := parent.(*unstructured.Unstructured); p.GetUID() == ref.UID {
			c.enqueue(p)
		}
		return
	}
	parents, err := lister.ByNamespace(child.GetNamespace()).List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range parents {
		parent := p.(*unstructured.Unstructured)
		if selector, err := c.selector(parent); err == nil && selector.Matches(labels.Set(child.GetLabels())) {
			c.enqueue(parent)
		}
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	err := c.sync(ctx, key)
	c.record(key, err)
	if err != nil {
		if ctx.Err() == nil {
			c.queue.AddRateLimited(key)
		}
		return true
	}
	c.queue.Forget(key)
	return true
}

func (c *Controller) record(key string, err error) {
	c.mu.Lock()
	s, ok := c.stats[key]
	if !ok {
		s = &ParentStats{}
		c.stats[key] = s
	}
	s.Syncs++
	if err == nil {
		s.ConsecutiveErrors = 0
		c.mu.Unlock()
		return
	}
	s.Errors++
	repeated := s.LastError == err.Error()
	if repeated {
		s.ConsecutiveErrors++
	} else {
		s.ConsecutiveErrors = 1
	}
	s.LastError, s.LastErrorAt = err.Error(), time.Now()
	c.mu.Unlock()
	if repeated {
		return
	}
	if c.opts.Logf != nil {
		c.opts.Logf("%s %s: sync error: %v", c.cc.Metadata.Name, key, err)
	}
	c.emitSyncError(key, err)
}

// emitSyncError records a Warning event on the parent, as Metacontroller does, once per distinct
// message.
func (c *Controller) emitSyncError(key string, syncErr error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return
	}
	obj, err := c.factory.ForResource(c.parent.gvr).Lister().ByNamespace(namespace).Get(name)
	if err != nil {
		return
	}
	parent := obj.(*unstructured.Unstructured)
	now := metav1.Now()
	event := &corev1.Event{
		// Named like client-go's event recorder names events.
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, now.UnixNano()), Namespace: namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Namespace: namespace, Name: name,
			UID: parent.GetUID(), ResourceVersion: parent.GetResourceVersion(),
		},
		Reason: "SyncError", Message: "Sync error: " + syncErr.Error(), Type: corev1.EventTypeWarning,
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source: corev1.EventSource{Component: "e2e-contract-controller"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.core.CoreV1().Events(namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil && c.opts.Logf != nil {
		c.opts.Logf("%s %s: recording the SyncError event: %v", c.cc.Metadata.Name, key, err)
	}
}
