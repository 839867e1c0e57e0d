package sparkapp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// kubeflowSubmission is the submission id Kubeflow's operator gives an attempt: a bare UUID.
const kubeflowSubmission = "2f0c6a4e-9b7d-4c1e-8a53-7d1e0b6c9f12"

// submittedByKubeflowOperator makes the world's running attempt one that Kubeflow's operator
// submitted and that sparkhooks finds after a switch-over (docs/migrate-from-kubeflow.md): the
// status as Kubeflow writes it (its submission id, no spec hash, no conditions), a driver Pod
// that spark-submit created (no answer recorded, its ConfigMap owned by the Pod, not the
// application), labelled for adoption, and its executors with Kubeflow's submission id.
func submittedByKubeflowOperator(w *world) {
	w.t.Helper()
	st := &w.app.Status
	st.SubmissionID, st.SubmittedSpecHash, st.Conditions = kubeflowSubmission, "", nil
	md := w.driverPod()["metadata"].(map[string]any)
	md["labels"].(map[string]any)[sparkpod.LabelSubmissionID] = kubeflowSubmission
	delete(md["annotations"].(map[string]any), metacontroller.LastAppliedAnnotation)
	w.children[keyConfigMap] = map[string]map[string]any{}
	for _, svc := range w.children[keyService] {
		delete(svc["metadata"].(map[string]any)["annotations"].(map[string]any), metacontroller.LastAppliedAnnotation)
	}
	for _, exec := range w.execs {
		exec["metadata"].(map[string]any)["labels"].(map[string]any)[sparkpod.LabelSubmissionID] = kubeflowSubmission
	}
}

// releasedByMetacontroller moves the driver Pod of a Kubeflow attempt from the children to the
// related objects: nobody labelled it, so Metacontroller released it.
func releasedByMetacontroller(w *world) {
	w.t.Helper()
	pod := w.driverPod()
	md := pod["metadata"].(map[string]any)
	delete(md["labels"].(map[string]any), sparkpod.LabelControllerUID)
	delete(md, "ownerReferences")
	name := md["name"].(string)
	delete(w.children[keyPod], name)
	w.execs[name] = pod // the world's related Pods, whatever their role
}

// relatedDriverExited ends the released driver well, as its kubelet reports it.
func relatedDriverExited(w *world) { relatedDriverEnded(w, 0) }

// relatedDriverFailed ends it with exit code 1.
func relatedDriverFailed(w *world) { relatedDriverEnded(w, 1) }

func relatedDriverEnded(w *world, code int) {
	w.t.Helper()
	phase, reason := corev1.PodSucceeded, "Completed"
	if code != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	for _, pod := range w.execs {
		if pod["metadata"].(map[string]any)["labels"].(map[string]any)[sparkpod.LabelSparkRole] != sparkpod.RoleDriver {
			continue
		}
		pod["status"] = map[string]any{
			"phase": string(phase),
			"containerStatuses": []any{map[string]any{
				"name": driverContainer, "ready": false, "restartCount": 0, "image": "", "imageID": "",
				"state": map[string]any{"terminated": map[string]any{
					"exitCode": code, "reason": reason,
					"startedAt": w.now.Add(-time.Minute).UTC().Format(time.RFC3339), "finishedAt": w.now.UTC().Format(time.RFC3339),
				}},
			}},
		}
	}
}

// takenOver is an application Kubeflow's operator runs, RUNNING with two executors, as the
// first sync after the switch-over sees it.
func takenOver() func(t *testing.T) *world {
	return then(running(sparkPi, 2), submittedByKubeflowOperator)
}

func kubeflowCases() []goldenCase {
	settled := func(w *world) { w.settle(); w.advance(time.Minute) }
	return []goldenCase{
		{name: "kubeflow-running-adopted", setup: takenOver()},
		{name: "kubeflow-running-released", setup: then(takenOver(), releasedByMetacontroller)},
		{name: "kubeflow-completed-adopted", setup: then(takenOver(), func(w *world) {
			settled(w)
			w.driverExited(0, "Completed")
		})},
		{name: "kubeflow-completed-released", setup: then(then(takenOver(), releasedByMetacontroller), func(w *world) {
			settled(w)
			relatedDriverExited(w)
		})},
		// An edit after the take-over gives the attempt up, as any spec change does.
		{name: "kubeflow-spec-edited", setup: then(takenOver(), func(w *world) {
			settled(w)
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"2000"} })
		})},
		// A driver Pod that neither Metacontroller nor the related objects show is missing, as
		// one of this hook's attempts: nothing is submitted in its place meanwhile.
		{name: "kubeflow-running-driver-gone", setup: then(takenOver(), func(w *world) {
			w.children[keyPod] = map[string]map[string]any{}
		})},
		// A retry waits while the released driver Pod, whose name the next driver takes, is there.
		{name: "kubeflow-released-retry-waits", setup: then(then(running(withRestart(sparkPi, onFailure), 2), submittedByKubeflowOperator), func(w *world) {
			releasedByMetacontroller(w)
			settled(w)
			relatedDriverFailed(w)
			settled(w)
			w.advance(time.Hour)
		})},
		{name: "kubeflow-running", hook: "customize", setup: takenOver()},
	}
}

