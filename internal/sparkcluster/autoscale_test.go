package sparkcluster

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// answeredWorkerReplicas syncs and returns the replicas of the worker StatefulSet answered,
// nil when none is.
func answeredWorkerReplicas(t *testing.T, w *world) any {
	t.Helper()
	resp, _, err := Sync(w.request(false), w.now)
	require.NoError(t, err)
	for _, child := range resp.Children {
		var obj map[string]any
		require.NoError(t, json.Unmarshal(coretest.MustJSON(t, child), &obj))
		if obj["kind"] == "StatefulSet" && obj["metadata"].(map[string]any)["name"] == w.c.Name+"-worker" {
			return obj["spec"].(map[string]any)["replicas"]
		}
	}
	t.Fatal("no worker StatefulSet answered")
	return nil
}

// scale sets the observed worker count, as the autoscaler or kubectl scale would.
func (w *world) scale(n int) {
	sts := w.children[keyStatefulSet][w.c.Name+"-worker"]
	require.NotNil(w.t, sts)
	sts["spec"].(map[string]any)["replicas"] = n
}

// An autoscaled pool starts at initWorkers; the autoscaler's count then survives every sync,
// and only an edit of initWorkers (the user's intent) replaces it.
func TestAutoscaledWorkersStartAtInitWorkersThenFollowTheAutoscaler(t *testing.T) {
	w := newWorld(t, autoscaledYAML)
	w.edit(func(s *sparkv1.ClusterSpec) { s.ClusterTolerations.InstanceConfig.InitWorkers = 3 })
	assert.EqualValues(t, 3, answeredWorkerReplicas(t, w), "a new pool is made at initWorkers")
	w.settle()

	w.scale(5)
	for range 3 {
		assert.EqualValues(t, 5, answeredWorkerReplicas(t, w), "the autoscaler's count is kept")
		require.NoError(t, w.sync())
	}
	w.edit(func(s *sparkv1.ClusterSpec) { s.SparkConf["spark.worker.cleanup.enabled"] = "true" })
	assert.EqualValues(t, 5, answeredWorkerReplicas(t, w), "an edit of something else keeps the count")

	w.edit(func(s *sparkv1.ClusterSpec) { s.ClusterTolerations.InstanceConfig.InitWorkers = 2 })
	assert.EqualValues(t, 2, answeredWorkerReplicas(t, w), "an edit of initWorkers is applied")
}

// A pool made by a version that answered no count (the autoscaler's alone) keeps its count.
func TestAutoscaledWorkersWithoutRecordKeepTheirCount(t *testing.T) {
	w := newWorld(t, autoscaledYAML)
	w.settle()
	sts := w.children[keyStatefulSet][w.c.Name+"-worker"]
	md := sts["metadata"].(map[string]any)
	delete(md, "annotations")
	w.scale(4)
	assert.EqualValues(t, 4, answeredWorkerReplicas(t, w), "adopted: no record at all")
	delete(sts["spec"].(map[string]any), "replicas")
	md["annotations"] = map[string]any{metacontroller.LastAppliedAnnotation: string(coretest.MustJSON(t, sts))}
	sts["spec"].(map[string]any)["replicas"] = 4
	assert.EqualValues(t, 4, answeredWorkerReplicas(t, w))
}

// A fixed pool that becomes autoscaled takes the initWorkers of the same edit.
func TestFixedWorkersBecomingAutoscaledTakeInitWorkers(t *testing.T) {
	w := newWorld(t, clusterYAML)
	w.settle()
	w.edit(func(s *sparkv1.ClusterSpec) {
		s.ClusterTolerations.InstanceConfig = sparkv1.WorkerInstanceConfig{InitWorkers: 5, MinWorkers: 3, MaxWorkers: 8}
	})
	assert.EqualValues(t, 5, answeredWorkerReplicas(t, w))
	require.NoError(t, w.sync())
	w.scale(7)
	assert.EqualValues(t, 7, answeredWorkerReplicas(t, w))
}

// Without an autoscaler the count is initWorkers, whatever runs.
func TestFixedWorkersFollowInitWorkers(t *testing.T) {
	w := newWorld(t, clusterYAML)
	w.settle()
	w.scale(7)
	assert.EqualValues(t, 3, answeredWorkerReplicas(t, w))
}
