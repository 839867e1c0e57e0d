package sparkapp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// The world plays Kueue as its documented Workload status describes it (kueue.x-k8s.io/v1beta2):
// QuotaReserved and Admitted conditions with status.admission on admission, Evicted on
// preemption, the quota held until the Workload is deleted (Kueue frees an evicted Workload's
// quota only when a job integration unsets the reservation, and sparkhooks has none).

const queuedSparkPi = `
metadata:
  name: spark-pi
  namespace: spark-jobs
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  type: Scala
  mode: cluster
  image: apache/spark:3.5.3
  sparkVersion: 3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  arguments: ["1000"]
  driver:
    cores: 1
    memory: 512m
    serviceAccount: spark
    priorityClassName: batch-high
  executor:
    cores: 1
    instances: 2
    memory: 512m
`

var (
	spotFlavor = map[string]any{
		"apiVersion": kueue.APIVersion, "kind": kueue.KindResourceFlavor,
		"metadata": map[string]any{"name": "spot"},
		"spec": map[string]any{
			"nodeLabels":  map[string]any{"cloud.example.com/capacity": "spot"},
			"tolerations": []any{map[string]any{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}},
		},
	}
	batchHigh = map[string]any{
		"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
		"metadata": map[string]any{"name": "batch-high"}, "value": 1000,
	}
)

// enableKueue declares the Workload child, as the registration does where the operator enables
// Kueue, and adds the related ResourceFlavors and PriorityClasses the customize hook asks for.
func (w *world) enableKueue() {
	w.children[keyWorkload] = map[string]map[string]any{}
	w.related = map[string]map[string]map[string]any{
		keyResourceFlavor: {"spot": spotFlavor},
		keyPriorityClass:  {"batch-high": batchHigh},
	}
}

func (w *world) workloadObj() map[string]any {
	for _, obj := range w.children[keyWorkload] {
		return obj
	}
	return nil
}

func (w *world) setWorkloadStatus(st map[string]any) {
	w.t.Helper()
	wl := w.workloadObj()
	require.NotNil(w.t, wl, "no Workload")
	wl["status"] = st
}

func kueueCondition(typ, status, reason, msg string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": at.Format(time.RFC3339)}
}

// kueuePending is a Workload Kueue could not fit yet.
func (w *world) kueuePending() {
	w.setWorkloadStatus(map[string]any{"conditions": []any{
		kueueCondition(kueue.CondQuotaReserved, "False", "Pending",
			"couldn't assign flavors to pod set executor: insufficient unused quota for cpu in flavor spot, 2 more needed", w.now),
	}})
}

// kueueAdmit admits the Workload on the spot flavor, with an admission check's pod-set update
// for the executors, as Kueue's scheduler and the admission-check controller write it.
func (w *world) kueueAdmit() {
	counts := map[string]int32{}
	for _, ps := range w.workloadObj()["spec"].(map[string]any)["podSets"].([]any) {
		ps := ps.(map[string]any)
		counts[ps["name"].(string)] = int32(ps["count"].(float64))
	}
	assignment := func(name string) map[string]any {
		return map[string]any{"name": name, "flavors": map[string]any{"cpu": "spot", "memory": "spot"}, "count": counts[name]}
	}
	w.setWorkloadStatus(map[string]any{
		"conditions": []any{
			kueueCondition(kueue.CondQuotaReserved, "True", "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue", w.now),
			kueueCondition(kueue.CondAdmitted, "True", "Admitted", "The workload is admitted", w.now),
		},
		"admission": map[string]any{"clusterQueue": "cluster-queue", "podSetAssignments": []any{assignment("driver"), assignment("executor")}},
		"admissionChecks": []any{map[string]any{
			"name": "zone-check", "state": "Ready", "message": "", "lastTransitionTime": w.now.Format(time.RFC3339),
			"podSetUpdates": []any{map[string]any{"name": "executor", "labels": map[string]any{"zone-check": "passed"}}},
		}},
	})
}

// kueueEvict preempts the admitted Workload: Kueue sets Evicted and keeps the reservation.
func (w *world) kueueEvict() {
	st := w.workloadObj()["status"].(map[string]any)
	st["conditions"] = append(st["conditions"].([]any),
		kueueCondition(kueue.CondEvicted, "True", "Preempted", "Preempted to accommodate a workload (UID: 42) due to prioritization in the ClusterQueue", w.now),
		kueueCondition("Preempted", "True", "InClusterQueue", "Preempted to accommodate a workload (UID: 42) due to prioritization in the ClusterQueue", w.now))
}

