package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparkhooks/sparkhooks/internal/hook"
)

// KubeflowOptions select the Kubeflow operator's metrics (v2.5's --metrics-prefix,
// --metrics-labels, --metrics-job-submit-latency-buckets, --metrics-job-start-latency-buckets).
type KubeflowOptions struct {
	Prefix               string
	Labels               []string
	SubmitLatencyBuckets []float64
	StartLatencyBuckets  []float64
}

// DefaultKubeflowOptions are Kubeflow's chart defaults: the label app_type and its buckets.
func DefaultKubeflowOptions() KubeflowOptions {
	return KubeflowOptions{
		Labels:               []string{"app_type"},
		SubmitLatencyBuckets: []float64{0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256},
		StartLatencyBuckets:  []float64{30, 60, 90, 120, 150, 180, 210, 240, 270, 300},
	}
}

// Kubeflow holds the counters and summaries the Kubeflow Spark Operator exports, with its names,
// label scheme and types, counted from the sync hook's decisions. The two running gauges are not
// here: a stateless hook replica cannot know how many applications run, so they come from
// kube-state-metrics (docs/observability.md).
type Kubeflow struct {
	labels []string

	appCount, submitCount, failedSubmissionCount, successCount, failureCount *prometheus.CounterVec

	successExecutionTime, failureExecutionTime *prometheus.SummaryVec
	submitLatency, startLatency                *prometheus.SummaryVec
	submitLatencyHistogram, startLatencyHist   *prometheus.HistogramVec

	executorSuccessCount, executorFailureCount *prometheus.CounterVec
}

// metricName is Kubeflow's util.CreateValidMetricNameLabel: "-" is not allowed in a name.
func metricName(prefix, name string) string {
	return strings.ReplaceAll(prefix+name, "-", "_")
}

// NewKubeflow creates the collectors and registers them on reg.
func NewKubeflow(reg prometheus.Registerer, o KubeflowOptions) (*Kubeflow, error) {
	labels := make([]string, len(o.Labels))
	for i, l := range o.Labels {
		labels[i] = metricName("", l)
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricName(o.Prefix, name), Help: help}, labels)
	}
	summary := func(name, help string) *prometheus.SummaryVec {
		return prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: metricName(o.Prefix, name), Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricName(o.Prefix, name), Help: help, Buckets: buckets}, labels)
	}
	k := &Kubeflow{
		labels:                 labels,
		appCount:               counter("spark_application_count", "SparkApplications decided for the first time (counted per hook replica; a stale sync can count one twice)."),
		submitCount:            counter("spark_application_submit_count", "SparkApplication attempts submitted."),
		failedSubmissionCount:  counter("spark_application_failed_submission_count", "SparkApplication submissions that failed."),
		successCount:           counter("spark_application_success_count", "SparkApplications that completed."),
		failureCount:           counter("spark_application_failure_count", "SparkApplications that failed."),
		successExecutionTime:   summary("spark_application_success_execution_time_seconds", "Seconds from the last submission to the termination of completed SparkApplications."),
		failureExecutionTime:   summary("spark_application_failure_execution_time_seconds", "Seconds from the last submission to the termination of failed SparkApplications."),
		submitLatency:          summary("spark_application_submit_latency_seconds", "Seconds from creation to the first submission."),
		submitLatencyHistogram: histogram("spark_application_submit_latency_seconds_histogram", "Seconds from creation to the first submission.", o.SubmitLatencyBuckets),
		startLatency:           summary("spark_application_start_latency_seconds", "Seconds from creation to the first running driver."),
		startLatencyHist:       histogram("spark_application_start_latency_seconds_histogram", "Seconds from creation to the first running driver.", o.StartLatencyBuckets),
		executorSuccessCount:   counter("spark_executor_success_count", "Spark executors that completed."),
		executorFailureCount:   counter("spark_executor_failure_count", "Spark executors that failed."),
	}
	for _, c := range []prometheus.Collector{
		k.appCount, k.submitCount, k.failedSubmissionCount, k.successCount, k.failureCount,
		k.successExecutionTime, k.failureExecutionTime, k.submitLatency, k.submitLatencyHistogram,
		k.startLatency, k.startLatencyHist, k.executorSuccessCount, k.executorFailureCount,
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Record counts one decision.
func (k *Kubeflow) Record(a hook.Application) {
	for _, e := range a.Executors {
		l := k.labelValues(a.Namespace, e.Labels)
		if e.Failed {
			k.executorFailureCount.With(l).Inc()
		} else {
			k.executorSuccessCount.With(l).Inc()
		}
	}
	if a.From == a.To {
		return
	}
	l := k.labelValues(a.Namespace, a.Labels)
	if a.From == "" {
		k.appCount.With(l).Inc()
	}
	switch a.To {
	case "SUBMITTED":
		k.submitCount.With(l).Inc()
		if a.SubmissionAttempts == 1 {
			k.submitLatency.With(l).Observe(a.SinceCreation.Seconds())
			k.submitLatencyHistogram.With(l).Observe(a.SinceCreation.Seconds())
		}
	case "SUBMISSION_FAILED":
		k.failedSubmissionCount.With(l).Inc()
	case "RUNNING":
		if a.ExecutionAttempts == 1 {
			k.startLatency.With(l).Observe(a.SinceCreation.Seconds())
			k.startLatencyHist.With(l).Observe(a.SinceCreation.Seconds())
		}
	case "COMPLETED":
		k.successCount.With(l).Inc()
		if a.Execution > 0 {
			k.successExecutionTime.With(l).Observe(a.Execution.Seconds())
		}
	case "FAILED":
		k.failureCount.With(l).Inc()
		if a.Execution > 0 {
			k.failureExecutionTime.With(l).Observe(a.Execution.Seconds())
		}
	}
}

// labelValues are Kubeflow's getMetricLabels: each configured label takes the value of the
// object's label whose key, "-" made "_", equals its name; else the namespace for "namespace",
// else "Unknown".
func (k *Kubeflow) labelValues(namespace string, objLabels map[string]string) prometheus.Labels {
	out := make(prometheus.Labels, len(k.labels))
	for _, name := range k.labels {
		out[name] = "Unknown"
		if name == "namespace" {
			out[name] = namespace
		}
	}
	for key, v := range objLabels {
		if name := metricName("", key); hasKey(out, name) {
			out[name] = v
		}
	}
	return out
}

func hasKey(l prometheus.Labels, name string) bool {
	_, ok := l[name]
	return ok
}
