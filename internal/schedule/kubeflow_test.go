package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// kubeflowRun is a run as the Kubeflow operator makes it: named with the scheduled time in
// nanoseconds (its default precision), labelled with the schedule's name, no scheduled-time
// annotation, created at that time.
func kubeflowRun(at time.Time, state v1beta2.ApplicationStateType) *observedRun {
	return &observedRun{
		name:    fmt.Sprintf("nightly-pi-%d", at.UnixNano()),
		labels:  map[string]string{LabelScheduledAppName: "nightly-pi"},
		created: at,
		state:   state,
	}
}

// TestSyncTakesOverKubeflowSchedule: a schedule the Kubeflow operator ran, with its runs adopted
// after a switch-over (docs/migrate-from-kubeflow.md), keeps its next run and its history, and
// its runs count for concurrency and history limits as the hook's own.
func TestSyncTakesOverKubeflowSchedule(t *testing.T) {
	earlier := kubeflowRun(at("2024-06-03T09:00:00Z"), v1beta2.ApplicationStateCompleted)
	last := kubeflowRun(at("2024-06-03T10:00:00Z"), v1beta2.ApplicationStateRunning)
	p := newParent("0 * * * *")
	p.Spec.ConcurrencyPolicy = v1beta2.ConcurrencyForbid
	p.Status = v1beta2.ScheduledSparkApplicationStatus{
		ScheduleState:          v1beta2.ScheduleStateScheduled,
		LastRun:                metaTime("2024-06-03T10:00:00Z"),
		NextRun:                metaTime("2024-06-03T11:00:00Z"),
		LastRunName:            last.name,
		PastSuccessfulRunNames: []string{earlier.name},
	}
	w := newWorld(t, p, at("2024-06-03T10:30:00Z"))
	w.runs[earlier.name], w.runs[last.name] = earlier, last

	resp, res := w.sync()
	assert.False(t, res.Submitted)
	assert.Equal(t, []string{earlier.name, last.name}, childNames(resp))
	st := status(resp)
	assert.Equal(t, at("2024-06-03T11:00:00Z"), st.NextRun.UTC(), "the next run Kubeflow scheduled")
	assert.Equal(t, last.name, st.LastRunName)
	assert.Equal(t, at("2024-06-03T10:00:00Z"), st.LastRun.UTC())
	assert.Equal(t, []string{earlier.name}, st.PastSuccessfulRunNames)

	// Kubeflow's run is active: Forbid holds the 11:00 run back until it ends.
	w.now = at("2024-06-03T11:00:01Z")
	resp, res = w.sync()
	assert.False(t, res.Submitted)
	assert.Contains(t, status(resp).Reason, last.name)

	w.finish(last.name, v1beta2.ApplicationStateCompleted)
	w.now = at("2024-06-03T11:05:00Z")
	resp, res = w.sync()
	require.True(t, res.Submitted)
	own := runName("nightly-pi", at("2024-06-03T11:00:00Z"))
	assert.Equal(t, []string{last.name, own}, childNames(resp), "the default history keeps one succeeded run, Kubeflow's last")
	st = status(resp)
	assert.Equal(t, own, st.LastRunName)
	assert.Equal(t, []string{last.name}, st.PastSuccessfulRunNames)
	assert.Equal(t, at("2024-06-03T12:00:00Z"), st.NextRun.UTC())
	assert.Equal(t, v1beta2.ScheduleStateScheduled, st.ScheduleState)
}
