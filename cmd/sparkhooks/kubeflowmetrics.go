package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

// kubeflowMetricsOptions are the flags of the Kubeflow operator's metrics, named as its own.
type kubeflowMetricsOptions struct {
	enabled                     bool
	options                     metrics.KubeflowOptions
	submitBuckets, startBuckets []string
}

// Prometheus' names: a label name, and a metric name (which may also hold colons).
var (
	labelNamePattern  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	metricNamePattern = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
)

func addKubeflowMetricsFlags(f *envDefault, o *kubeflowMetricsOptions) {
	o.options = metrics.DefaultKubeflowOptions()
	f.boolean(&o.enabled, "kubeflow-metrics", "SPARKHOOKS_KUBEFLOW_METRICS", false,
		"also export the Kubeflow Spark Operator's spark_application_* and spark_executor_* counters and summaries, counted from the sync hook's decisions")
	f.string(&o.options.Prefix, "metrics-prefix", "SPARKHOOKS_METRICS_PREFIX", "",
		"prefix of the Kubeflow metrics' names (Kubeflow's --metrics-prefix)")
	f.list(&o.options.Labels, "metrics-labels", "SPARKHOOKS_METRICS_LABELS",
		"comma-separated labels of the Kubeflow metrics, each valued from the application's (or executor Pod's) label of that name, '-' read as '_' (Kubeflow's --metrics-labels; empty: app_type)")
	f.list(&o.submitBuckets, "metrics-job-submit-latency-buckets", "SPARKHOOKS_METRICS_JOB_SUBMIT_LATENCY_BUCKETS",
		"comma-separated buckets in seconds of spark_application_submit_latency_seconds_histogram (empty: 0.5,1,2,4,8,16,32,64,128,256)")
	f.list(&o.startBuckets, "metrics-job-start-latency-buckets", "SPARKHOOKS_METRICS_JOB_START_LATENCY_BUCKETS",
		"comma-separated buckets in seconds of spark_application_start_latency_seconds_histogram (empty: 30,60,...,300)")
}

// resolve checks the flags and fills in the defaults of those left empty.
func (o *kubeflowMetricsOptions) resolve() error {
	def := metrics.DefaultKubeflowOptions()
	if len(o.options.Labels) == 0 {
		o.options.Labels = def.Labels
	}
	for _, l := range o.options.Labels {
		if name := strings.ReplaceAll(l, "-", "_"); !labelNamePattern.MatchString(name) {
			return fmt.Errorf("--metrics-labels: %q is not a Prometheus label name", l)
		}
	}
	if name := strings.ReplaceAll(o.options.Prefix+"spark_application_count", "-", "_"); !metricNamePattern.MatchString(name) {
		return fmt.Errorf("--metrics-prefix: %q does not make Prometheus metric names", o.options.Prefix)
	}
	var err error
	if o.options.SubmitLatencyBuckets, err = buckets("--metrics-job-submit-latency-buckets", o.submitBuckets, def.SubmitLatencyBuckets); err != nil {
		return err
	}
	if o.options.StartLatencyBuckets, err = buckets("--metrics-job-start-latency-buckets", o.startBuckets, def.StartLatencyBuckets); err != nil {
		return err
	}
	return nil
}

func buckets(flag string, given []string, def []float64) ([]float64, error) {
	if len(given) == 0 {
		return def, nil
	}
	out := make([]float64, len(given))
	for i, s := range given {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", flag, s)
		}
		out[i] = v
	}
	if !slices.IsSorted(out) {
		return nil, fmt.Errorf("%s: buckets must increase, got %v", flag, given)
	}
	return out, nil
}
