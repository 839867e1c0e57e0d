package sparkapp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// safetyCases are the requests in which a careless answer would delete a live driver: edited
// labels, an erased state, a finalizing flag on a parent that is not being deleted, null
// children. Each golden shows the hook either keeping the driver or refusing.
func safetyCases() []goldenCase {
	driverLabels := func(w *world) map[string]any {
		return w.driverPod()["metadata"].(map[string]any)["labels"].(map[string]any)
	}
	return []goldenCase{
		{name: "running-driver-role-label-removed", setup: then(running(sparkPi, 2), func(w *world) {
			delete(driverLabels(w), sparkpod.LabelSparkRole)
		})},
		{name: "running-driver-role-label-executor", setup: then(running(sparkPi, 2), func(w *world) {
			driverLabels(w)[sparkpod.LabelSparkRole] = sparkpod.RoleExecutor
			// The customize hook's executor selector now matches the driver too.
			w.execs["spark-pi-driver"] = w.driverPod()
		})},
		{name: "foreign-running-driver-no-role-label", setup: then(running(sparkPi, 2), func(w *world) {
			labels := driverLabels(w)
			labels[sparkpod.LabelSubmissionID] = "someone-else"
			delete(labels, sparkpod.LabelSparkRole)
		})},
		{name: "running-driver-submission-label-removed", setup: then(running(sparkPi, 2), func(w *world) {
			delete(driverLabels(w), sparkpod.LabelSubmissionID)
		})},
		{name: "invalid-edit-while-running-state-erased", setup: then(running(sparkPi, 2), func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Executor.Memory = ptr("lots") })
			w.app.Status.AppState.State = ""
		})},
		{name: "running-state-erased", setup: then(running(sparkPi, 2), func(w *world) {
			w.app.Status.AppState.State = ""
		})},
		{name: "invalidating-driver-still-live", setup: then(running(sparkPi, 2), func(w *world) {
			driverPod := w.driverPod()
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"20000"} })
			require.NoError(w.t, w.sync())
			require.Equal(w.t, v1beta2.ApplicationStateInvalidating, w.state())
			// Metacontroller wrote the status, but the deletion of the old driver failed.
			w.children[keyPod]["spark-pi-driver"] = driverPod
			w.advance(time.Second)
		})},
		{name: "running-driver-pdb", setup: func(t *testing.T) *world {
			w := newWorld(t, sparkPi+"  driverPodDisruptionBudget: true\n")
			w.children[keyPDB] = map[string]map[string]any{}
			w.settle()
			w.advance(4 * time.Second)
			w.driverRunning(true)
			w.settle()
			return w
		}},
		// The CRD keeps pod templates without a schema, so a stored spec may not decode.
		{name: "running-spec-does-not-decode", setup: then(running(sparkPi, 2), func(w *world) { w.specEdit = driverContainersString })},
		{name: "running-null-observed-child", setup: then(running(sparkPi, 2), func(w *world) {
			w.children[keyConfigMap]["ghost"] = nil
			w.execs["ghost-exec"] = nil
		})},
	}
}

// driverContainersString gives the driver template a containers field of the wrong JSON type.
func driverContainersString(spec map[string]any) {
	spec["driver"].(map[string]any)["template"] = map[string]any{"spec": map[string]any{"containers": "spark"}}
}
