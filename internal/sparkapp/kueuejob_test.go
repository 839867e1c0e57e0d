package sparkapp

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// The world plays Kueue's own SparkApplication integration as Kueue v0.19.2 behaves
// (pkg/controller/jobs/sparkapplication): its webhook creates a labelled application with
// spec.suspend true; admission is one update that sets it false and merges the flavor's node
// labels and tolerations into spec.driver and spec.executor (creating their pod templates,
// and moving spec.nodeSelector into both roles); eviction is one update that sets it true and
// puts those fields back as they were, with spec.executor.instances from the pod set.

// kueueJobSpec is what an admission changes, kept to be put back on eviction.
type kueueJobSpec struct {
	global         map[string]string
	driver, execut v1beta2.SparkPodSpec
	instances      *int32
}

// withKueueIntegration is a world whose operator leaves queueing to Kueue's integration, for an
// application its webhook created suspended.
func withKueueIntegration(w *world) {
	w.cfg.KueueIntegration = true
	w.app.Spec.Suspend = ptr(true)
}

// kueueJobAdmit unsuspends the application with the placement of a flavor: its node labels and
// a toleration.
func (w *world) kueueJobAdmit(flavor string) kueueJobSpec {
	s := &w.app.Spec
	saved := kueueJobSpec{global: maps.Clone(s.NodeSelector), driver: *s.Driver.SparkPodSpec.DeepCopy(), execut: *s.Executor.SparkPodSpec.DeepCopy(), instances: s.Executor.Instances}
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) {
		s.Suspend = ptr(false)
		for _, p := range []struct {
			pod       *v1beta2.SparkPodSpec
			container string
		}{{&s.Driver.SparkPodSpec, "spark-kubernetes-driver"}, {&s.Executor.SparkPodSpec, "spark-kubernetes-executor"}} {
			if p.pod.Template == nil {
				p.pod.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: p.container}}}}
			}
			sel := maps.Clone(p.pod.NodeSelector)
			if s.NodeSelector != nil {
				sel = maps.Clone(s.NodeSelector)
			}
			if sel == nil {
				sel = map[string]string{}
			}
			sel["cloud.example.com/capacity"] = flavor
			p.pod.NodeSelector = sel
			p.pod.Tolerations = append(slices.Clone(p.pod.Tolerations), corev1.Toleration{Key: flavor, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
		}
		s.NodeSelector = nil
	})
	return saved
}

// kueueJobEvict suspends the application and restores what admission changed.
func (w *world) kueueJobEvict(saved kueueJobSpec) {
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) {
		s.Suspend = ptr(true)
		for _, p := range []struct{ pod, was *v1beta2.SparkPodSpec }{{&s.Driver.SparkPodSpec, &saved.driver}, {&s.Executor.SparkPodSpec, &saved.execut}} {
			p.pod.NodeSelector = maps.Clone(p.was.NodeSelector)
			p.pod.Tolerations = slices.Clone(p.was.Tolerations)
			p.pod.Labels = maps.Clone(p.was.Labels)
			p.pod.Annotations = maps.Clone(p.was.Annotations)
		}
		s.Executor.Instances = saved.instances
	})
}

func TestScenarioKueueIntegrationAdmittedEvictedReadmitted(t *testing.T) {
	w := newWorld(t, withRestart(queuedSparkPi, "    type: OnFailure\n    onFailureRetries: 1\n"))
	withKueueIntegration(w)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state(), "held by Kueue")
	assert.False(t, w.hasDriver())
	q := condition(w, condQueued)
	require.NotNil(t, q)
	assert.Equal(t, metav1.ConditionTrue, q.Status)
	assert.Contains(t, q.Message, "LocalQueue team-a")

	w.advance(time.Minute)
	saved := w.kueueJobAdmit("spot")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, reasonAdmitted, condition(w, condQueued).Reason)
	podSpec := w.driverPod()["spec"].(map[string]any)
	assert.Equal(t, map[string]any{"cloud.example.com/capacity": "spot"}, podSpec["nodeSelector"], "Kueue's placement reaches the driver")
	assert.Contains(t, string(coretest.MustJSON(t, podSpec["tolerations"])), `"key":"spot"`)
	assert.Contains(t, string(coretest.MustJSON(t, w.children[keyConfigMap])), `cloud.example.com/capacity`, "and the executors' template")
	assert.Equal(t, int32(1), w.app.Status.SubmissionAttempts)
	first := w.app.Status.SubmissionID
	w.driverRunning(true)
	w.addExecutors(2, corev1.PodRunning)
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateRunning, w.state())

	w.advance(time.Minute)
	w.kueueJobEvict(saved)
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateSuspending, w.state(), "the eviction ends the attempt, and is no spec change")
	assert.Equal(t, int32(0), w.app.Status.ExecutionAttempts, "an eviction is not a failed run")
	assert.Equal(t, "Evicted", condition(w, condQueued).Reason)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
	assert.False(t, w.hasDriver())

	w.advance(time.Minute)
	w.kueueJobAdmit("on-demand")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state(), "readmitted on another flavor")
	assert.NotEqual(t, first, w.app.Status.SubmissionID)
	assert.Equal(t, int32(2), w.app.Status.SubmissionAttempts, "the attempts go on: Kueue's placement is no new spec")
	assert.Equal(t, int32(1), w.app.Status.ExecutionAttempts)
	assert.Equal(t, map[string]any{"cloud.example.com/capacity": "on-demand"}, w.driverPod()["spec"].(map[string]any)["nodeSelector"])
	w.driverRunning(true)
	w.settle()
	w.driverExited(0, "Completed")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateCompleted, w.state())

	var reasons []string
	for _, e := range w.events {
		reasons = append(reasons, e.Reason)
	}
	assert.NotContains(t, reasons, EventSpecChanged, "Kueue's edits are not the user's")
	assert.NotContains(t, reasons, EventSuspended, "Kueue's hold is told as a queue's")
	assert.Contains(t, reasons, EventAdmitted)
	assert.Contains(t, reasons, EventEvicted)
}

