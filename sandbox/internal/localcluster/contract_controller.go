package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	kjson "sigs.k8s.io/json"
)

// ContractController is a local stand-in for Metacontroller, not Metacontroller, for the
// end-to-end tests and the sandbox (docs/local.md). It drives hooks the way Metacontroller's
// CompositeController does, following its documented contract (and its source, v4), so the real
// hooks run against a real API server:
//
//   - the finalizer metacontroller.io/compositecontroller-<name> while a finalize hook exists;
//   - children claimed by controller owner reference and, with generateSelector, the
//     controller-uid label (orphans matching the selector are adopted, mismatches released);
//   - the customize hook asked once per parent generation, its relatedResources listed by label
//     selector or names in the parent's namespace;
//   - the sync hook (the finalize hook while the parent is being deleted) POSTed as JSON; any
//     non-200 answer or bad JSON changes nothing and is retried with back-off;
//   - desired children created with the controller owner reference and the last-applied
//     annotation, undesired ones deleted with a UID precondition, existing ones updated per
//     updateStrategy (OnDelete, InPlace by three-way merge, Recreate);
//   - .status replaced through the status subresource with observedGeneration, compared with and
//     written over a fresh read of the parent (same UID), skipped when equal, retried on conflicts;
//   - resyncAfterSeconds honoured, the finalizer removed on finalized: true;
//   - with parentResource.ignoreStatusChanges, a parent update that changes neither the
//     generation, the labels, the annotations nor the deletion timestamp brings no sync.
//
// Deliberate differences, all to make a broken hook fail loudly in a test: status writes ask for
// strict field validation, so an unknown status field is an error (Metacontroller's write would
// have the API server drop it with a warning); a desired child of a kind that is not a declared
// child resource is an error; back-off is capped at MaxBackoff; a controller can be limited to
// one namespace so tests can run side by side; and Stats reports what Metacontroller does
// silently: status writes computed from a stale cached parent over a newer status (StaleWrites).
type ContractController struct {
	cc      *CompositeController
	ccJSON  json.RawMessage
	opts    ControllerOptions
	dyn     dynamic.Interface
	core    kubernetes.Interface
	mapper  meta.RESTMapper
	http    *http.Client
	factory dynamicinformer.DynamicSharedInformerFactory
	// clusterFactory watches cluster-scoped related resources (Kueue's ResourceFlavors, say),
	// which a namespace-limited factory cannot list.
	clusterFactory dynamicinformer.DynamicSharedInformerFactory
	queue          workqueue.TypedRateLimitingInterface[string]
	finalizer      string

	parent   resourceInfo
	children []childInfo

	mu             sync.Mutex
	customizeCache map[string]customizeEntry
	related        map[schema.GroupVersionResource]cache.SharedIndexInformer
	stats          map[string]*ParentStats
	stopCh         <-chan struct{}
}

// ControllerOptions tune a ContractController.
type ControllerOptions struct {
	// Namespace limits the controller to parents in one namespace; empty means all.
	Namespace string
	// Workers is the number of parallel syncs (default 2).
	Workers int
	// MaxBackoff caps the retry delay after a failed sync (default 2s; Metacontroller's is 1000s).
	MaxBackoff time.Duration
	// Logf, when set, receives each sync error once (until a different one occurs).
	Logf func(format string, args ...any)
	// HTTPClient calls the hooks; the default reaches URLs as this machine resolves them.
	HTTPClient *http.Client
}

// ParentStats is what the controller observed for one parent, for test diagnostics.
type ParentStats struct {
	Syncs        int
	StatusWrites int
	Errors       int
	// ConsecutiveErrors counts failed syncs in a row with the same error; a success resets it.
	ConsecutiveErrors int
	LastError         string
	LastErrorAt       time.Time
	// Children counts the writes to children, as Metacontroller would make them.
	Children ChildWrites
	// StaleWrites are the status writes whose sync started from a cached parent with an
	// out-of-date status and that replaced a newer status with a different one, as Metacontroller
	// does; the oldest first. A hook that keeps its memory in the status may go back in time by
	// them.
	StaleWrites []StaleWrite
}

// ChildWrites counts what the controller did to a parent's children.
type ChildWrites struct {
	Creates, Deletes int
	// Updates are children rewritten (InPlace) or deleted to be recreated (Recreate) because the
	// hook's answer differed from the last applied configuration.
	Updates int
	// Drifts are children of OnDelete kinds whose answer differed likewise: Metacontroller leaves
	// them alone, but a hook whose answers drift would rewrite them under another strategy.
	Drifts int
	// Changed lists "Kind/name" of every update and drift, in order, for a failure message.
	Changed []string
}

