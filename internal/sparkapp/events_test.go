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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

func reasons(events []event.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type + " " + e.Reason
	}
	return out
}

// TestEventsTellTheStory runs applications through their lives, syncing as Metacontroller
// would (settle repeats every sync until nothing changes), and reads the Events they tell: one
// per decided transition, none for the repeats.
func TestEventsTellTheStory(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		live func(w *world)
		want []string
	}{
		{"SparkPi completes", sparkPi, func(w *world) {
			w.settle()
			w.advance(4 * time.Second)
			w.driverRunning(true)
			w.addExecutors(2, corev1.PodRunning)
			w.settle()
			w.advance(time.Minute)
			w.driverExited(0, "Completed")
			w.settle()
		}, []string{"Normal SparkApplicationSubmitted", "Normal SparkDriverRunning", "Normal SparkExecutorRunning", "Normal SparkApplicationCompleted"}},
		{"a failure retried once, then final", withRestart(sparkPi, "    type: OnFailure\n    onFailureRetries: 1\n    onFailureRetryInterval: 10\n"), func(w *world) {
			for range 2 {
				w.settle()
				w.advance(4 * time.Second)
				w.driverRunning(true)
				w.settle()
				w.advance(time.Minute)
				w.driverExited(1, "Error")
				w.settle()
				w.advance(time.Minute)
				w.settle()
			}
		}, []string{
			"Normal SparkApplicationSubmitted", "Normal SparkDriverRunning", "Warning SparkDriverFailed",
			"Normal SparkApplicationSubmitted", "Normal SparkDriverRunning", "Warning SparkApplicationFailed",
		}},
		{"an unschedulable driver times out", sparkPi + "  timeouts:\n    driverStartSeconds: 60\n", func(w *world) {
			w.settle()
			w.advance(2 * time.Second)
			w.setDriverStatus(corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
			}}})
			w.settle()
			w.advance(time.Minute)
			w.settle()
		}, []string{"Normal SparkApplicationSubmitted", "Warning SparkDriverNotStarting", "Warning SparkApplicationFailed"}},
		{"suspended and resumed", sparkPi, func(w *world) {
			w.settle()
			w.app.Spec.Suspend = ptr(true)
			w.settle()
			w.app.Spec.Suspend = ptr(false)
			w.settle()
		}, []string{"Normal SparkApplicationSubmitted", "Normal SparkApplicationSuspending", "Normal SparkApplicationSuspended", "Normal SparkApplicationSubmitted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.doc)
			tc.live(w)
			assert.Equal(t, tc.want, reasons(w.events))
		})
	}
}

// TestEventsOfAnUnchangedStatusAreNone: a sync that answers the status it observed decided no
// transition, whatever the status says.
func TestEventsOfAnUnchangedStatusAreNone(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync", "*", "response.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var resp struct {
			Status *v1beta2.SparkApplicationStatus `json:"status"`
		}
		require.NoError(t, json.Unmarshal(b, &resp))
		if resp.Status == nil {
			continue // a refusal
		}
		assert.Empty(t, Events(resp.Status, resp.Status), f)
	}
}

// TestEventsAreBoundedAndWellFormed checks every golden Event against what the API server
// accepts of an events.k8s.io/v1 Event: a type, a reason and an action of at most 128
// characters, a note of at most 1 KiB.
func TestEventsAreBoundedAndWellFormed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync", "*", "events.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var events []event.Event
		require.NoError(t, json.Unmarshal(b, &events))
		for _, e := range events {
			assert.Contains(t, []string{event.Normal, event.Warning}, e.Type, f)
			assert.Regexp(t, `^[A-Z][A-Za-z]{1,127}$`, e.Reason, f)
			assert.Regexp(t, `^[A-Z][A-Za-z]{1,127}$`, e.Action, f)
			assert.NotEmpty(t, e.Message, f)
			assert.LessOrEqual(t, len(e.Message), event.MaxNote, f)
			if strings.Contains(e.Reason, "Failed") || strings.Contains(e.Reason, "Evicted") {
				assert.Equal(t, event.Warning, e.Type, "a failure is a Warning: %s in %s", e.Reason, f)
			}
		}
	}
}

func TestStoryRegardsTheParentWithoutItsResourceVersion(t *testing.T) {
	app := &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication"},
		ObjectMeta: metav1.ObjectMeta{Name: "spark-pi", Namespace: "jobs", UID: "u-1", ResourceVersion: "77"},
	}
	answered := &v1beta2.SparkApplicationStatus{SubmissionID: "s", SubmissionAttempts: 1,
		AppState: v1beta2.ApplicationState{State: v1beta2.ApplicationStateSubmitted}}
	told := newTeller(app)
	story, err := outcome(told, decision{}, nil, &metacontroller.SyncResponse{Status: answered}).Story()
	require.NoError(t, err)
	assert.Equal(t, corev1.ObjectReference{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication",
		Namespace: "jobs", Name: "spark-pi", UID: "u-1"}, story.Regarding)
	assert.Equal(t, []string{"Normal SparkApplicationSubmitted"}, reasons(story.Events))

	_, err = outcome(told, decision{}, nil, &metacontroller.SyncResponse{Status: map[string]any{}}).Story()
	assert.Error(t, err, "a status of another kind")
}
