package localcluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
)

// GarbageCollector is the small owner-reference garbage collector the harness needs, since the
// generic registry has none: an object whose owners are all gone is deleted (background
// propagation), and the foregroundDeletion and orphan finalizers are completed. It watches the
// resources it is given, cluster-wide.
type GarbageCollector struct {
	dyn       dynamic.Interface
	mapper    meta.RESTMapper
	factory   dynamicinformer.DynamicSharedInformerFactory
	resources []schema.GroupVersionResource
	kick      chan struct{}
	// Errorf receives errors of a sweep; the next sweep retries.
	Errorf func(format string, args ...any)
}

// gcInterval bounds how long an orphan can outlive its owner when no event woke the collector.
const gcInterval = 500 * time.Millisecond

// NewGarbageCollector returns a collector for the given resources.
func NewGarbageCollector(cfg *restclient.Config, resources []schema.GroupVersionResource) (*GarbageCollector, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &GarbageCollector{
		dyn:       dyn,
		mapper:    restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		factory:   dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		resources: resources,
		kick:      make(chan struct{}, 1),
	}, nil
}

// Run collects until ctx ends.
func (g *GarbageCollector) Run(ctx context.Context) error {
	wake := func(any) {
		select {
		case g.kick <- struct{}{}:
		default:
		}
	}
	for _, gvr := range g.resources {
		if _, err := g.factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    wake,
			UpdateFunc: func(_, cur any) { wake(cur) },
			DeleteFunc: wake,
		}); err != nil {
			return err
		}
	}
	g.factory.Start(ctx.Done())
	for gvr, ok := range g.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("garbage collector: informer for %s did not sync", gvr)
		}
	}
	ticker := time.NewTicker(gcInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			g.factory.Shutdown()
			return nil
		case <-ticker.C:
		case <-g.kick:
		}
		g.sweep(ctx)
	}
}

type gcObject struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

func (g *GarbageCollector) sweep(ctx context.Context) {
	var all []gcObject
	uids := map[types.UID]bool{}
	dependents := map[types.UID][]gcObject{}
	for _, gvr := range g.resources {
		for _, o := range g.factory.ForResource(gvr).Informer().GetStore().List() {
			obj := o.(*unstructured.Unstructured)
			all = append(all, gcObject{gvr: gvr, obj: obj})
			uids[obj.GetUID()] = true
			for _, ref := range obj.GetOwnerReferences() {
				dependents[ref.UID] = append(dependents[ref.UID], gcObject{gvr: gvr, obj: obj})
			}
		}
	}
	for _, item := range all {
		var err error
		switch {
		case item.obj.GetDeletionTimestamp() != nil && slices.Contains(item.obj.GetFinalizers(), metav1.FinalizerDeleteDependents):
			err = g.finishForeground(ctx, item, dependents[item.obj.GetUID()])
		case item.obj.GetDeletionTimestamp() != nil && slices.Contains(item.obj.GetFinalizers(), metav1.FinalizerOrphanDependents):
			err = g.finishOrphan(ctx, item, dependents[item.obj.GetUID()])
		case len(item.obj.GetOwnerReferences()) > 0 && item.obj.GetDeletionTimestamp() == nil && !anyOwnerCached(item.obj, uids):
			err = g.collectIfOrphaned(ctx, item)
		}
		if err != nil && g.Errorf != nil {
			g.Errorf("garbage collector: %s %s/%s: %v", item.gvr.Resource, item.obj.GetNamespace(), item.obj.GetName(), err)
		}
	}
}

func anyOwnerCached(obj *unstructured.Unstructured, uids map[types.UID]bool) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if uids[ref.UID] {
			return true
		}
	}
	return false
}

// collectIfOrphaned deletes obj when the API server confirms that none of its owners exists:
// the cache alone could be behind a just-created owner.
func (g *GarbageCollector) collectIfOrphaned(ctx context.Context, item gcObject) error {
	for _, ref := range item.obj.GetOwnerReferences() {
		exists, err := g.ownerExists(ctx, item.obj.GetNamespace(), ref)
		if err != nil || exists {
			return err
		}
	}
	return g.delete(ctx, item, metav1.DeletePropagationBackground)
}

func (g *GarbageCollector) ownerExists(ctx context.Context, namespace string, ref metav1.OwnerReference) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	mapping, err := g.mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return false, fmt.Errorf("owner kind %s: %w", ref.Kind, err)
	}
	client := g.dyn.Resource(mapping.Resource)
	var owner *unstructured.Unstructured
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		owner, err = client.Namespace(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	} else {
		owner, err = client.Get(ctx, ref.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return owner.GetUID() == ref.UID, nil
}

// finishForeground deletes the dependents of an object deleted in the foreground and removes its
// finalizer once none is left.
func (g *GarbageCollector) finishForeground(ctx context.Context, item gcObject, deps []gcObject) error {
	for _, dep := range deps {
		if dep.obj.GetDeletionTimestamp() == nil {
			if err := g.delete(ctx, dep, metav1.DeletePropagationForeground); err != nil {
				return err
			}
		}
	}
	if len(deps) > 0 {
		return nil
	}
	return g.removeFinalizer(ctx, item, metav1.FinalizerDeleteDependents)
}

// finishOrphan removes the owner reference from every dependent, then the orphan finalizer.
func (g *GarbageCollector) finishOrphan(ctx context.Context, item gcObject, deps []gcObject) error {
	for _, dep := range deps {
		updated := dep.obj.DeepCopy()
		updated.SetOwnerReferences(removeOwner(dep.obj.GetOwnerReferences(), item.obj.GetUID()))
		if _, err := g.client(dep).Update(ctx, updated, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return g.removeFinalizer(ctx, item, metav1.FinalizerOrphanDependents)
}

func (g *GarbageCollector) removeFinalizer(ctx context.Context, item gcObject, finalizer string) error {
	updated := item.obj.DeepCopy()
	updated.SetFinalizers(removeString(item.obj.GetFinalizers(), finalizer))
	_, err := g.client(item).Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (g *GarbageCollector) delete(ctx context.Context, item gcObject, propagation metav1.DeletionPropagation) error {
	uid := item.obj.GetUID()
	err := g.client(item).Delete(ctx, item.obj.GetName(), metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &propagation,
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (g *GarbageCollector) client(item gcObject) dynamic.ResourceInterface {
	if item.obj.GetNamespace() == "" {
		return g.dyn.Resource(item.gvr)
	}
	return g.dyn.Resource(item.gvr).Namespace(item.obj.GetNamespace())
}
