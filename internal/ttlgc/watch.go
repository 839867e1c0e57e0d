package ttlgc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// WatchOptions are Options and how often a watch looks again at what it holds.
type WatchOptions struct {
	Options
	// Resync hands every held application to the check again at this period, so that a
	// deletion that failed is tried again.
	Resync time.Duration
	// Discover is how often a kind the API server does not serve yet (Apache's SparkApplication,
	// whose CRD the admin may apply later) is looked for again.
	Discover time.Duration
	// RequestTimeout bounds each deletion and each look for a CRD; zero: none.
	RequestTimeout time.Duration
}

// Watch deletes each SparkApplication as soon as the sync hook marks it Expired, until ctx ends:
// the time to live is honoured within seconds, where a pass on a schedule is late by up to its
// period. It lists and watches each kind in each namespace, holding of every application only
// what Expired reads (its identity and conditions), and deletes as Run does. It returns nil when
// ctx ends, and an error when it cannot list what it is to watch at its start (the API server
// unreachable, no permission), for whoever runs it to start it again.
func Watch(ctx context.Context, client dynamic.Interface, opts WatchOptions, logger *slog.Logger) error {
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	type start struct {
		w      *watcher
		served bool
	}
	var starts []start
	for _, res := range resources {
		for _, ns := range namespaces {
			w := &watcher{p: &pass{apps: client.Resource(res), resource: res, opts: opts.Options, logger: logger}, ns: ns, timeout: opts.RequestTimeout}
			rctx, cancel := w.requestContext(ctx)
			served, err := isServed(rctx, client, res, ns)
			cancel()
			if err != nil {
				return err
			}
			starts = append(starts, start{w: w, served: served})
		}
	}
	var wg sync.WaitGroup
	for _, s := range starts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !s.served && !s.w.awaitServed(ctx, client, opts.Discover) {
				return
			}
			s.w.run(ctx, client, opts.Resync)
		}()
	}
	wg.Wait()
	return nil
}

// isServed is whether the API server serves res: Apache's kind is opt-in (its CRD).
func isServed(ctx context.Context, client dynamic.Interface, res schema.GroupVersionResource, ns string) (bool, error) {
	_, err := client.Resource(res).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err) && res == ApacheResource:
		return false, nil
	default:
		return false, fmt.Errorf("list %s: %w", res.GroupResource(), err)
	}
}

// watcher deletes the expired applications of one kind in one namespace.
type watcher struct {
	p       *pass
	ns      string
	timeout time.Duration
	mu      sync.Mutex // the handlers of one informer run one at a time; this keeps p.result whole
}

// requestContext bounds one request by the watcher's timeout.
func (w *watcher) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if w.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, w.timeout)
}

// awaitServed looks for the kind every period until it is served (true) or ctx ends (false).
func (w *watcher) awaitServed(ctx context.Context, client dynamic.Interface, period time.Duration) bool {
	w.p.logger.Info("not served: watching for its CRD", slog.String("resource", w.p.resource.GroupResource().String()))
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
		rctx, cancel := w.requestContext(ctx)
		served, err := isServed(rctx, client, w.p.resource, w.ns)
		cancel()
		if served {
			return true
		} else if err != nil {
			w.p.logger.Warn("looking for the CRD", slog.String("resource", w.p.resource.GroupResource().String()), slog.String("error", err.Error()))
		}
	}
}

func (w *watcher) run(ctx context.Context, client dynamic.Interface, resync time.Duration) {
	informer := dynamicinformer.NewFilteredDynamicInformer(client, w.p.resource, w.ns, resync, cache.Indexers{}, nil).Informer()
	if err := informer.SetTransform(strip); err != nil {
		w.p.logger.Error("informer", slog.String("error", err.Error()))
		return
	}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.consider(ctx, obj) },
		UpdateFunc: func(_, obj any) { w.consider(ctx, obj) },
	})
	if err != nil {
		w.p.logger.Error("informer", slog.String("error", err.Error()))
		return
	}
	w.p.logger.Info("watching for expired SparkApplications", slog.String("resource", w.p.resource.GroupResource().String()), slog.String("namespace", w.ns))
	informer.Run(ctx.Done())
}

// consider deletes obj if it expired.
func (w *watcher) consider(ctx context.Context, obj any) {
	app, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	t, ok := expired(app)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.p.result.Expired++
	rctx, cancel := w.requestContext(ctx)
	defer cancel()
	if err := w.p.delete(rctx, t); err != nil {
		// The next resync hands it over again.
		w.p.logger.Warn("deleting an expired SparkApplication", slog.String("error", err.Error()))
	}
}

// strip keeps of an application what expired reads: a watch over many large applications
// (Spark properties, pod templates, executor states) holds little.
func strip(obj any) (any, error) {
	app, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // a deletion's tombstone
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(app.GetAPIVersion())
	out.SetKind(app.GetKind())
	out.SetNamespace(app.GetNamespace())
	out.SetName(app.GetName())
	out.SetUID(app.GetUID())
	out.SetResourceVersion(app.GetResourceVersion())
	out.SetGeneration(app.GetGeneration())
	out.SetDeletionTimestamp(app.GetDeletionTimestamp())
	if conds, found, _ := unstructured.NestedFieldNoCopy(app.Object, "status", "conditions"); found {
		out.Object["status"] = map[string]any{"conditions": conds}
	}
	return out, nil
}