// StaleWrite is a status write computed from a stale parent over a newer status.
type StaleWrite struct {
	// ReadVersion is the resourceVersion of the parent the hook was given; OverVersion the one
	// whose status was replaced.
	ReadVersion, OverVersion string
	// Fields are the top-level status fields the write changed.
	Fields []string
	// Over is the status that was replaced, Written the one written.
	Over, Written map[string]any
	// Description says what each field was and became.
	Description string
}

type resourceInfo struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
}

type childInfo struct {
	resourceInfo
	method string
}

type customizeEntry struct {
	generation int64
	rules      []relatedRule
}

type relatedRule struct {
	APIVersion    string                `json:"apiVersion"`
	Resource      string                `json:"resource"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	Namespace     string                `json:"namespace,omitempty"`
	Names         []string              `json:"names,omitempty"`
}

// NewContractController prepares a controller for cc. Like Metacontroller it refuses a parent or
// child resource the API server does not serve.
func NewContractController(cfg *restclient.Config, cc *CompositeController, opts ControllerOptions) (*ContractController, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 2 * time.Second
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ccJSON, err := json.Marshal(cc)
	if err != nil {
		return nil, err
	}
	c := &ContractController{
		cc:             cc,
		ccJSON:         ccJSON,
		opts:           opts,
		dyn:            dyn,
		core:           core,
		mapper:         restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		http:           opts.HTTPClient,
		factory:        dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, namespaceOrAll(opts.Namespace), nil),
		clusterFactory: dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](
			5*time.Millisecond, opts.MaxBackoff)),
		finalizer:      "metacontroller.io/compositecontroller-" + cc.Metadata.Name,
		customizeCache: map[string]customizeEntry{},
		related:        map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		stats:          map[string]*ParentStats{},
	}
	if c.parent, err = c.resolve(cc.Spec.ParentResource.ResourceRule); err != nil {
		return nil, fmt.Errorf("CompositeController %s parent: %w", cc.Metadata.Name, err)
	}
	for _, rule := range cc.Spec.ChildResources {
		info, err := c.resolve(rule.ResourceRule)
		if err != nil {
			return nil, fmt.Errorf("CompositeController %s child: %w", cc.Metadata.Name, err)
		}
		switch rule.Method() {
		case "OnDelete", "InPlace", "Recreate", "RollingInPlace", "RollingRecreate":
		default:
			return nil, fmt.Errorf("CompositeController %s child %s: unknown update method %q", cc.Metadata.Name, rule.Resource, rule.Method())
		}
		c.children = append(c.children, childInfo{resourceInfo: info, method: rule.Method()})
	}
	return c, nil
}

func namespaceOrAll(ns string) string {
	if ns == "" {
		return metav1.NamespaceAll
	}
	return ns
}

func (c *ContractController) resolve(rule ResourceRule) (resourceInfo, error) {
	gv, err := schema.ParseGroupVersion(rule.APIVersion)
	if err != nil {
		return resourceInfo{}, err
	}
	gvr := gv.WithResource(rule.Resource)
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return resourceInfo{}, fmt.Errorf("resource %s is not served: %w", gvr, err)
	}
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return resourceInfo{}, err
	}
	return resourceInfo{gvr: gvr, gvk: gvk, namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}, nil
}

// Run starts the informers and workers and blocks until ctx ends.
func (c *ContractController) Run(ctx context.Context) error {
	c.stopCh = ctx.Done()
	parentInformer := c.factory.ForResource(c.parent.gvr).Informer()
	if _, err := parentInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.onParentUpdate,
		DeleteFunc: c.enqueue,
	}); err != nil {
		return err
	}
	for _, child := range c.children {
		if _, err := c.factory.ForResource(child.gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onChild,
			UpdateFunc: c.onChildUpdate,
			DeleteFunc: c.onChild,
		}); err != nil {
			return err
		}
	}
	c.factory.Start(ctx.Done())
	for gvr, synced := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("informer for %s did not sync", gvr)
		}
	}
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	c.factory.Shutdown()
	c.clusterFactory.Shutdown()
	return nil
}

// Stats returns a copy of what the controller observed for the parent namespace/name.
func (c *ContractController) Stats(namespace, name string) ParentStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stats[namespace+"/"+name]; ok {
		out := *s
		out.StaleWrites = slices.Clone(s.StaleWrites)
		out.Children.Changed = slices.Clone(s.Children.Changed)
		return out
	}
	return ParentStats{}
}

func (c *ContractController) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err == nil {
		c.queue.Add(key)
	}
}

// onParentUpdate enqueues an updated parent unless ignoreStatusChanges is set and the update
// changed none of what Metacontroller's updateParentObject looks at: generation, labels,
// annotations, deletion timestamp. As there, an informer resync (the same object twice) is
// always enqueued, and a change of the finalizers, owner references or status alone is not.
func (c *ContractController) onParentUpdate(old, cur any) {
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

func (c *ContractController) onChildUpdate(old, cur any) {
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
func (c *ContractController) onChild(obj any) {
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

func (c *ContractController) processNext(ctx context.Context) bool {
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

func (c *ContractController) record(key string, err error) {
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
func (c *ContractController) emitSyncError(key string, syncErr error) {
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

// sync is one CompositeController reconciliation of the parent at key.
func (c *ContractController) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	obj, err := c.factory.ForResource(c.parent.gvr).Lister().ByNamespace(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	parent := obj.(*unstructured.Unstructured).DeepCopy()

	if parent, err = c.syncFinalizer(ctx, parent); err != nil {
		return fmt.Errorf("can't sync finalizer for %s %s: %w", c.parent.gvk.Kind, key, err)
	}
	observed, err := c.claimChildren(ctx, parent)
	if err != nil {
		return err
	}
	related, err := c.relatedObjects(ctx, parent)
	if err != nil {
		return err
	}
	resp, err := c.callSyncHook(ctx, parent, observed, related)
	if err != nil {
		return err
	}
	desired, err := c.desiredChildren(parent, resp.Children)
	if err != nil {
		return err
	}
	if resp.ResyncAfterSeconds > 0 {
		c.queue.AddAfter(key, time.Duration(resp.ResyncAfterSeconds*float64(time.Second)))
	}
	if resp.Finalized && slices.Contains(parent.GetFinalizers(), c.finalizer) {
		if parent, err = c.setFinalizer(ctx, parent, false); err != nil {
			return fmt.Errorf("can't remove finalizer for %s %s: %w", c.parent.gvk.Kind, key, err)
		}
	}
	var manageErr error
	if parent.GetDeletionTimestamp() == nil || c.shouldFinalize(parent) {
		if err := c.manageChildren(ctx, parent, observed, desired); err != nil {
			manageErr = fmt.Errorf("can't reconcile children for %s %s: %w", c.parent.gvk.Kind, key, err)
		}
	}
	if err := c.updateStatus(ctx, parent, resp.Status); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			// The parent changed or went away since this sync started; its event brings another.
			return manageErr
		}
		return fmt.Errorf("can't update status for %s %s: %w", c.parent.gvk.Kind, key, err)
	}
	return manageErr
}

func (c *ContractController) parentClient(namespace string) dynamic.ResourceInterface {
	return c.dyn.Resource(c.parent.gvr).Namespace(namespace)
}

func (c *ContractController) syncFinalizer(ctx context.Context, parent *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	enabled := c.cc.Spec.Hooks.Finalize != nil
	if slices.Contains(parent.GetFinalizers(), c.finalizer) == enabled {
		return parent, nil
	}
	if enabled && parent.GetDeletionTimestamp() != nil {
		// Too late to add it; it may already have been removed.
		return parent, nil
	}
	return c.setFinalizer(ctx, parent, enabled)
}

// setFinalizer adds or removes the controller's finalizer, retrying on conflicts against the
// live object as long as it is the same object (same UID).
func (c *ContractController) setFinalizer(ctx context.Context, parent *unstructured.Unstructured, present bool) (*unstructured.Unstructured, error) {
	current := parent
	for attempt := 0; ; attempt++ {
		finalizers := removeString(current.GetFinalizers(), c.finalizer)
		if present {
			finalizers = append(finalizers, c.finalizer)
		}
		updated := current.DeepCopy()
		updated.SetFinalizers(finalizers)
		out, err := c.parentClient(current.GetNamespace()).Update(ctx, updated, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) || attempt == 5 {
			return out, err
		}
		fresh, getErr := c.parentClient(current.GetNamespace()).Get(ctx, current.GetName(), metav1.GetOptions{})
		if getErr != nil {
			return nil, getErr
		}
		if fresh.GetUID() != parent.GetUID() {
			return nil, fmt.Errorf("%s %s was replaced (uid %s, want %s)", c.parent.gvk.Kind, parent.GetName(), fresh.GetUID(), parent.GetUID())
		}
		current = fresh
	}
}

// shouldFinalize mirrors Metacontroller: manage children of a parent being deleted only while
// our finalizer is on it and the garbage collector is not already deleting or orphaning them.
func (c *ContractController) shouldFinalize(parent *unstructured.Unstructured) bool {
	if c.cc.Spec.Hooks.Finalize == nil || !slices.Contains(parent.GetFinalizers(), c.finalizer) {
		return false
	}
	return !slices.Contains(parent.GetFinalizers(), metav1.FinalizerDeleteDependents) &&
		!slices.Contains(parent.GetFinalizers(), metav1.FinalizerOrphanDependents)
}

func (c *ContractController) selector(parent *unstructured.Unstructured) (labels.Selector, error) {
	ls := &metav1.LabelSelector{}
	if c.cc.Spec.GenerateSelector != nil && *c.cc.Spec.GenerateSelector {
		ls = metav1.AddLabelToSelector(ls, "controller-uid", string(parent.GetUID()))
	} else {
		raw, found, err := unstructured.NestedMap(parent.Object, "spec", "selector")
		if err != nil || !found {
			return nil, fmt.Errorf("can't get label selector from %s %s", c.parent.gvk.Kind, parent.GetName())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, ls); err != nil {
			return nil, err
		}
		if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
			return nil, errors.New(".spec.selector must have either matchLabels, matchExpressions, or both")
		}
	}
	return metav1.LabelSelectorAsSelector(ls)
}

// childMap is the children/related shape of a sync request: "Kind.apiVersion" → name → object.
type childMap map[string]map[string]*unstructured.Unstructured

func childKey(gvk schema.GroupVersionKind) string {
	return gvk.Kind + "." + gvk.GroupVersion().String()
}

// claimChildren lists each child type in the parent's namespace and keeps what the parent owns,
// adopting matching orphans and releasing owned objects that no longer match, like Kubernetes'
// ControllerRefManager.
func (c *ContractController) claimChildren(ctx context.Context, parent *unstructured.Unstructured) (childMap, error) {
	selector, err := c.selector(parent)
	if err != nil {
		return nil, err
	}
	observed := childMap{}
	for _, child := range c.children {
		group := map[string]*unstructured.Unstructured{}
		observed[childKey(child.gvk)] = group
		objs, err := c.factory.ForResource(child.gvr).Lister().ByNamespace(parent.GetNamespace()).List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("can't list %s children: %w", child.gvk.Kind, err)
		}
		for _, o := range objs {
			obj := o.(*unstructured.Unstructured)
			claimed, err := c.claim(ctx, parent, child, obj, selector)
			if err != nil {
				return nil, fmt.Errorf("can't claim %s %s: %w", child.gvk.Kind, obj.GetName(), err)
			}
			if claimed != nil {
				group[claimed.GetName()] = claimed
			}
		}
	}
	return observed, nil
}

func (c *ContractController) claim(ctx context.Context, parent *unstructured.Unstructured, child childInfo, obj *unstructured.Unstructured,
	selector labels.Selector,
) (*unstructured.Unstructured, error) {
	matches := selector.Matches(labels.Set(obj.GetLabels()))
	ref := metav1.GetControllerOf(obj)
	client := c.dyn.Resource(child.gvr).Namespace(obj.GetNamespace())
	switch {
	case ref != nil && ref.UID != parent.GetUID():
		return nil, nil
	case ref != nil && matches:
		return obj, nil
	case ref != nil:
		if parent.GetDeletionTimestamp() != nil {
			return nil, nil
		}
		released := obj.DeepCopy()
		released.SetOwnerReferences(removeOwner(obj.GetOwnerReferences(), parent.GetUID()))
		_, err := client.Update(ctx, released, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	case !matches || parent.GetDeletionTimestamp() != nil || obj.GetDeletionTimestamp() != nil:
		return nil, nil
	}
	// An orphan that matches: adopt it, after checking with the API server that the parent is
	// still this object and not being deleted.
	fresh, err := c.parentClient(parent.GetNamespace()).Get(ctx, parent.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if fresh.GetUID() != parent.GetUID() || fresh.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	adopted := obj.DeepCopy()
	adopted.SetOwnerReferences(append(obj.GetOwnerReferences(), controllerRef(parent)))
	return client.Update(ctx, adopted, metav1.UpdateOptions{})
}

func controllerRef(parent *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(), UID: parent.GetUID(),
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// relatedObjects asks the customize hook (once per parent name and generation, as Metacontroller
// caches it) and lists what its rules select.
func (c *ContractController) relatedObjects(ctx context.Context, parent *unstructured.Unstructured) (childMap, error) {
	related := childMap{}
	if c.cc.Spec.Hooks.Customize == nil {
		return related, nil
	}
	rules, err := c.customize(ctx, parent)
	if err != nil {
		return nil, err
	}
	for _, rule := range rules {
		info, err := c.resolve(ResourceRule{APIVersion: rule.APIVersion, Resource: rule.Resource})
		if err != nil {
			return nil, fmt.Errorf("related rule: %w", err)
		}
		informer, err := c.relatedInformer(info)
		if err != nil {
			return nil, err
		}
		group := related[childKey(info.gvk)]
		if group == nil {
			group = map[string]*unstructured.Unstructured{}
			related[childKey(info.gvk)] = group
		}
		for _, obj := range informer.GetStore().List() {
			u := obj.(*unstructured.Unstructured)
			ok, err := matchesRule(parent, u, rule)
			if err != nil {
				return nil, err
			}
			if ok {
				group[relativeName(parent, u)] = u
			}
		}
	}
	return related, nil
}

// forHookVersion files the objects of a request as Metacontroller v4.17 does for the hook's
// version. v1 (the default): by name relative to the parent, and for a namespaced parent
// without the cluster-scoped objects, which its v1 conversion filters out. v2: a namespaced
// object as "<namespace>/<name>", a cluster-scoped one by name, all kept.
func forHookVersion(version string, parent *unstructured.Unstructured, m childMap) childMap {
	out := childMap{}
	for key, group := range m {
		filed := map[string]*unstructured.Unstructured{}
		out[key] = filed
		for name, obj := range group {
			switch {
			case version == "v2" && obj.GetNamespace() != "":
				filed[obj.GetNamespace()+"/"+obj.GetName()] = obj
			case version != "v2" && parent.GetNamespace() != "" && obj.GetNamespace() == "":
				continue
			default:
				filed[name] = obj
			}
		}
	}
	return out
}

// relativeName is Metacontroller's v1 name of obj relative to parent: "<namespace>/<name>" for a
// namespaced object of a cluster-scoped parent, the name otherwise (a cluster-scoped object too).
func relativeName(parent, obj *unstructured.Unstructured) string {
	if parent.GetNamespace() == "" && obj.GetNamespace() != "" {
		return obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetName()
}

func matchesRule(parent, obj *unstructured.Unstructured, rule relatedRule) (bool, error) {
	// Metacontroller matches cluster-scoped related objects whatever the parent's namespace (a v1
	// sync request then leaves them out: forHookVersion); only namespaced ones must share it.
	sameNamespace := obj.GetNamespace() == "" || obj.GetNamespace() == parent.GetNamespace()
	byNames := rule.Namespace != "" || len(rule.Names) > 0
	if rule.LabelSelector != nil && byNames {
		return false, fmt.Errorf("related rule for %s has both labelSelector and namespace/names", rule.Resource)
	}
	if byNames {
		if rule.Namespace != "" && rule.Namespace != parent.GetNamespace() {
			return false, fmt.Errorf("related rule namespace %s differs from the parent's %s", rule.Namespace, parent.GetNamespace())
		}
		return sameNamespace && (len(rule.Names) == 0 || slices.Contains(rule.Names, obj.GetName())), nil
	}
	if !sameNamespace {
		return false, nil
	}
	selector := labels.Everything()
	if rule.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(rule.LabelSelector)
		if err != nil {
			return false, fmt.Errorf("related rule label selector: %w", err)
		}
		selector = s
	}
	return selector.Matches(labels.Set(obj.GetLabels())), nil
}

func (c *ContractController) customize(ctx context.Context, parent *unstructured.Unstructured) ([]relatedRule, error) {
	c.mu.Lock()
	entry, ok := c.customizeCache[parent.GetNamespace()+"/"+parent.GetName()]
	c.mu.Unlock()
	if ok && entry.generation == parent.GetGeneration() {
		return entry.rules, nil
	}
	request := map[string]any{"controller": c.ccJSON, "parent": parent.Object}
	var response struct {
		RelatedResources []relatedRule `json:"relatedResources"`
	}
	if err := c.post(ctx, c.cc.Spec.Hooks.Customize, "customize", request, &response); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.customizeCache[parent.GetNamespace()+"/"+parent.GetName()] = customizeEntry{generation: parent.GetGeneration(), rules: response.RelatedResources}
	c.mu.Unlock()
	return response.RelatedResources, nil
}

// relatedInformer starts (once) an informer for a related resource; its events enqueue every
// parent whose customize rules select the object.
func (c *ContractController) relatedInformer(info resourceInfo) (cache.SharedIndexInformer, error) {
	gvr := info.gvr
	c.mu.Lock()
	informer, ok := c.related[gvr]
	c.mu.Unlock()
	if ok {
		return informer, nil
	}
	factory := c.factory
	if !info.namespaced {
		factory = c.clusterFactory
	}
	informer = factory.ForResource(gvr).Informer()
	handler := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			c.notifyRelatedParents(u)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handler,
		UpdateFunc: func(_, cur any) { handler(cur) },
		DeleteFunc: handler,
	}); err != nil {
		return nil, err
	}
	factory.Start(c.stopCh)
	if !cache.WaitForCacheSync(c.stopCh, informer.HasSynced) {
		return nil, fmt.Errorf("informer for related %s did not sync", gvr)
	}
	c.mu.Lock()
	c.related[gvr] = informer
	c.mu.Unlock()
	return informer, nil
}

func (c *ContractController) notifyRelatedParents(obj *unstructured.Unstructured) {
	lister := c.factory.ForResource(c.parent.gvr).Lister()
	parents, err := lister.ByNamespace(obj.GetNamespace()).List(labels.Everything())
	if obj.GetNamespace() == "" {
		parents, err = lister.List(labels.Everything()) // a cluster-scoped object relates to parents anywhere
	}
	if err != nil {
		return
	}
	for _, p := range parents {
		parent := p.(*unstructured.Unstructured)
		c.mu.Lock()
		entry, ok := c.customizeCache[parent.GetNamespace()+"/"+parent.GetName()]
		c.mu.Unlock()
		if !ok {
			continue
		}
		for _, rule := range entry.rules {
			if matched, err := matchesRule(parent, obj, rule); err == nil && matched {
				c.enqueue(parent)
				break
			}
		}
	}
}

type syncResponse struct {
	Status             map[string]any   `json:"status"`
	Children           []map[string]any `json:"children"`
	ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
	Finalized          bool             `json:"finalized"`
}

func (c *ContractController) callSyncHook(ctx context.Context, parent *unstructured.Unstructured, observed, related childMap) (*syncResponse, error) {
	hook, name := c.cc.Spec.Hooks.Sync, "sync"
	finalizing := parent.GetDeletionTimestamp() != nil && c.cc.Spec.Hooks.Finalize != nil
	if finalizing {
		hook, name = c.cc.Spec.Hooks.Finalize, "finalize"
	}
	request := map[string]any{
		"controller": c.ccJSON,
		"parent":     parent.Object,
		"children":   forHookVersion(hook.Version, parent, observed),
		"related":    forHookVersion(hook.Version, parent, related),
		"finalizing": finalizing,
	}
	var resp syncResponse
	if err := c.post(ctx, hook, name, request, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// post calls a hook. Anything but 200 with a JSON body is an error, which leaves children and
// status as they are and retries the sync with back-off.
func (c *ContractController) post(ctx context.Context, hook *Hook, name string, request, response any) error {
	body, err := json.Marshal(request)
	if err != nil {
		return fmt.Errorf("%s hook: encoding the request: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, hook.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.url(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s hook: %w", name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s hook failed: %w", name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s hook failed: reading the response: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s hook failed: POST %s: HTTP %d: %s", name, hook.url(), resp.StatusCode, truncate(string(data), 500))
	}
	// As Metacontroller decodes it (sigs.k8s.io/json): whole numbers become int64, as in objects
	// read from the API server, so an unchanged child compares equal to its observed self.
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, response); err != nil {
		return fmt.Errorf("%s hook failed: POST %s: invalid JSON response: %w", name, hook.url(), err)
	}
	return nil
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// desiredChildren groups the hook's children like observed ones, after Metacontroller's
// defaulting (the parent's namespace, the controller-uid label) and checks.
func (c *ContractController) desiredChildren(parent *unstructured.Unstructured, children []map[string]any) (childMap, error) {
	selector, err := c.selector(parent)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, child := range c.children {
		declared[childKey(child.gvk)] = true
	}
	desired := childMap{}
	for i, raw := range children {
		if raw == nil {
			continue
		}
		obj := &unstructured.Unstructured{Object: raw}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("desired child %d has no apiVersion, kind or metadata.name", i)
		}
		key := childKey(obj.GroupVersionKind())
		if !declared[key] {
			return nil, fmt.Errorf("desired child %s %s is not of a declared child resource of CompositeController %s", key, obj.GetName(), c.cc.Metadata.Name)
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(parent.GetNamespace())
		}
		if obj.GetNamespace() != parent.GetNamespace() {
			return nil, fmt.Errorf("desired child %s %s is in namespace %s, not the parent's %s", key, obj.GetName(), obj.GetNamespace(), parent.GetNamespace())
		}
		objLabels, _, err := unstructured.NestedStringMap(obj.Object, "metadata", "labels")
		if err != nil {
			return nil, fmt.Errorf("invalid labels on desired child %s %s: %w", key, obj.GetName(), err)
		}
		if c.cc.Spec.GenerateSelector != nil && *c.cc.Spec.GenerateSelector {
			if objLabels == nil {
				objLabels = map[string]string{}
			}
			if _, ok := objLabels["controller-uid"]; !ok {
				objLabels["controller-uid"] = string(parent.GetUID())
				obj.SetLabels(objLabels)
			}
		}
		if !selector.Matches(labels.Set(objLabels)) {
			return nil, fmt.Errorf("labels on desired child %s %s don't match parent selector", key, obj.GetName())
		}
		if desired[key] == nil {
			desired[key] = map[string]*unstructured.Unstructured{}
		}
		if _, dup := desired[key][obj.GetName()]; dup {
			return nil, fmt.Errorf("desired child %s %s appears twice", key, obj.GetName())
		}
		desired[key][obj.GetName()] = obj
	}
	return desired, nil
}

// manageChildren deletes owned children that are not desired, creates missing ones and updates
// existing ones per update method. It keeps going after an error so one failure does not block
// the rest, and returns them all.
func (c *ContractController) manageChildren(ctx context.Context, parent *unstructured.Unstructured, observed, desired childMap) error {
	var errs []error
	for _, child := range c.children {
		key := childKey(child.gvk)
		client := c.dyn.Resource(child.gvr).Namespace(parent.GetNamespace())
		for _, name := range sortedNames(observed[key]) {
			obj := observed[key][name]
			if obj.GetDeletionTimestamp() != nil || desired[key][name] != nil {
				continue
			}
			if err := deleteWithUID(ctx, client, obj); err != nil {
				errs = append(errs, err)
				continue
			}
			c.countChild(parent, func(w *ChildWrites) { w.Deletes++ })
		}
		for _, name := range sortedNames(desired[key]) {
			if err := c.applyChild(ctx, client, child, parent, observed[key][name], desired[key][name]); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", child.gvk.Kind, name, err))
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

func (c *ContractController) applyChild(ctx context.Context, client dynamic.ResourceInterface, child childInfo, parent, observed, desired *unstructured.Unstructured) error {
	if observed == nil {
		obj := desired.DeepCopy()
		if err := setLastApplied(obj, obj.Object); err != nil {
			return err
		}
		obj.SetOwnerReferences(append(obj.GetOwnerReferences(), controllerRef(parent)))
		_, err := client.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// Metacontroller swallows this too; it is a child someone else owns, or one our
			// cache has not seen yet.
			return nil
		}
		if err == nil {
			c.countChild(parent, func(w *ChildWrites) { w.Creates++ })
		}
		return err
	}
	updated, err := applyUpdate(observed, desired)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(updated.Object, observed.Object) || observed.GetDeletionTimestamp() != nil {
		return nil
	}
	changed := desired.GetKind() + "/" + desired.GetName()
	switch child.method {
	case "OnDelete":
		c.countChild(parent, func(w *ChildWrites) { w.Drifts++; w.Changed = append(w.Changed, changed) })
		return nil
	case "Recreate", "RollingRecreate":
		c.countChild(parent, func(w *ChildWrites) { w.Updates++; w.Changed = append(w.Changed, changed) })
		return deleteWithUID(ctx, client, observed)
	default: // InPlace, RollingInPlace
		c.countChild(parent, func(w *ChildWrites) { w.Updates++; w.Changed = append(w.Changed, changed) })
		_, err := client.Update(ctx, updated, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
}

// countChild records a child write for parent's stats.
func (c *ContractController) countChild(parent *unstructured.Unstructured, count func(*ChildWrites)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := parent.GetNamespace() + "/" + parent.GetName()
	if c.stats[key] == nil {
		c.stats[key] = &ParentStats{}
	}
	count(&c.stats[key].Children)
}

func deleteWithUID(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	uid := obj.GetUID()
	background := metav1.DeletePropagationBackground
	err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &background,
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("can't delete %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// updateStatus replaces .status with the hook's status plus observedGeneration, unless that is
// what is already there. Strict field validation makes a field the CRD does not declare an error.
//
// Like Metacontroller's AtomicStatusUpdate (pkg/dynamic/clientset), the status is compared with
// and written over a fresh read of the same object (same UID), not the cached parent the hook
// was given, and conflicts are retried; the status is the one the hook answered, with the
// generation the sync saw. So, as with Metacontroller, a sync that started from a stale cached
// parent writes its answer over a newer status, and a status write is never lost to a
// concurrent change of the parent (a label, a spec edit, the finalizer).
func (c *ContractController) updateStatus(ctx context.Context, parent *unstructured.Unstructured, status map[string]any) error {
	if status == nil {
		status = map[string]any{}
	}
	status["observedGeneration"] = parent.GetGeneration()
	normalized, err := normalizeJSON(status)
	if err != nil {
		return fmt.Errorf("status is not JSON: %w", err)
	}
	client := c.parentClient(parent.GetNamespace())
	var stale *StaleWrite
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		current, err := client.Get(ctx, parent.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if current.GetUID() != parent.GetUID() {
			return apierrors.NewNotFound(c.parent.gvr.GroupResource(), parent.GetName())
		}
		if equality.Semantic.DeepEqual(current.Object["status"], normalized) {
			return errStatusUnchanged
		}
		stale = nil
		if current.GetResourceVersion() != parent.GetResourceVersion() && !equality.Semantic.DeepEqual(current.Object["status"], parent.Object["status"]) {
			stale = staleWrite(parent, current, normalized)
		}
		current.Object["status"] = normalized
		_, err = client.UpdateStatus(ctx, current, metav1.UpdateOptions{FieldValidation: "Strict"})
		return err
	})
	if errors.Is(err, errStatusUnchanged) {
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	key := parent.GetNamespace() + "/" + parent.GetName()
	if c.stats[key] == nil {
		c.stats[key] = &ParentStats{}
	}
	c.stats[key].StatusWrites++
	if stale != nil {
		c.stats[key].StaleWrites = append(c.stats[key].StaleWrites, *stale)
	}
	c.mu.Unlock()
	return nil
}

// staleWrite describes writing status over current when the sync read parent.
func staleWrite(parent, current *unstructured.Unstructured, status map[string]any) *StaleWrite {
	over, _ := current.Object["status"].(map[string]any)
	w := &StaleWrite{ReadVersion: parent.GetResourceVersion(), OverVersion: current.GetResourceVersion(), Over: over, Written: status}
	keys := map[string]bool{}
	for k := range over {
		keys[k] = true
	}
	for k := range status {
		keys[k] = true
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !equality.Semantic.DeepEqual(over[k], status[k]) {
			w.Fields = append(w.Fields, k)
			if diff, ok := conditionsDiff(over[k], status[k]); ok {
				parts = append(parts, k+" "+diff)
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s -> %s", k, truncate(CompactJSON(over[k]), 300), truncate(CompactJSON(status[k]), 300)))
		}
	}
	w.Description = fmt.Sprintf("status computed from resourceVersion %s written over resourceVersion %s: %s",
		w.ReadVersion, w.OverVersion, strings.Join(parts, "; "))
	return w
}

// conditionsDiff describes the change of a list of conditions (objects with a type) by type:
// added, removed, or changed status, reason or lastTransitionTime. ok is false for other values.
func conditionsDiff(before, after any) (diff string, ok bool) {
	byType := func(v any) (map[string]map[string]any, []string, bool) {
		list, isList := v.([]any)
		if v != nil && !isList {
			return nil, nil, false
		}
		out := map[string]map[string]any{}
		var order []string
		for _, item := range list {
			m, isMap := item.(map[string]any)
			typ, hasType := m["type"].(string)
			if !isMap || !hasType {
				return nil, nil, false
			}
			out[typ] = m
			order = append(order, typ)
		}
		return out, order, true
	}
	b, bOrder, okB := byType(before)
	a, aOrder, okA := byType(after)
	if !okB || !okA {
		return "", false
	}
	brief := func(m map[string]any) string {
		return fmt.Sprintf("%v/%v at %v", m["status"], m["reason"], m["lastTransitionTime"])
	}
	var parts []string
	for _, typ := range bOrder {
		if _, kept := a[typ]; !kept {
			parts = append(parts, fmt.Sprintf("-%s (%s)", typ, brief(b[typ])))
		}
	}
	for _, typ := range aOrder {
		old, existed := b[typ]
		switch {
		case !existed:
			parts = append(parts, fmt.Sprintf("+%s (%s)", typ, brief(a[typ])))
		case !equality.Semantic.DeepEqual(old, a[typ]):
			parts = append(parts, fmt.Sprintf("%s %s -> %s", typ, brief(old), brief(a[typ])))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]", true
}

// CompactJSON renders v for a failure message: one line of JSON, "<none>" for nil.
func CompactJSON(v any) string {
	if v == nil {
		return "<none>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// normalizeJSON round-trips v through JSON so it compares like an object read from the API
// (int64 and float64 numbers, no typed values).
func normalizeJSON(v map[string]any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := utiljson.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

var errStatusUnchanged = errors.New("status unchanged")

func sortedNames(m map[string]*unstructured.Unstructured) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func removeString(list []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(item string) bool { return item == s })
}

func removeOwner(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	return slices.DeleteFunc(slices.Clone(refs), func(ref metav1.OwnerReference) bool { return ref.UID == uid })
}
