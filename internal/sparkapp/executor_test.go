package sparkapp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// TestExecutorWalkReadsAsDecoding: what the walk reads of an executor Pod is what decoding the
// whole Pod reads, for a running, a disrupted and a failed one.
func TestExecutorWalkReadsAsDecoding(t *testing.T) {
	running := realisticExecutor(t, "spark-pi-1-exec-7", "spark-0123", 7)
	edit := func(f func(pod map[string]any)) json.RawMessage {
		var pod map[string]any
		require.NoError(t, json.Unmarshal(running, &pod))
		f(pod)
		b, err := json.Marshal(pod)
		require.NoError(t, err)
		return b
	}
	status := func(pod map[string]any) map[string]any { return pod["status"].(map[string]any) }
	for name, raw := range map[string]json.RawMessage{
		"running": running,
		"disrupted": edit(func(pod map[string]any) {
			status(pod)["conditions"] = append(status(pod)["conditions"].([]any),
				map[string]any{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"})
		}),
		"disruption over": edit(func(pod map[string]any) {
			status(pod)["conditions"] = []any{map[string]any{"type": "DisruptionTarget", "status": "False"}}
		}),
		"failed":  edit(func(pod map[string]any) { status(pod)["phase"] = "Failed" }),
		"unknown": edit(func(pod map[string]any) { status(pod)["phase"] = "Lost"; delete(pod, "metadata") }),
	} {
		t.Run(name, func(t *testing.T) {
			var want podView
			require.NoError(t, json.Unmarshal(raw, &want))
			var labeled corev1.Pod
			require.NoError(t, json.Unmarshal(raw, &labeled))
			got, err := decodeExecutor(raw)
			require.NoError(t, err)
			assert.Equal(t, want.Metadata.Name, got.name)
			assert.Equal(t, labeled.Labels[sparkpod.LabelSparkRole], got.role)
			assert.Equal(t, labeled.Labels[sparkpod.LabelAppSelector], got.appID)
			assert.Equal(t, labeled.Labels["spark-exec-id"], got.execID)
			var gotLabels map[string]string
			if got.labels != nil {
				require.NoError(t, json.Unmarshal(got.labels, &gotLabels))
			}
			assert.Equal(t, labeled.Labels, gotLabels)
			assert.Equal(t, want.Status.Phase, got.phase)
			disrupted := false
			for _, c := range want.Status.Conditions {
				disrupted = disrupted || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue)
			}
			assert.Equal(t, disrupted, got.disrupted)
			if want.Status.Phase == corev1.PodFailed {
				assert.Equal(t, &want, got.full)
			} else {
				assert.Nil(t, got.full)
			}
		})
	}
}
