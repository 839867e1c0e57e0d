//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// spec.managedBy against the real API server with the chart's CRD and validating webhook, under
// the stand-in or the real Metacontroller: an application MultiKueue manages gets no children and
// keeps the status its manager writes (Metacontroller only restamps observedGeneration), is
// deleted without a hitch, and says so in one Event; another value, and a change of manager
// either way, are refused at apply.
func TestManagedByMultiKueueIsLeftAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newJobWorld(t, hooksURL, appController)
	const managed = "  managedBy: kueue.x-k8s.io/multikueue\n"

	out, err := w.apply(scenarioApp("dispatched", "100", managed))
	require.NoError(t, err, out)
	// Metacontroller adds observedGeneration to every answer it writes: the sign of the sync.
	w.check(t, w.waitApp("dispatched", "status.observedGeneration 1", observedGeneration(1)))
	app, err := w.app("dispatched")
	require.NoError(t, err)
	// The empty status (the CRD requires driverInfo; the times are nullable and kept as null),
	// nothing of a submission.
	assert.Equal(t, map[string]any{"observedGeneration": int64(1), "driverInfo": map[string]any{}, "applicationState": map[string]any{"state": ""},
		"lastSubmissionAttemptTime": nil, "terminationTime": nil}, app.Object["status"], describeApp(app))

	// What MultiKueue's generic adapter does: the worker copy's whole status, patched over this
	// one. The worker's observedGeneration differs, so the next sync shows as a write of ours.
	mirrored := `{"status":{"applicationState":{"state":"RUNNING"},"sparkApplicationId":"spark-0123456789abcdef0123456789abcdef","executionAttempts":1,"submissionAttempts":1,"driverInfo":{"podName":"dispatched-driver"},"observedGeneration":5}}`
	out, err = w.kubectl("patch", "sparkapplications.sparkoperator.k8s.io", "dispatched", "--subresource=status", "--type=merge", "-p", mirrored)
	require.NoError(t, err, out)
	out, err = w.kubectl("label", "sparkapplications.sparkoperator.k8s.io", "dispatched", "e2e-sync=1")
	require.NoError(t, err, "a metadata change, which Metacontroller syncs on: %s", out)
	w.check(t, w.waitApp("dispatched", "the mirrored status, observedGeneration restamped to 1", observedGeneration(1)))
	app, err = w.app("dispatched")
	require.NoError(t, err)
	assert.Equal(t, "RUNNING", appState(app), describeApp(app))
	for path, want := range map[string]any{
		"sparkApplicationId": "spark-0123456789abcdef0123456789abcdef",
		"executionAttempts":  int64(1),
		"driverInfo.podName": "dispatched-driver",
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(app.Object, append([]string{"status"}, strings.Split(path, ".")...)...)
		assert.Equal(t, want, got, "status.%s as the manager wrote it", path)
	}
	status, _, _ := unstructured.NestedMap(app.Object, "status")
	// The manager's six fields, and the empty status's null times its merge patch left.
	assert.Len(t, status, 8, "nothing added to the manager's status but observedGeneration: %v", status)

	// Settle, then nothing was ever created for it.
	time.Sleep(metacontrollerSettle)
	created, updated := w.writes.children(t, "SparkApplication", "dispatched")
	assert.Zero(t, created, "children created for an application MultiKueue manages")
	assert.Empty(t, updated)
	pods, err := w.core.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, pods.Items, "Pods in the namespace")

	// One Event, from the first sync, whose parent had no observedGeneration yet.
	var reasons map[string]int
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := w.core.EventsV1().Events(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		reasons = map[string]int{}
		for _, e := range list.Items {
			if e.ReportingController == "sparkhooks" && e.Regarding.Name == "dispatched" {
				reasons[e.Reason]++
				assert.Contains(t, e.Note, "kueue.x-k8s.io/multikueue")
			}
		}
		return reasons["SparkApplicationManagedElsewhere"] > 0, nil
	}), "the SparkApplicationManagedElsewhere Event")
	assert.Equal(t, map[string]int{"SparkApplicationManagedElsewhere": 1}, reasons)

	t.Run("refused at apply", func(t *testing.T) {
		out, err := w.apply(scenarioApp("ours", "100", "  suspend: true\n"))
		require.NoError(t, err, out)
		other := filepath.Join(t.TempDir(), "other.yaml")
		require.NoError(t, os.WriteFile(other, []byte(scenarioApp("other", "100", "  managedBy: example.com/my-controller\n")), 0o600))
		for _, tt := range []struct {
			name string
			args []string
			want string
		}{
			{"another manager", []string{"create", "--dry-run=server", "-f", other}, `spec.managedBy`},
			{"handed to MultiKueue", []string{"patch", "sparkapplications.sparkoperator.k8s.io", "ours", "--type=merge", "-p", `{"spec":{"managedBy":"kueue.x-k8s.io/multikueue"}}`}, "spec.managedBy is immutable"},
			{"taken back from MultiKueue", []string{"patch", "sparkapplications.sparkoperator.k8s.io", "dispatched", "--type=merge", "-p", `{"spec":{"managedBy":null}}`}, "spec.managedBy is immutable"},
			{"taken back explicitly", []string{"patch", "sparkapplications.sparkoperator.k8s.io", "dispatched", "--type=merge", "-p", `{"spec":{"managedBy":"sparkoperator.k8s.io/spark-operator"}}`}, "spec.managedBy is immutable"},
		} {
			out, err := w.kubectl(tt.args...)
			require.Error(t, err, "%s: %s", tt.name, out)
			assert.Contains(t, out, tt.want, tt.name)
		}
		out, err = w.kubectl("patch", "sparkapplications.sparkoperator.k8s.io", "ours", "--type=merge", "-p", `{"spec":{"managedBy":"sparkoperator.k8s.io/spark-operator"}}`)
		require.NoError(t, err, "writing the default out is no change of manager: %s", out)
	})

	out, err = w.kubectl("delete", "sparkapplications.sparkoperator.k8s.io", "dispatched", "--wait=true", "--timeout=45s")
	require.NoError(t, err, "the finalize hook lets it go: %s%s", out, w.events("dispatched"))
}

// observedGeneration accepts an application whose status.observedGeneration is gen.
func observedGeneration(gen int64) func(*unstructured.Unstructured) bool {
	return func(app *unstructured.Unstructured) bool {
		got, found, _ := unstructured.NestedInt64(app.Object, "status", "observedGeneration")
		return found && got == gen && app.GetGeneration() == gen
	}
}