func TestScenarioKueueQueuedAdmittedEvictedReadmittedFinished(t *testing.T) {
	w := newWorld(t, withRestart(queuedSparkPi, "    type: OnFailure\n    onFailureRetries: 1\n"))
	w.enableKueue()
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state(), "queued")
	assert.False(t, w.hasDriver(), "no driver before admission")
	assert.Equal(t, []string{"Workload.kueue.x-k8s.io/v1beta2/sparkapplication-spark-pi"}, w.created)
	wl := w.workloadObj()
	spec := wl["spec"].(map[string]any)
	assert.Equal(t, "team-a", spec["queueName"])
	assert.EqualValues(t, 1000, spec["priority"])
	podSets := spec["podSets"].([]any)
	require.Len(t, podSets, 2)
	exec := podSets[1].(map[string]any)
	assert.EqualValues(t, 2, exec["count"])
	res := exec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)
	assert.Equal(t, map[string]any{"cpu": "1", "memory": "896Mi"}, res["requests"], "512m heap + 384 MiB overhead")

	w.kueuePending()
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
	q := condition(w, condQueued)
	require.NotNil(t, q)
	assert.Equal(t, metav1.ConditionTrue, q.Status)
	assert.Contains(t, q.Message, "insufficient unused quota", "Kueue's own message reaches the status")

	w.advance(time.Minute)
	w.kueueAdmit()
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, metav1.ConditionFalse, condition(w, condQueued).Status)
	pod := w.driverPod()
	podSpec := pod["spec"].(map[string]any)
	assert.Equal(t, map[string]any{"cloud.example.com/capacity": "spot"}, podSpec["nodeSelector"], "the flavor's node labels")
	assert.Contains(t, string(coretest.MustJSON(t, podSpec["tolerations"])), `"key":"spot"`, "the flavor's tolerations")
	assert.Contains(t, string(coretest.MustJSON(t, w.children[keyConfigMap])), `zone-check`, "the admission check's executor labels reach the executor template")
	firstAttempt := w.app.Status.SubmissionID
	w.driverRunning(true)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, w.state())
	assert.Empty(t, w.drifted, "the Workload and the attempt's children are answered as created")

	w.advance(time.Minute)
	w.kueueEvict()
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateSuspending, w.state(), "eviction ends the attempt")
	assert.False(t, w.hasDriver(), "the driver is released (its executors go with it)")
	assert.Equal(t, int32(0), w.app.Status.ExecutionAttempts, "an eviction is not a failed run")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state(), "queued again")
	assert.Contains(t, w.deleted, "Workload.kueue.x-k8s.io/v1beta2/sparkapplication-spark-pi", "the spent Workload is deleted to free its quota")
	require.NotNil(t, w.workloadObj(), "a fresh Workload is queued")
	assert.Nil(t, w.workloadObj()["status"])

	w.advance(time.Minute)
	w.kueueAdmit()
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state(), "re-admitted, resubmitted")
	assert.NotEqual(t, firstAttempt, w.app.Status.SubmissionID)
	assert.Equal(t, int32(1), w.app.Status.ExecutionAttempts)

	w.driverRunning(true)
	w.settle()
	w.advance(time.Minute)
	w.driverExited(0, "Completed")
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateCompleted, w.state())
	assert.NotNil(t, w.workloadObj(), "the deciding sync keeps the Workload (a stale read must not see it gone)")
	w.settle()
	assert.Nil(t, w.workloadObj(), "completion releases the Workload, freeing its quota at once")
	assert.True(t, w.hasDriver(), "the finished driver is kept for its logs")
	assert.Empty(t, w.drifted, "no child, the Workloads included, is ever answered differently from its creation")
}

func TestScenarioKueueWorkloadDeletedByHand(t *testing.T) {
	w := newWorld(t, queuedSparkPi)
	w.enableKueue()
	w.settle()
	delete(w.children[keyWorkload], "sparkapplication-spark-pi")
	w.settle()
	assert.NotNil(t, w.workloadObj(), "recreated while queued")
	assert.False(t, w.hasDriver())

	w.kueueAdmit()
	w.settle()
	w.driverRunning(true)
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateRunning, w.state())
	delete(w.children[keyWorkload], "sparkapplication-spark-pi")
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateSuspending, w.state(), "no admission, no driver")
	assert.Equal(t, "WorkloadDeleted", condition(w, condQueued).Reason)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
	assert.NotNil(t, w.workloadObj(), "queued again with a new Workload")
	assert.False(t, w.hasDriver())
}

func TestScenarioKueueNotEnabledIgnoresTheLabel(t *testing.T) {
	w := newWorld(t, queuedSparkPi)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state(), "without the Workload child the label is Kueue's own integration's business")
}