// TestKubeflowAttemptFollowedToItsEnd runs an attempt Kubeflow's operator submitted to its end
// under the hook, adopted and released: the driver Pod is never replaced nor deleted, the
// status goes on from Kubeflow's (attempt counts, submission, executors, times), and the
// Adopted condition says how the driver was followed.
func TestKubeflowAttemptFollowedToItsEnd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		released bool
		reason   string
	}{
		{name: "adopted", reason: ReasonKubeflowDriverAdopted},
		{name: "released", released: true, reason: ReasonKubeflowDriverNotOwned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := takenOver()(t)
			if tc.released {
				releasedByMetacontroller(w)
			}
			before := w.app.Status.DeepCopy()
			created := len(w.created)
			w.settle()
			require.Equal(t, v1beta2.ApplicationStateRunning, w.state())
			adopted := meta.FindStatusCondition(w.app.Status.Conditions, condAdopted)
			require.NotNil(t, adopted)
			require.Equal(t, tc.reason, adopted.Reason)
			require.Equal(t, w.app.Generation, adopted.ObservedGeneration)

			w.advance(time.Minute)
			if tc.released {
				relatedDriverExited(w)
			} else {
				w.driverExited(0, "Completed")
			}
			w.execs["spark-pi-exec-1"]["status"] = map[string]any{"phase": string(corev1.PodSucceeded)}
			delete(w.execs, "spark-pi-exec-2")
			w.settle()
			w.advance(time.Hour)
			w.settle()

			st := w.app.Status
			require.Equal(t, v1beta2.ApplicationStateCompleted, st.AppState.State)
			require.Equal(t, created, len(w.created), "nothing created: %v", w.created[created:])
			require.Empty(t, w.deleted)
			require.Equal(t, before.SubmissionID, st.SubmissionID)
			require.Equal(t, before.SubmissionAttempts, st.SubmissionAttempts)
			require.Equal(t, before.ExecutionAttempts, st.ExecutionAttempts)
			require.Equal(t, before.LastSubmissionAttemptTime, st.LastSubmissionAttemptTime)
			require.Equal(t, before.DriverInfo, st.DriverInfo)
			require.Empty(t, st.SubmittedSpecHash, "the attempt stays Kubeflow's")
			require.False(t, st.TerminationTime.IsZero())
			require.Equal(t, map[string]v1beta2.ExecutorState{
				"spark-pi-exec-1": v1beta2.ExecutorStateCompleted, "spark-pi-exec-2": v1beta2.ExecutorStateCompleted,
			}, st.ExecutorState)
			if tc.released {
				require.Empty(t, w.children[keyPod])
			} else {
				require.Len(t, w.children[keyPod], 1)
			}
		})
	}
}

// TestKubeflowAttemptEditedIsRunAgain: a spec edited after the take-over ends the Kubeflow
// attempt and submits the new spec as this hook's own attempt, counted on from Kubeflow's.
func TestKubeflowAttemptEditedIsRunAgain(t *testing.T) {
	w := takenOver()(t)
	w.settle()
	attempts := w.app.Status.SubmissionAttempts
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"2000"} })
	w.settle()
	w.settle()
	st := w.app.Status
	require.Equal(t, v1beta2.ApplicationStateSubmitted, st.AppState.State)
	require.NotEqual(t, kubeflowSubmission, st.SubmissionID)
	require.NotEmpty(t, st.SubmittedSpecHash)
	require.Nil(t, meta.FindStatusCondition(st.Conditions, condAdopted))
	require.Equal(t, int32(1), st.SubmissionAttempts, "a spec change counts afresh, as in Kubeflow (was %d)", attempts)
}
