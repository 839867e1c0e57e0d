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

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// MultiKueue as Kueue v0.19's generic adapter for custom kinds plays it
// (pkg/controller/admissionchecks/multikueue): the manager's Workload, admitted with the
// MultiKueue admission check Ready, is copied to the worker (labels, annotations and spec), the
// application too (spec.managedBy removed, kueue.x-k8s.io/prebuilt-workload-name annotated),
// and the worker's status is copied back whole.

var managedSparkPi = strings.Replace(queuedSparkPi, "spec:\n", "spec:\n  managedBy: kueue.x-k8s.io/multikueue\n", 1)

// multiKueue is a manager world and the worker world MultiKueue dispatches its application to.
type multiKueue struct {
	t       *testing.T
	manager *world
	worker  *world
}

func newMultiKueue(t *testing.T) *multiKueue {
	m := &multiKueue{t: t, manager: newWorld(t, managedSparkPi)}
	m.manager.enableKueue()
	return m
}

// dispatch admits the manager's Workload and creates the worker's copies, as MultiKueue does
// once the worker's Kueue admitted its copy of the Workload.
func (m *multiKueue) dispatch() {
	m.t.Helper()
	m.manager.kueueAdmit()
	wl := m.manager.workloadObj()
	require.NotNil(m.t, wl, "the manager has a Workload to dispatch")
	copied := map[string]any{}
	require.NoError(m.t, json.Unmarshal(coretest.MustJSON(m.t, wl), &copied))
	md := copied["metadata"].(map[string]any)
	delete(md, "ownerReferences")
	delete(md, "uid")

	app := m.manager.app.DeepCopy()
	app.Spec.ManagedBy = nil
	app.Status = v1beta2.SparkApplicationStatus{}
	app.UID = "6a1c7d2e-0000-4000-8000-0000000000ff"
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[kueue.PrebuiltWorkloadKey] = md["name"].(string)
	m.worker = &world{t: m.t, cfg: m.manager.cfg, now: m.manager.now, app: app,
		children: map[string]map[string]map[string]any{keyPod: {}, keyConfigMap: {}, keyService: {}, keyIngress: {}, keyWorkload: {}},
		execs:    map[string]map[string]any{},
		related: coretest.Objects{keyResourceFlavor: {"spot": spotFlavor}, keyPriorityClass: {"batch-high": batchHigh},
			keyWorkload: {md["name"].(string): copied}},
	}
}

// mirror copies the worker's status to the manager's application, as MultiKueue's SyncJob does.
func (m *multiKueue) mirror() {
	m.t.Helper()
	require.NoError(m.t, json.Unmarshal(coretest.MustJSON(m.t, m.worker.app.Status), &m.manager.app.Status))
	m.manager.app.Status.ObservedGeneration = m.manager.app.Generation
}

func TestScenarioMultiKueueDispatchedRunsOnTheWorker(t *testing.T) {
	m := newMultiKueue(t)
	mgr := m.manager
	mgr.settle()
	assert.Equal(t, []string{"Workload.kueue.x-k8s.io/v1beta2/sparkapplication-spark-pi"}, mgr.created, "the manager creates the Workload, nothing else")
	assert.Equal(t, v1beta2.ApplicationStateType(""), mgr.state(), "the status is MultiKueue's to copy")

	m.dispatch()
	mgr.settle()
	assert.Empty(t, mgr.deleted, "the admitted Workload is kept")

	wk := m.worker
	wk.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, wk.state(), "the worker's copy runs under the Workload MultiKueue made")
	assert.Empty(t, wk.children[keyWorkload], "and creates none of its own")
	podSpec := wk.driverPod()["spec"].(map[string]any)
	assert.Equal(t, map[string]any{"cloud.example.com/capacity": "spot"}, podSpec["nodeSelector"], "the worker's admission places the driver")
	wk.driverRunning(true)
	wk.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, wk.state())

	m.mirror()
	mgr.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, mgr.state(), "the manager shows the worker's status, unchanged by its hook")
	assert.NotNil(t, mgr.workloadObj(), "the Workload stays while the worker runs")

	wk.advance(time.Minute)
	wk.driverExited(0, "Completed")
	wk.settle()
	assert.Equal(t, v1beta2.ApplicationStateCompleted, wk.state())
	assert.Empty(t, wk.deleted, "the worker never deletes MultiKueue's Workload: MultiKueue removes it with the copy")
	m.mirror()
	mgr.settle()
	assert.Equal(t, v1beta2.ApplicationStateCompleted, mgr.state())
	assert.Nil(t, mgr.workloadObj(), "the final status releases the Workload, and MultiKueue the worker's copy with it")
	assert.Empty(t, mgr.drifted)
}

func TestScenarioMultiKueueFinalStatus(t *testing.T) {
	for _, tc := range []struct {
		name     string
		state    v1beta2.ApplicationStateType
		hash     string
		released bool
	}{
		{"completed", v1beta2.ApplicationStateCompleted, "", true},
		{"failed", v1beta2.ApplicationStateFailed, "", true},
		{"running", v1beta2.ApplicationStateRunning, "", false},
		{"completed for another spec", v1beta2.ApplicationStateCompleted, "0000000000000000", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMultiKueue(t)
			m.manager.settle()
			m.dispatch()
			// As a worker whose operator writes no spec hash (Kubeflow's) copies it, or the
			// status of a spec edited since, whose Workload (for the new spec) stays.
			m.manager.app.Status.AppState.State = tc.state
			m.manager.app.Status.SubmittedSpecHash = tc.hash
			require.NoError(t, m.manager.sync())
			assert.Equal(t, tc.released, m.manager.workloadObj() == nil, "Workload released")
		})
	}
}