// A stale read after the eviction's status write: the parent still RUNNING, the Workload
// evicted or already gone. The answer is the same decision, so it cannot undo the eviction.
func TestScenarioKueueEvictionUnderStaleRead(t *testing.T) {
	w := newWorld(t, queuedSparkPi)
	w.enableKueue()
	w.settle()
	w.kueueAdmit()
	w.settle()
	w.driverRunning(true)
	w.settle()
	stale := w.app.DeepCopy()
	w.kueueEvict()
	require.NoError(t, w.sync())
	require.Equal(t, v1beta2.ApplicationStateSuspending, w.state())
	fresh := w.app
	w.app = stale
	resp, _, err := Sync(w.request(false), w.now.Add(time.Second), w.cfg)
	w.app = fresh
	require.NoError(t, err)
	st := resp.Status.(*v1beta2.SparkApplicationStatus)
	// The driver is already gone, so the stale read goes straight to SUSPENDED: still evicted,
	// still not counted, nothing submitted.
	assert.Equal(t, v1beta2.ApplicationStateSuspended, st.AppState.State)
	assert.Equal(t, int32(0), st.ExecutionAttempts)
	for _, c := range resp.Children {
		assert.NotEqual(t, "Pod", mustObj(t, c)["kind"], "no driver without admission")
	}
}

func TestScenarioKueueDynamicAllocationPartialAdmission(t *testing.T) {
	w := newWorld(t, queuedSparkPi+"  dynamicAllocation:\n    enabled: true\n    minExecutors: 2\n    maxExecutors: 10\n")
	w.enableKueue()
	w.settle()
	exec := w.workloadObj()["spec"].(map[string]any)["podSets"].([]any)[1].(map[string]any)
	assert.EqualValues(t, 10, exec["count"])
	assert.EqualValues(t, 2, exec["minCount"])
	w.kueueAdmit()
	adm := w.workloadObj()["status"].(map[string]any)["admission"].(map[string]any)
	adm["podSetAssignments"].([]any)[1].(map[string]any)["count"] = 4
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Contains(t, string(coretest.MustJSON(t, w.children[keyConfigMap])), `spark.dynamicAllocation.maxExecutors=4`, "Spark never asks for more executors than Kueue admitted")
}

func TestScenarioKueueBadInput(t *testing.T) {
	t.Run("dynamic allocation without maxExecutors", func(t *testing.T) {
		w := newWorld(t, queuedSparkPi+"  dynamicAllocation:\n    enabled: true\n")
		w.enableKueue()
		w.settle()
		assert.Equal(t, v1beta2.ApplicationStateFailedSubmission, w.state())
		assert.Contains(t, w.app.Status.AppState.ErrorMessage, "spec.dynamicAllocation.maxExecutors")
		assert.Empty(t, w.created, "no Workload, no driver")
	})
	t.Run("Spark 2 has no executor pod templates", func(t *testing.T) {
		w := newWorld(t, strings.ReplaceAll(queuedSparkPi, "3.5.3", "2.4.8"))
		w.enableKueue()
		w.settle()
		assert.Equal(t, v1beta2.ApplicationStateFailedSubmission, w.state())
		assert.Contains(t, w.app.Status.AppState.ErrorMessage, "Spark 3.0 or later")
	})
	t.Run("queue label that names no LocalQueue, then fixed", func(t *testing.T) {
		w := newWorld(t, strings.Replace(queuedSparkPi, "queue-name: team-a", "queue-name: Team_A", 1))
		w.enableKueue()
		w.settle()
		assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
		assert.Equal(t, "InvalidQueueName", condition(w, condQueued).Reason)
		assert.Empty(t, w.created)
		w.app.Labels[kueue.QueueNameLabel] = "team-a"
		w.settle()
		assert.NotNil(t, w.workloadObj(), "the fixed label is seen at once")
	})
	t.Run("PriorityClass that does not exist, then created", func(t *testing.T) {
		w := newWorld(t, queuedSparkPi)
		w.enableKueue()
		delete(w.related[keyPriorityClass], "batch-high")
		w.settle()
		assert.Equal(t, "PriorityClassNotFound", condition(w, condQueued).Reason)
		assert.Empty(t, w.created)
		w.related[keyPriorityClass]["batch-high"] = batchHigh
		w.settle()
		assert.NotNil(t, w.workloadObj())
	})
	t.Run("admitted on a flavor the request does not carry yet", func(t *testing.T) {
		w := newWorld(t, queuedSparkPi)
		w.enableKueue()
		w.settle()
		w.kueueAdmit()
		delete(w.related[keyResourceFlavor], "spot")
		w.settle()
		assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
		assert.Equal(t, "PlacementUnknown", condition(w, condQueued).Reason)
		assert.False(t, w.hasDriver(), "never placed without the flavor's node labels")
		w.related[keyResourceFlavor]["spot"] = spotFlavor
		w.settle()
		assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	})
}