// TestScenarioKueueIntegrationUserEditWhileRunning: the user's own edit of a running application
// still invalidates it, and the label alone, without the operator's setting, queues nothing.
func TestScenarioKueueIntegrationUserEditWhileRunning(t *testing.T) {
	w := newWorld(t, queuedSparkPi)
	withKueueIntegration(w)
	w.settle()
	w.kueueJobAdmit("spot")
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"7"} })
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateInvalidating, w.state())

	off := newWorld(t, queuedSparkPi)
	off.app.Spec.Suspend = ptr(true)
	off.settle()
	assert.Nil(t, condition(off, condQueued), "the operator does not say Kueue queues it: a plain suspension")
}

// TestRecordKueueIntegrationGoldens writes the request of each state of Kueue's integration under
// testdata/sync/kueue-integration-*, with its config.json; TestGolden answers them. It runs with
// -update only.
func TestRecordKueueIntegrationGoldens(t *testing.T) {
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
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte("{\n  \"KueueIntegration\": true\n}\n"), 0o644))
	}
	w := newWorld(t, queuedSparkPi)
	withKueueIntegration(w)
	record(w, "kueue-integration-new")
	w.settle()
	w.advance(time.Minute)
	saved := w.kueueJobAdmit("spot")
	record(w, "kueue-integration-admitted")
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.advance(time.Minute)
	w.kueueJobEvict(saved)
	record(w, "kueue-integration-evicted")
	require.NoError(t, w.sync())
	record(w, "kueue-integration-evicted-released")
	w.settle()
	w.advance(time.Minute)
	w.kueueJobAdmit("on-demand")
	record(w, "kueue-integration-readmitted")

	// Readmitted while the evicted attempt's children were going, the last of which is gone
	// now: nothing but the hook's own resync starts the next attempt.
	quick := newWorld(t, queuedSparkPi)
	withKueueIntegration(quick)
	quick.settle()
	admitted := quick.kueueJobAdmit("spot")
	quick.settle()
	quick.driverRunning(true)
	quick.settle()
	quick.advance(time.Minute)
	quick.kueueJobEvict(admitted)
	require.NoError(t, quick.sync())
	require.Equal(t, v1beta2.ApplicationStateSuspending, quick.state())
	quick.advance(time.Second)
	quick.kueueJobAdmit("on-demand")
	record(quick, "kueue-integration-readmitted-while-suspending")

	both := newWorld(t, queuedSparkPi+"  suspend: true\n")
	both.enableKueue()
	both.kueuesWorkload()
	dir := filepath.Join("..", "..", "testdata", "sync", "kueue-mode-conflict")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	body, err := json.MarshalIndent(both.request(false), "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "request.json"), append(body, '\n'), 0o644))
}

