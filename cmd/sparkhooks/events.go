package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/eventrec"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

// eventsOptions are serve's settings for recording Kubernetes Events.
type eventsOptions struct {
	enabled    bool
	kubeconfig string
	qps        int
	burst      int
}

// eventsController is the reportingController of every Event sparkhooks records.
const eventsController = "sparkhooks"

// eventsQueueLength is how many answered syncs may wait for their Events: a few seconds of a
// busy server's syncs, of which most tell none. Each holds the request's parent until then.
const eventsQueueLength = 1024

func addEventsFlags(f *envDefault, o *eventsOptions) {
	f.boolean(&o.enabled, "events", "SPARKHOOKS_EVENTS", true,
		"record a Kubernetes Event (events.k8s.io/v1) for every transition the sync hooks decide, after answering; needs create and patch on events (false: none)")
	f.string(&o.kubeconfig, "kubeconfig", "SPARKHOOKS_KUBECONFIG", "",
		"kubeconfig file for recording Events (empty: the in-cluster configuration; outside a cluster without one, no Events)")
	f.integer(&o.qps, "events-qps", "SPARKHOOKS_EVENTS_QPS", 20, "Events recorded per second at most; more wait in a bounded queue, and are dropped when it is full")
	f.integer(&o.burst, "events-burst", "SPARKHOOKS_EVENTS_BURST", 100, "Events recorded in a burst above --events-qps")
}

func (o eventsOptions) validate() error {
	if o.qps <= 0 || o.burst <= 0 {
		return fmt.Errorf("--events-qps and --events-burst must be > 0, got %d and %d", o.qps, o.burst)
	}
	return nil
}

// startEvents starts recording Events until ctx ends; stop flushes what the broadcaster holds.
// It returns no recorder when Events are off, or when serve runs outside a cluster with no
// --kubeconfig (a local run): the hooks answer the same either way.
func startEvents(ctx context.Context, o eventsOptions, m *metrics.Metrics, logger *slog.Logger) (rec hooks.EventRecorder, stop func(), err error) {
	stop = func() {}
	if !o.enabled {
		return nil, stop, nil
	}
	cfg, err := restConfig(o.kubeconfig)
	if err != nil && o.kubeconfig == "" {
		// Outside a cluster, or in one without a service account token mounted: serve as before.
		logger.Warn("no Kubernetes Events: no in-cluster configuration and no --kubeconfig", slog.String("error", err.Error()))
		return nil, stop, nil
	}
	if err != nil {
		return nil, stop, fmt.Errorf("events: %w", err)
	}
	// The client's own limit sits above the recorder's, which is the one that holds Events
	// back; the broadcaster also refreshes and finishes series on its own.
	cfg.QPS, cfg.Burst = float32(2*o.qps), 2*o.burst
	cfg.UserAgent = "sparkhooks/" + version
	client, err := eventsv1client.NewForConfig(cfg)
	if err != nil {
		return nil, stop, fmt.Errorf("events client: %w", err)
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, stop, fmt.Errorf("start recording events: %w", err)
	}
	r := eventrec.New(broadcaster.NewRecorder(runtime.NewScheme(), eventsController), eventrec.Options{
		QueueLength: eventsQueueLength,
		Limiter:     flowcontrol.NewTokenBucketRateLimiter(float32(o.qps), max(o.burst, 1)),
		Recorded:    m.EventsRecorded,
		Dropped:     m.EventsDropped,
		Logger:      logger,
	})
	go r.Run(ctx)
	host, _ := os.Hostname()
	logger.Info("recording Kubernetes Events", slog.String("host", cfg.Host), slog.String("instance", eventsController+"-"+host))
	return r, broadcaster.Shutdown, nil
}
