package sparkconnect

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// The world plays Kueue by its documented Workload status (kueue.x-k8s.io/v1beta2), as in
// package sparkapp's tests.

const queuedConnectYAML = `
apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata:
  name: spark-connect
  labels:
    kueue.x-k8s.io/queue-name: notebooks
spec:
  sparkVersion: 4.0.1
  image: apache/spark:4.0.1
  server:
    cores: 1
    memory: 512m
    template:
      spec:
        serviceAccountName: spark
  executor:
    instances: 2
    cores: 1
    memory: 512m
`

var workloadName = "sparkconnect-spark-connect"

func (w *world) enableKueue() {
	w.children[kueue.KeyWorkload] = map[string]map[string]any{}
	w.related = map[string]map[string]map[string]any{kueue.KeyResourceFlavor: {"on-demand": {
		"apiVersion": kueue.APIVersion, "kind": kueue.KindResourceFlavor, "metadata": map[string]any{"name": "on-demand"},
		"spec": map[string]any{"nodeLabels": map[string]any{"pool": "on-demand"}},
	}}}
}

func (w *world) workload() map[string]any { return w.children[kueue.KeyWorkload][workloadName] }

func cond(typ, status, reason, msg string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": at.Format(time.RFC3339)}
}

func (w *world) kueuePending() {
	w.workload()["status"] = map[string]any{"conditions": []any{
		cond(kueue.CondQuotaReserved, "False", "Pending", "couldn't assign flavors to pod set executor: insufficient unused quota for cpu in flavor on-demand, 1 more needed", w.now)}}
}

func (w *world) kueueAdmit() {
	var assignments []any
	for _, ps := range w.workload()["spec"].(map[string]any)["podSets"].([]any) {
		ps := ps.(map[string]any)
		assignments = append(assignments, map[string]any{"name": ps["name"], "flavors": map[string]any{"cpu": "on-demand", "memory": "on-demand"}, "count": ps["count"]})
	}
	w.workload()["status"] = map[string]any{
		"conditions": []any{
			cond(kueue.CondQuotaReserved, "True", "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue", w.now),
			cond(kueue.CondAdmitted, "True", "Admitted", "The workload is admitted", w.now),
		},
		"admission": map[string]any{"clusterQueue": "cluster-queue", "podSetAssignments": assignments},
	}
}

func (w *world) kueueEvict() {
	st := w.workload()["status"].(map[string]any)
	st["conditions"] = append(st["conditions"].([]any),
		cond(kueue.CondEvicted, "True", "Preempted", "Preempted to accommodate a workload (UID: 7) due to prioritization in the ClusterQueue", w.now))
}

func queuedCond(w *world) (status, reason string) {
	c := meta.FindStatusCondition(w.sc.Status.Conditions, condQueued)
	if c == nil {
		return "", ""
	}
	return string(c.Status), c.Reason
}

func TestKueueQueuedAdmittedEvictedReadmitted(t *testing.T) {
	w := newWorld(t, queuedConnectYAML)
	w.enableKueue()
	w.settle()
	assert.Equal(t, v1alpha1.StateProvisioning, w.sc.Status.State)
	assert.Empty(t, w.children[keyPod], "no server before admission")
	require.NotNil(t, w.workload())
	podSets := w.workload()["spec"].(map[string]any)["podSets"].([]any)
	require.Len(t, podSets, 2)
	assert.EqualValues(t, 2, podSets[1].(map[string]any)["count"])

	w.kueuePending()
	w.settle()
	status, reason := queuedCond(w)
	assert.Equal(t, "True", status)
	assert.Equal(t, "Pending", reason)
	assert.Contains(t, meta.FindStatusCondition(w.sc.Status.Conditions, condQueued).Message, "insufficient unused quota")

	w.advance(time.Minute)
	w.kueueAdmit()
	w.settle()
	pod := w.serverPod()
	assert.Equal(t, map[string]any{"pool": "on-demand"}, pod["spec"].(map[string]any)["nodeSelector"], "the flavor's node labels")
	w.serverRunning(true)
	w.settle()
	assert.Equal(t, v1alpha1.StateReady, w.sc.Status.State)
	status, reason = queuedCond(w)
	assert.Equal(t, "False", status)
	assert.Equal(t, reasonAdmitted, reason)

	w.advance(time.Minute)
	w.kueueEvict()
	require.NoError(t, w.sync())
	assert.Equal(t, v1alpha1.StateNotReady, w.sc.Status.State)
	assert.Empty(t, w.children[keyPod], "the evicted server goes, its executors with it")
	w.settle()
	assert.Nil(t, w.workload()["status"], "the spent Workload was replaced by a fresh one")
	status, _ = queuedCond(w)
	assert.Equal(t, "True", status)

	w.kueueAdmit()
	w.settle()
	w.serverRunning(true)
	w.settle()
	assert.Equal(t, v1alpha1.StateReady, w.sc.Status.State)
}

func TestKueueWorkloadDeletedUnderARunningServer(t *testing.T) {
	w := newWorld(t, queuedConnectYAML)
	w.enableKueue()
	w.settle()
	w.kueueAdmit()
	w.settle()
	w.serverRunning(true)
	w.settle()
	delete(w.children[kueue.KeyWorkload], workloadName)
	require.NoError(t, w.sync())
	assert.Empty(t, w.children[keyPod], "no admission, no server")
	_, reason := queuedCond(w)
	assert.Equal(t, "WorkloadDeleted", reason)
	w.settle()
	assert.NotNil(t, w.workload(), "queued again")
}

func TestKueueCustomize(t *testing.T) {
	controller := json.RawMessage(`{"spec":{"childResources":[{"apiVersion":"kueue.x-k8s.io/v1beta2","resource":"workloads"}]}}`)
	w := newWorld(t, queuedConnectYAML)
	resp, err := Customize(&metacontroller.CustomizeRequest{Controller: controller, Parent: coretest.MustJSON(t, w.sc)})
	require.NoError(t, err)
	assert.Len(t, resp.RelatedResources, 3)
}