func TestCustomizeAsksForFlavorsWhenQueued(t *testing.T) {
	controller := json.RawMessage(`{"spec":{"childResources":[{"apiVersion":"v1","resource":"pods"},{"apiVersion":"kueue.x-k8s.io/v1beta2","resource":"workloads"}]}}`)
	w := newWorld(t, queuedSparkPi)
	parent := coretest.MustJSON(t, w.app)
	resp, err := Customize(&metacontroller.CustomizeRequest{Controller: controller, Parent: parent})
	require.NoError(t, err)
	require.Len(t, resp.RelatedResources, 5, "the executors, Kueue's two kinds, the Namespace and the ServiceAccounts (not the PriorityClasses twice)")
	assert.Equal(t, "resourceflavors", resp.RelatedResources[1].Resource)
	assert.Equal(t, "priorityclasses", resp.RelatedResources[2].Resource)

	resp, err = Customize(&metacontroller.CustomizeRequest{Parent: parent})
	require.NoError(t, err)
	for _, r := range resp.RelatedResources {
		assert.NotEqual(t, "resourceflavors", r.Resource, "Kueue not enabled: no Kueue kinds asked for (the cluster may not serve them)")
	}
}

// TestRecordKueueGoldens writes the request of each Kueue state, taken from the scenario's
// world, under testdata/sync/kueue-*; TestGolden answers them. It runs with -update only, and
// the written requests are reviewed like any golden.
func TestRecordKueueGoldens(t *testing.T) {
	if !*update {
		t.Skip("records golden requests with -update")
	}
	record := func(w *world, name string) {
		dir := filepath.Join("..", "..", "testdata", "sync", name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		body, err := json.MarshalIndent(w.request(false), "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "request.json"), append(body, '\n'), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "now.txt"), []byte(w.now.Format(time.RFC3339)+"\n"), 0o644))
	}
	w := newWorld(t, queuedSparkPi)
	w.enableKueue()
	record(w, "kueue-new")
	w.settle()
	w.kueuePending()
	record(w, "kueue-queued")
	w.advance(time.Minute)
	w.kueueAdmit()
	record(w, "kueue-admitted")
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.advance(time.Minute)
	w.kueueEvict()
	record(w, "kueue-evicted")
	require.NoError(t, w.sync())
	record(w, "kueue-evicted-released") // the driver is gone: queued again, and a sync asked for at once
	w.settle()
	record(w, "kueue-requeued")
	w.advance(time.Minute)
	w.kueueAdmit()
	record(w, "kueue-readmitted")
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.advance(time.Minute)
	w.driverExited(0, "Completed")
	w.settle()
	record(w, "kueue-finished") // the completed application whose Workload is gone
	w2 := newWorld(t, queuedSparkPi)
	w2.enableKueue()
	w2.settle()
	w2.kueuePending()
	wl := w2.workloadObj()
	wl["status"] = map[string]any{"conditions": []any{kueueCondition(kueue.CondQuotaReserved, "False", "Inadmissible",
		"LocalQueue team-a doesn't exist", w2.now)}}
	record(w2, "kueue-missing-localqueue")
	w3 := newWorld(t, queuedSparkPi)
	w3.enableKueue()
	w3.settle()
	w3.kueueAdmit()
	w3.settle()
	w3.driverRunning(true)
	w3.settle()
	w3.driverExited(0, "Completed")
	record(w3, "kueue-completing")
}

func mustObj(t testing.TB, v any) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, v), &m))
	return m
}

// BenchmarkSyncQueued is the sync of a queued application: waiting for admission (the Workload
// answered as recorded), and running under an admission (placement applied on every sync).
func BenchmarkSyncQueued(b *testing.B) {
	w := newWorld(b, queuedSparkPi)
	w.enableKueue()
	w.settle()
	w.kueuePending()
	waiting := coretest.MustJSON(b, w.request(false))
	w.kueueAdmit()
	w.settle()
	w.driverRunning(true)
	w.settle()
	running := coretest.MustJSON(b, w.request(false))
	for _, bench := range []struct {
		name string
		body []byte
	}{{"waiting", waiting}, {"running", running}} {
		b.Run(bench.name, func(b *testing.B) {
			b.SetBytes(int64(len(bench.body)))
			b.ReportAllocs()
			for b.Loop() {
				syncBody(b, bench.body, w.now, w.cfg)
			}
		})
	}
}
