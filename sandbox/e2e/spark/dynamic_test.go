//go:build e2e

package spark

import (
	"strings"
	"testing"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestDynamicAllocation runs examples/spark-pi-dynamic-allocation.yaml: Spark starts with the
// initial executors and, while SparkPi's tasks queue up longer than the backlog timeout, asks
// the API server for more itself, within maxExecutors. Smaller than the example, so that the
// applications beside it keep room on the one node and it ends within appTimeout on two shared
// cores: executors of 512m, at most 4, and 1000 tasks instead of 20000. SparkPi's tasks are
// CPU-bound, so how long they queue depends on the load beside them (from about 10 s alone to
// two minutes among the real node's parallel tests); a backlog timeout of 1 s instead of 5 s
// has Spark ask for the most executors 2 s into the stage, well before the quickest end.
func TestDynamicAllocation(t *testing.T) {
	parallelOnRealNode(t)
	const app, initial, most = "spark-pi-dynamic-allocation", 2, 4
	n := newNamespace(t, "dynamic")
	executors := newExecutorRecorder(n, app)
	n.applyEditedExample(app+".yaml", func(spec map[string]any) {
		spec["arguments"] = []any{"1000"}
		spec["sparkConf"].(map[string]any)["spark.dynamicAllocation.schedulerBacklogTimeout"] = "1s"
		spec["executor"].(map[string]any)["memory"] = "512m"
		spec["dynamicAllocation"].(map[string]any)["maxExecutors"] = int64(most)
	})
	done := n.waitCompleted(app, appTimeout, executors.observe)

	driver := harness.NestedString(done, "status", "driverInfo", "podName")
	log := n.logs(driver, "")
	if !strings.Contains(log, "Pi is roughly 3.1") {
		t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driver, harness.Tail(log, 30))
	}
	checkNoErrors(t, driver, log)
	// Every executor the driver asked for, running or not yet, as the status named them.
	executors.mu.Lock()
	asked := len(executors.states)
	executors.mu.Unlock()
	if asked <= initial || asked > most {
		t.Errorf("status.executorState named %d executors, want more than the %d initial ones (Spark asks for more while tasks wait) and at most %d", asked, initial, most)
	}
}