// TestInvariantUnderKueueIntegration plays Kueue's two updates (admission: unsuspended, with a
// placement; eviction: suspended, the placement put back) on every golden sync request, with the
// queue label and the operator's setting: the invariant holds, and no such update, in a state
// Kueue acts on, invalidates the application or counts its attempts from 1 again.
func TestInvariantUnderKueueIntegration(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync", "*", "request.json"))
	require.NoError(t, err)
	cfg := DefaultConfig()
	cfg.KueueIntegration = true
	finished := map[string]bool{"COMPLETED": true, "FAILED": true, "SUBMISSION_FAILED": true, "INVALIDATING": true}
	holding := map[string]bool{"": true, "NEW": true, "SUSPENDING": true, "SUSPENDED": true, "RESUMING": true}
	placement := func(spec map[string]any, flavor string) {
		for _, role := range []string{"driver", "executor"} {
			pod := obj(spec, role)
			if flavor == "" {
				delete(pod, "nodeSelector")
				delete(pod, "tolerations")
				continue
			}
			pod["nodeSelector"] = map[string]any{"cloud.example.com/capacity": flavor}
			pod["tolerations"] = []any{map[string]any{"key": flavor, "operator": "Exists", "effect": "NoSchedule"}}
		}
	}
	runs := 0
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		now := caseNow(t, filepath.Dir(file))
		for _, edit := range []struct {
			name    string
			suspend bool
			flavor  string
		}{{"admitted-spot", false, "spot"}, {"admitted-on-demand", false, "on-demand"}, {"evicted", true, ""}, {"held", true, "spot"}} {
			var req map[string]any
			require.NoError(t, json.Unmarshal(body, &req))
			parent := obj(req, "parent")
			if _, ok := parent["spec"].(map[string]any); !ok {
				continue
			}
			labels := obj(obj(parent, "metadata"), "labels")
			labels["kueue.x-k8s.io/queue-name"] = "team-a"
			delete(obj(req, "children"), "Workload.kueue.x-k8s.io/v1beta2")
			spec := obj(parent, "spec")
			spec["suspend"] = edit.suspend
			placement(spec, edit.flavor)
			mutated, err := json.Marshal(req)
			require.NoError(t, err)
			runs++
			t.Run(filepath.Base(filepath.Dir(file))+"/"+edit.name, func(t *testing.T) {
				var sr metacontroller.SyncRequest
				if json.Unmarshal(mutated, &sr) != nil {
					return
				}
				resp, _, err := Sync(&sr, now, cfg)
				checkInvariant(t, mutated, resp, err)
				if err != nil {
					return
				}
				var before, after struct {
					SubmissionAttempts int32 `json:"submissionAttempts"`
					ApplicationState   struct {
						State string `json:"state"`
					} `json:"applicationState"`
				}
				if st, ok := parent["status"]; ok {
					require.NoError(t, json.Unmarshal(coretest.MustJSON(t, st), &before))
				}
				require.NoError(t, json.Unmarshal(coretest.MustJSON(t, resp.Status), &after))
				if finished[before.ApplicationState.State] || before.SubmissionAttempts == 0 {
					return
				}
				if !edit.suspend && !holding[before.ApplicationState.State] {
					return // Kueue admits a suspended application, whose state shows it held
				}
				if after.ApplicationState.State == "INVALIDATING" {
					t.Fatalf("Kueue's update invalidated the application (%s -> INVALIDATING)", before.ApplicationState.State)
				}
				if after.SubmissionAttempts < before.SubmissionAttempts {
					t.Fatalf("Kueue's update counted the attempts afresh (%d -> %d)", before.SubmissionAttempts, after.SubmissionAttempts)
				}
			})
		}
	}
	t.Logf("%d requests under Kueue's updates", runs)
}

// kueuesWorkload is the Workload Kueue's integration makes for the application, as the request
// shows it where the registration declares Workload children.
func (w *world) kueuesWorkload() {
	w.children[keyWorkload]["sparkapplication-spark-pi-3f2a1"] = map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"name": "sparkapplication-spark-pi-3f2a1", "namespace": w.app.Namespace, "uid": "5b0e0000-0000-4000-8000-000000000042",
			"resourceVersion": "77", "labels": map[string]any{"kueue.x-k8s.io/job-uid": string(w.app.UID)},
			"ownerReferences": []any{map[string]any{"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication", "name": w.app.Name,
				"uid": string(w.app.UID), "controller": true, "blockOwnerDeletion": true}}},
		"spec": map[string]any{"queueName": "team-a", "podSets": []any{}},
	}
}

// TestScenarioKueueModeConflict: both modes on (the registration declares Workloads, and Kueue's
// integration suspended the application and made its own Workload): nothing starts, sparkhooks
// makes no second Workload and leaves Kueue's, and the application says why.
func TestScenarioKueueModeConflict(t *testing.T) {
	w := newWorld(t, queuedSparkPi+"  suspend: true\n")
	w.enableKueue()
	w.kueuesWorkload()
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
	q := condition(w, condQueued)
	require.NotNil(t, q)
	assert.Equal(t, reasonKueueModeConflict, q.Reason)
	assert.Contains(t, q.Message, "sparkapplication-spark-pi-3f2a1")
	assert.Empty(t, w.created, "no second Workload, no driver")
	assert.Empty(t, w.deleted, "Kueue's Workload is left be")
	require.NotEmpty(t, w.events)
	assert.Equal(t, "Warning", w.events[len(w.events)-1].Type)

	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(false) }) // Kueue admits its own
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state(), "still nothing runs: the Workload of ours would hold the quota twice")
	assert.False(t, w.hasDriver())
}
