// Package metrics defines the Prometheus collectors sparkhooks exports. Collectors live on a
// registry owned by the caller, so tests and several servers in one process never share state.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics is the set of sparkhooks collectors, registered on one registry.
type Metrics struct {
	Registry *prometheus.Registry

	HTTPRequestDuration *prometheus.HistogramVec
	HookDuration        *prometheus.HistogramVec
	HookRefusals        *prometheus.CounterVec
	SyncTransitions     *prometheus.CounterVec
	Submissions         *prometheus.CounterVec
	Restarts            *prometheus.CounterVec
	Mutations           *prometheus.CounterVec
	AdmissionDenials    *prometheus.CounterVec
	ValidationFailures  *prometheus.CounterVec
	ValidationRefusals  *prometheus.CounterVec
	InflightBytes       prometheus.Gauge
	InflightRejections  *prometheus.CounterVec
	EventsRecorded      *prometheus.CounterVec
	EventsDropped       *prometheus.CounterVec
	// Kubeflow is nil unless EnableKubeflow turned the Kubeflow operator's metrics on.
	Kubeflow *Kubeflow
}

// EnableKubeflow adds the Kubeflow operator's metrics to the registry.
func (m *Metrics) EnableKubeflow(o KubeflowOptions) error {
	k, err := NewKubeflow(m.Registry, o)
	if err != nil {
		return err
	}
	m.Kubeflow = k
	return nil
}

// hookBuckets start well below a millisecond: the hooks' own share of a sync is meant to be
// tens of microseconds, and the default buckets (from 5 ms) would hide every regression.
var hookBuckets = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}

// New creates the collectors on a fresh registry together with the Go runtime and process
// collectors.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		HTTPRequestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sparkhooks_http_request_duration_seconds",
			Help:    "Duration of HTTP requests by route pattern and status code.",
			Buckets: hookBuckets,
		}, []string{"route", "code"}),
		HookDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sparkhooks_hook_duration_seconds",
			Help:    "Time spent deciding inside a hook (decode to encode), by hook and result (ok, bad_request, refused, error).",
			Buckets: hookBuckets,
		}, []string{"hook", "result"}),
		HookRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_hook_refusals_total",
			Help: "Requests a hook refused to decide (HTTP 409) because the observed children contradict the status, by hook and reason.",
		}, []string{"hook", "reason"}),
		SyncTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_sync_transitions_total",
			Help: "State transitions decided by sync hooks, by parent kind and from/to state.",
		}, []string{"kind", "from", "to"}),
		Submissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_submissions_total",
			Help: "New submissions (a new driver, or a new scheduled run) decided, by kind.",
		}, []string{"kind"}),
		Restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_restarts_total",
			Help: "Application restarts decided, by reason.",
		}, []string{"reason"}),
		Mutations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_mutations_total",
			Help: "Pod mutations applied by the admission webhook, by kind of mutation.",
		}, []string{"kind"}),
		AdmissionDenials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_admission_denials_total",
			Help: "Pods refused by the admission webhook, by policy rule.",
		}, []string{"rule"}),
		ValidationFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_validation_failures_total",
			Help: "Parents whose spec failed validation, by kind.",
		}, []string{"kind"}),
		ValidationRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_validation_refusals_total",
			Help: "Objects the validating admission webhook refused, by kind and reason (invalid: the spec failed validation; bad_request: the request could not be validated).",
		}, []string{"kind", "reason"}),
		InflightBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sparkhooks_inflight_bytes",
			Help: "Request-body bytes reserved by requests being read or decided, out of the --max-inflight-bytes budget.",
		}),
		InflightRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_inflight_rejections_total",
			Help: "Requests answered 503 because the in-flight body budget stayed full for --inflight-wait, by route pattern.",
		}, []string{"route"}),
		EventsRecorded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_events_total",
			Help: "Kubernetes Events handed to the events recorder, by type and reason (the recorder folds repeats into series and retries failed writes).",
		}, []string{"type", "reason"}),
		EventsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkhooks_events_dropped_total",
			Help: "Answered syncs whose Events were dropped because the queue of Events to record was full, by hook.",
		}, []string{"hook"}),
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.HTTPRequestDuration, m.HookDuration, m.HookRefusals, m.SyncTransitions, m.Submissions,
		m.Restarts, m.Mutations, m.AdmissionDenials, m.ValidationFailures, m.ValidationRefusals, m.InflightBytes,
		m.InflightRejections, m.EventsRecorded, m.EventsDropped,
	)
	return m
}