func TestScenarioMultiKueueSpentWorkloads(t *testing.T) {
	m := newMultiKueue(t)
	m.manager.settle()
	m.dispatch()
	m.worker.settle()
	m.worker.driverRunning(true)
	m.worker.settle()

	// Evicted on the worker: the copy's attempt stops and waits; MultiKueue replaces or removes it.
	wl := m.worker.related[keyWorkload]["sparkapplication-spark-pi"]
	st := wl["status"].(map[string]any)
	st["conditions"] = append(st["conditions"].([]any), kueueCondition(kueue.CondEvicted, "True", "Preempted", "Preempted on the worker", m.worker.now))
	m.worker.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, m.worker.state())
	assert.False(t, m.worker.hasDriver(), "an attempt without an admission stops")
	assert.Empty(t, m.worker.children[keyWorkload], "no Workload of its own replaces MultiKueue's")

	// The manager's Workload evicted (MultiKueue retries the admission check): replaced.
	m.manager.kueueEvict()
	require.NoError(t, m.manager.sync())
	assert.Nil(t, m.manager.workloadObj(), "the spent Workload is left out")
	assert.EqualValues(t, 1, m.manager.last.ResyncAfterSeconds, "and a fresh one is queued at once")
	m.manager.settle()
	assert.NotNil(t, m.manager.workloadObj())
	assert.Nil(t, m.manager.workloadObj()["status"], "a fresh Workload")
}

func TestScenarioMultiKueueWorkerWaitsForThePrebuiltWorkload(t *testing.T) {
	m := newMultiKueue(t)
	m.manager.settle()
	m.dispatch()
	m.worker.related[keyWorkload] = map[string]map[string]any{}
	m.worker.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, m.worker.state())
	assert.False(t, m.worker.hasDriver())
	assert.Empty(t, m.worker.children[keyWorkload])
	assert.Equal(t, "WorkloadNotFound", condition(m.worker, condQueued).Reason)
}

func TestCustomizeMultiKueue(t *testing.T) {
	controller := json.RawMessage(`{"spec":{"childResources":[{"apiVersion":"v1","resource":"pods"},{"apiVersion":"kueue.x-k8s.io/v1beta2","resource":"workloads"}]}}`)
	m := newMultiKueue(t)
	m.manager.settle()
	m.dispatch()
	for _, tc := range []struct {
		app  *v1beta2.SparkApplication
		want metacontroller.RelatedResourceRule
	}{
		{m.manager.app, metacontroller.RelatedResourceRule{APIVersion: "sparkoperator.k8s.io/v1beta2", Resource: "sparkapplications", Namespace: "spark-jobs", Names: []string{"spark-pi"}}},
		{m.worker.app, metacontroller.RelatedResourceRule{APIVersion: kueue.APIVersion, Resource: "workloads", Namespace: "spark-jobs", Names: []string{"sparkapplication-spark-pi"}}},
	} {
		resp, err := Customize(&metacontroller.CustomizeRequest{Controller: controller, Parent: coretest.MustJSON(t, tc.app)})
		require.NoError(t, err)
		assert.Contains(t, resp.RelatedResources, tc.want)
		resp, err = Customize(&metacontroller.CustomizeRequest{Parent: coretest.MustJSON(t, tc.app)})
		require.NoError(t, err)
		assert.NotContains(t, resp.RelatedResources, tc.want, "Kueue not enabled")
	}
}

// TestRecordMultiKueueGoldens writes the requests of the manager's and the worker's states under
// testdata/{sync,customize}/multikueue-*; TestGolden answers them. It runs with -update only.
func TestRecordMultiKueueGoldens(t *testing.T) {
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
	recordCustomize := func(w *world, name string) {
		dir := filepath.Join("..", "..", "testdata", "customize", name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		controller := json.RawMessage(`{"spec":{"childResources":[{"apiVersion":"v1","resource":"pods"},{"apiVersion":"kueue.x-k8s.io/v1beta2","resource":"workloads"}]}}`)
		body, err := json.MarshalIndent(&metacontroller.CustomizeRequest{Controller: controller, Parent: coretest.MustJSON(t, w.app)}, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "request.json"), append(body, '\n'), 0o644))
	}
	m := newMultiKueue(t)
	record(m.manager, "multikueue-manager-new")
	m.manager.settle()
	m.dispatch()
	recordCustomize(m.manager, "multikueue-manager")
	recordCustomize(m.worker, "multikueue-worker")
	record(m.worker, "multikueue-worker-admitted")
	m.worker.settle()
	m.worker.driverRunning(true)
	m.worker.settle()
	record(m.worker, "multikueue-worker-running")
	m.mirror()
	record(m.manager, "multikueue-manager-running")
	m.worker.advance(time.Minute)
	m.worker.driverExited(1, "Error")
	m.worker.settle()
	m.mirror()
	record(m.manager, "multikueue-manager-failed")
	m.manager.settle()
	record(m.manager, "multikueue-manager-released")

	noClass := newMultiKueue(t)
	delete(noClass.manager.related, keyPriorityClass)
	record(noClass.manager, "multikueue-manager-priority-class-missing")

	w := newMultiKueue(t)
	w.manager.settle()
	w.manager.kueueAdmit()
	w.manager.kueueEvict()
	record(w.manager, "multikueue-manager-evicted")
	w.dispatch()
	w.worker.related[keyWorkload] = map[string]map[string]any{}
	record(w.worker, "multikueue-worker-no-workload")
}
