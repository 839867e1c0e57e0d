//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, 100 on every Linux
// architecture the suite runs on.
const userHZ = 100

// TestBigApplicationCost runs one SparkApplication whose driver starts
// SPARKHOOKS_E2E_EXECUTORS executor Pods, one after another as a Spark driver asks for them,
// lets them run, ends them and its driver as Spark does, and reports what the application cost
// over its life: syncs of the sync hook, CPU seconds of the hook server and of the controller
// processes, and wall time. It is a measurement (docs/benchmarks.md), so it runs only when the
// variable is set.
func TestBigApplicationCost(t *testing.T) {
	v := os.Getenv("SPARKHOOKS_E2E_EXECUTORS")
	if v == "" {
		t.Skip("SPARKHOOKS_E2E_EXECUTORS is not set: the measurement of one big application runs on demand")
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "SPARKHOOKS_E2E_EXECUTORS")
	require.Positive(t, n, "SPARKHOOKS_E2E_EXECUTORS")
	if !shared.metacontroller {
		// The stand-in runs inside this test binary: its CPU is not a process of its own.
		t.Skip("the measurement is of the real Metacontroller: SPARKHOOKS_E2E_CONTROLLER=metacontroller")
	}
	hookPID := onePID(t, "/sparkhooks")
	controllerPID := onePID(t, "/usr/bin/metacontroller")

	w := newJobWorld(t, hooksURL, appController)
	ctx := context.Background()
	hookBefore, controllerBefore := cpuSeconds(t, hookPID), cpuSeconds(t, controllerPID)
	syncsBefore, decideBefore := syncCounts(t)
	started := time.Now()

	out, err := w.apply(fmt.Sprintf(`
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: big
spec:
  type: Scala
  mode: cluster
  image: apache/spark:3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  sparkVersion: 3.5.3
  restartPolicy: {type: Never}
  driver: {cores: 1, coreRequest: 10m, memory: 64m, serviceAccount: spark}
  executor: {instances: %d, cores: 1, coreRequest: 10m, memory: 64m}
`, n))
	require.NoError(t, err, out)
	_, driver := w.runAttempt(t, "big", "")
	execs, err := w.kubelet.AddExecutors(ctx, driver.Name, n)
	require.NoError(t, err)
	w.check(t, w.waitApp("big", fmt.Sprintf("%d executors RUNNING", n), func(app *unstructured.Unstructured) bool {
		return countExecutors(app, "RUNNING") == n
	}))
	executorsUp := time.Since(started)

	// At its end the driver deletes its executors (spark.kubernetes.executor.deleteOnTermination)
	// and exits 0.
	for _, name := range execs {
		require.NoError(t, w.core.CoreV1().Pods(w.ns).Delete(ctx, name, metav1.DeleteOptions{}))
	}
	executorPods := func(ctx context.Context) (int, error) {
		pods, err := w.core.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{LabelSelector: labelSparkRole + "=executor"})
		if err != nil {
			return 0, err
		}
		return len(pods.Items), nil
	}
	_, err = harness.WaitFor(ctx, 5*time.Minute, "the executors gone", executorPods, func(n int) bool { return n == 0 },
		func(n int) string { return fmt.Sprintf("%d executor Pods", n) })
	require.NoError(t, err)
	require.NoError(t, w.kubelet.Succeed(ctx, driver.Name))
	w.check(t, w.waitState("big", "COMPLETED"))
	elapsed := time.Since(started)

	syncsAfter, decideAfter := syncCounts(t)
	hookCPU := cpuSeconds(t, hookPID) - hookBefore
	controllerCPU := cpuSeconds(t, controllerPID) - controllerBefore
	t.Logf("one application with %d executors to COMPLETED under Metacontroller in %s (executors running after %s): "+
		"%.0f syncs of the sync hook, %.2f s deciding in them; CPU: hook server %.2f s, Metacontroller %.2f s, together %.2f s",
		n, elapsed.Round(100*time.Millisecond), executorsUp.Round(100*time.Millisecond),
		syncsAfter-syncsBefore, decideAfter-decideBefore, hookCPU, controllerCPU, hookCPU+controllerCPU)
}

// countExecutors is how many executors status.executorState has in state.
func countExecutors(app *unstructured.Unstructured, state string) int {
	executors, _, _ := unstructured.NestedMap(app.Object, "status", "executorState")
	count := 0
	for _, s := range executors {
		if s == state {
			count++
		}
	}
	return count
}

// syncCounts reads from the hook server's metrics how many SparkApplication syncs it answered
// and how many seconds it spent deciding in them.
func syncCounts(t *testing.T) (syncs, deciding float64) {
	t.Helper()
	families := scrapeHookServer(t)
	for _, m := range families["sparkhooks_http_request_duration_seconds"].GetMetric() {
		if strings.HasSuffix(labelValue(m, "route"), "/sparkapplication/sync") {
			syncs += float64(m.GetHistogram().GetSampleCount())
		}
	}
	for _, m := range families["sparkhooks_hook_duration_seconds"].GetMetric() {
		if labelValue(m, "hook") == "sparkapplication_sync" {
			deciding += m.GetHistogram().GetSampleSum()
		}
	}
	return syncs, deciding
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// onePID is the process whose command line starts with argv0, the entrypoint of a chart's image
// on the process kubelet; there must be exactly one.
func onePID(t *testing.T, argv0 string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		if first, _, _ := strings.Cut(string(cmdline), "\x00"); first == argv0 {
			found = append(found, pid)
		}
	}
	require.Len(t, found, 1, "processes started as %s", argv0)
	return found[0]
}

// cpuSeconds is the user and system CPU time process pid has used, from /proc/<pid>/stat.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err, "process %d (it must live through the measurement)", pid)
	// The command name in parentheses may hold spaces: the fields after it start at the state
	// (field 3), so utime (14) and stime (15) are the 12th and 13th.
	end := strings.LastIndex(string(stat), ") ")
	require.Positive(t, end, "/proc/%d/stat: %q", pid, stat)
	fields := strings.Fields(string(stat)[end+2:])
	require.Greater(t, len(fields), 12, "/proc/%d/stat: %q", pid, stat)
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	require.NoError(t, err)
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	require.NoError(t, err)
	return float64(utime+stime) / userHZ
}
