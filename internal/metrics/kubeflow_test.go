package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/hook"
)

// TestKubeflowLifecycle counts a SparkPi's decisions, one sync per transition, and reads back
// what Kubeflow's operator would export for it: its names, label scheme and types.
func TestKubeflowLifecycle(t *testing.T) {
	reg := prometheus.NewRegistry()
	k, err := NewKubeflow(reg, KubeflowOptions{
		Labels:               []string{"app-type", "namespace", "team"},
		SubmitLatencyBuckets: []float64{1, 10},
		StartLatencyBuckets:  []float64{30, 60},
	})
	require.NoError(t, err)
	labels := map[string]string{"app-type": "batch", "other": "x"}
	for _, a := range []hook.Application{
		{From: "", To: "SUBMITTED", SubmissionAttempts: 1, ExecutionAttempts: 1, SinceCreation: 2 * time.Second},
		{From: "SUBMITTED", To: "SUBMITTED"}, // a resync decides nothing new
		{From: "SUBMITTED", To: "RUNNING", SubmissionAttempts: 1, ExecutionAttempts: 1, SinceCreation: 40 * time.Second},
		{From: "RUNNING", To: "RUNNING", Executors: []hook.Executor{{Labels: map[string]string{"team": "data"}}, {Failed: true}}},
		{From: "RUNNING", To: "COMPLETED", SubmissionAttempts: 1, ExecutionAttempts: 1, Execution: 90 * time.Second},
	} {
		a.Namespace, a.Labels = "etl", labels
		k.Record(a)
	}
	want := `
# HELP spark_application_count SparkApplications decided for the first time (counted per hook replica; a stale sync can count one twice).
# TYPE spark_application_count counter
spark_application_count{app_type="batch",namespace="etl",team="Unknown"} 1
# HELP spark_application_submit_count SparkApplication attempts submitted.
# TYPE spark_application_submit_count counter
spark_application_submit_count{app_type="batch",namespace="etl",team="Unknown"} 1
# HELP spark_application_success_count SparkApplications that completed.
# TYPE spark_application_success_count counter
spark_application_success_count{app_type="batch",namespace="etl",team="Unknown"} 1
# HELP spark_application_success_execution_time_seconds Seconds from the last submission to the termination of completed SparkApplications.
# TYPE spark_application_success_execution_time_seconds summary
spark_application_success_execution_time_seconds_sum{app_type="batch",namespace="etl",team="Unknown"} 90
spark_application_success_execution_time_seconds_count{app_type="batch",namespace="etl",team="Unknown"} 1
# HELP spark_application_start_latency_seconds_histogram Seconds from creation to the first running driver.
# TYPE spark_application_start_latency_seconds_histogram histogram
spark_application_start_latency_seconds_histogram_bucket{app_type="batch",namespace="etl",team="Unknown",le="30"} 0
spark_application_start_latency_seconds_histogram_bucket{app_type="batch",namespace="etl",team="Unknown",le="60"} 1
spark_application_start_latency_seconds_histogram_bucket{app_type="batch",namespace="etl",team="Unknown",le="+Inf"} 1
spark_application_start_latency_seconds_histogram_sum{app_type="batch",namespace="etl",team="Unknown"} 40
spark_application_start_latency_seconds_histogram_count{app_type="batch",namespace="etl",team="Unknown"} 1
# HELP spark_executor_success_count Spark executors that completed.
# TYPE spark_executor_success_count counter
spark_executor_success_count{app_type="Unknown",namespace="etl",team="data"} 1
# HELP spark_executor_failure_count Spark executors that failed.
# TYPE spark_executor_failure_count counter
spark_executor_failure_count{app_type="Unknown",namespace="etl",team="Unknown"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"spark_application_count", "spark_application_submit_count", "spark_application_success_count",
		"spark_application_success_execution_time_seconds", "spark_application_start_latency_seconds_histogram",
		"spark_executor_success_count", "spark_executor_failure_count"))
	require.Equal(t, 0, testutil.CollectAndCount(k.failureCount), "nothing failed")
	require.Equal(t, 1, testutil.CollectAndCount(k.submitLatency), "the first submission's latency")
}

func TestKubeflowPrefix(t *testing.T) {
	reg := prometheus.NewRegistry()
	k, err := NewKubeflow(reg, KubeflowOptions{Prefix: "my-org_", Labels: []string{"app_type"}})
	require.NoError(t, err)
	k.Record(hook.Application{From: "SUBMITTED", To: "SUBMISSION_FAILED"})
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP my_org_spark_application_failed_submission_count SparkApplication submissions that failed.
# TYPE my_org_spark_application_failed_submission_count counter
my_org_spark_application_failed_submission_count{app_type="Unknown"} 1
`), "my_org_spark_application_failed_submission_count"))
}
