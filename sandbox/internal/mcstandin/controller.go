package mcstandin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Controller is a local stand-in for Metacontroller, not Metacontroller, for the
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
type Controller struct {
	cc      *CompositeController
	ccJSON  json.RawMessage
	opts    Options
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

// Options tune a Controller.
type Options struct {
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

// New prepares a controller for cc. Like Metacontroller it refuses a parent or
// child resource the API server does not serve.
func New(cfg *restclient.Config, cc *CompositeController, opts Options) (*Controller, error) {
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
	c := &Controller{
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

func (c *Controller) resolve(rule ResourceRule) (resourceInfo, error) {
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
func (c *Controller) Run(ctx context.Context) error {
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
func (c *Controller) Stats(namespace, name string) ParentStats {
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
