package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSyncFirstSyncSchedulesWithoutRunning(t *testing.T) {
	w := newWorld(t, newParent("0 3 * * *"), at("2024-06-03T10:00:00Z"))
	resp, res := w.sync()

	st := status(resp)
	assert.Equal(t, v1beta2.ScheduleStateScheduled, st.ScheduleState)
	assert.Equal(t, at("2024-06-04T03:00:00Z"), st.NextRun.UTC())
	assert.True(t, st.LastRun.IsZero())
	assert.Empty(t, resp.Children)
	assert.Equal(t, []any{"", "Scheduled", false}, []any{res.From, res.To, res.ValidationFailed})
	assert.Equal(t, float64(3600), resp.ResyncAfterSeconds, "bounded by MaxResync")
	require.Len(t, st.Conditions, 1)
	assert.Equal(t, CondScheduleValid, st.Conditions[0].Type)
	assert.Equal(t, `runs at "0 3 * * *" in time zone UTC`, st.Conditions[0].Message)
}

func TestSyncCreatesRunWhenDue(t *testing.T) {
	w := newWorld(t, newParent("*/10 * * * *"), at("2024-06-03T10:00:00Z"))
	w.sync()
	w.now = at("2024-06-03T10:10:00.25Z")
	resp, res := w.sync()

	assert.True(t, res.Submitted)
	require.Len(t, resp.Children, 1)
	run := resp.Children[0].(*runObject)
	assert.Equal(t, "nightly-pi-1717409400", run.Metadata.Name)
	assert.Equal(t, "spark-jobs", run.Metadata.Namespace)
	assert.Equal(t, map[string]string{"team": "analytics", LabelScheduledAppName: "nightly-pi"}, run.Metadata.Labels)
	assert.Equal(t, map[string]string{AnnotationScheduledTime: "2024-06-03T10:10:00Z"}, run.Metadata.Annotations)
	assert.Equal(t, sparkPi(), *run.Spec)

	st := status(resp)
	assert.Equal(t, at("2024-06-03T10:10:00Z"), st.LastRun.UTC())
	assert.Equal(t, "nightly-pi-1717409400", st.LastRunName)
	assert.Equal(t, at("2024-06-03T10:20:00Z"), st.NextRun.UTC())
	assert.Equal(t, float64(600), resp.ResyncAfterSeconds, "ceil of 599.75 s")
}

func TestSyncMaxResync(t *testing.T) {
	tests := []struct {
		name string
		max  time.Duration
		want float64
	}{
		{"default is an hour", 0, 3600},
		{"shorter bound", 5 * time.Minute, 300},
		{"longer bound lets the next run decide", 48 * time.Hour, 61200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, err := Sync(request(t, newParent("0 3 * * *")), at("2024-06-03T10:00:00Z"), Config{MaxResync: tt.max})
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.ResyncAfterSeconds)
		})
	}
}

func TestSyncRequestErrors(t *testing.T) {
	good := request(t, newParent("@hourly"))
	tests := []struct {
		name   string
		mutate func(req map[string]any)
		want   string
	}{
		{"no parent", func(r map[string]any) { delete(r, "parent") }, "no parent"},
		{"parent not an object", func(r map[string]any) { r["parent"] = []int{1} }, "decode parent"},
		{"wrong kind", func(r map[string]any) { r["parent"].(map[string]any)["kind"] = "SparkApplication" }, "want ScheduledSparkApplication"},
		{"no name", func(r map[string]any) { delete(r["parent"].(map[string]any)["metadata"].(map[string]any), "name") }, "lacks metadata.name"},
		{"child not an object", func(r map[string]any) {
			r["children"] = map[string]any{ChildKey: map[string]any{"x": "text"}}
		}, "decode observed"},
		{"metadata not an object", func(r map[string]any) { r["parent"].(map[string]any)["metadata"] = "nightly-pi" }, "decode parent"},
		{"wrong apiVersion", func(r map[string]any) { r["parent"].(map[string]any)["apiVersion"] = "sparkoperator.k8s.io/v1beta1" },
			"parent has apiVersion sparkoperator.k8s.io/v1beta1, want sparkoperator.k8s.io/v1beta2"},
		{"finalizing a parent not being deleted", func(r map[string]any) { r["finalizing"] = true },
			"finalizing request for ScheduledSparkApplication spark-jobs/nightly-pi, which has no metadata.deletionTimestamp"},
		{"child filed under another name", func(r map[string]any) {
			r["children"] = map[string]any{ChildKey: map[string]any{"nightly-pi-1717408800": map[string]any{"metadata": map[string]any{"name": "nightly-pi-1717412400"}}}}
		}, `"nightly-pi-1717408800" has metadata.name "nightly-pi-1717412400"`},
		{"child without a name", func(r map[string]any) {
			r["children"] = map[string]any{ChildKey: map[string]any{"nightly-pi-1717408800": map[string]any{"metadata": map[string]any{}}}}
		}, `"nightly-pi-1717408800" has metadata.name ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, jsonRoundTrip(good, &m))
			tt.mutate(m)
			var req = decodeSyncRequest(t, m)
			_, _, err := Sync(req, at("2024-06-03T10:00:00Z"), Config{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var br interface{ BadRequest() bool }
			require.ErrorAs(t, err, &br)
			assert.True(t, br.BadRequest())
		})
	}
	_, _, err := Sync(nil, time.Now(), Config{})
	require.ErrorContains(t, err, "empty request")
}

func TestSyncEveryKeepsItsInterval(t *testing.T) {
	w := newWorld(t, newParent("@every 90m"), at("2024-06-03T10:00:07.5Z"))
	w.syncEvery(7*time.Minute, at("2024-06-03T16:00:00Z"), nil)
	assert.Equal(t, []string{
		"2024-06-03 11:30 UTC", "2024-06-03 13:00 UTC", "2024-06-03 14:30 UTC",
	}, w.scheduledTimes(time.UTC))
	assert.Equal(t, at("2024-06-03T16:00:07Z"), w.parent.Status.NextRun.UTC())
}

func TestSyncDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	tests := []struct {
		name     string
		schedule string
		timeZone string
		from     time.Time
		to       time.Time
		want     []string
	}{
		{
			name: "spring forward: 02:30 does not exist on 10 March", schedule: "30 2 * * *", timeZone: "America/New_York",
			from: time.Date(2024, 3, 8, 12, 0, 0, 0, ny), to: time.Date(2024, 3, 12, 12, 0, 0, 0, ny),
			want: []string{"2024-03-09 02:30 EST", "2024-03-11 02:30 EDT", "2024-03-12 02:30 EDT"},
		},
		{
			name: "spring forward: hourly skips the missing hour", schedule: "CRON_TZ=America/New_York 0 * * * *",
			from: time.Date(2024, 3, 10, 0, 30, 0, 0, ny), to: time.Date(2024, 3, 10, 4, 30, 0, 0, ny),
			want: []string{"2024-03-10 01:00 EST", "2024-03-10 03:00 EDT", "2024-03-10 04:00 EDT"},
		},
		{
			name: "spring forward: 09:00 keeps local time across the change", schedule: "0 9 * * *", timeZone: "America/New_York",
			from: time.Date(2024, 3, 9, 0, 0, 0, 0, ny), to: time.Date(2024, 3, 11, 12, 0, 0, 0, ny),
			want: []string{"2024-03-09 09:00 EST", "2024-03-10 09:00 EDT", "2024-03-11 09:00 EDT"},
		},
		{
			name: "fall back: 01:30 happens twice on 3 November and runs twice", schedule: "30 1 * * *", timeZone: "America/New_York",
			from: time.Date(2024, 11, 2, 12, 0, 0, 0, ny), to: time.Date(2024, 11, 4, 12, 0, 0, 0, ny),
			want: []string{"2024-11-03 01:30 EDT", "2024-11-03 01:30 EST", "2024-11-04 01:30 EST"},
		},
		{
			name: "fall back: 02:30 runs once", schedule: "TZ=America/New_York 30 2 * * *",
			from: time.Date(2024, 11, 2, 12, 0, 0, 0, ny), to: time.Date(2024, 11, 4, 12, 0, 0, 0, ny),
			want: []string{"2024-11-03 02:30 EST", "2024-11-04 02:30 EST"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParent(tt.schedule)
			p.Spec.TimeZone = tt.timeZone
			p.Spec.SuccessfulRunHistoryLimit = ptr.To[int32](10)
			w := newWorld(t, p, tt.from.UTC())
			w.syncEvery(10*time.Minute, tt.to.UTC(), func(w *world) {
				for _, r := range w.runs {
					r.state = v1beta2.ApplicationStateCompleted
				}
			})
			assert.Equal(t, tt.want, w.scheduledTimes(ny))
		})
	}
}

func TestSyncConcurrencyPolicies(t *testing.T) {
	const due = "2024-06-03T11:00:00Z"
	first := runAt(at("2024-06-03T10:00:00Z"), v1beta2.ApplicationStateRunning)
	tests := []struct {
		name       string
		policy     v1beta2.ConcurrencyPolicy
		state      v1beta2.ApplicationStateType
		wantRuns   []string
		wantReason string
		created    bool
		nextRun    string
	}{
		{"unset is Allow", "", v1beta2.ApplicationStateRunning, []string{first.name, "nightly-pi-1717412400"}, "", true, "2024-06-03T12:00:00Z"},
		{"Allow runs next to an active run", v1beta2.ConcurrencyAllow, v1beta2.ApplicationStateSubmitted, []string{first.name, "nightly-pi-1717412400"}, "", true, "2024-06-03T12:00:00Z"},
		{"Forbid waits for an active run", v1beta2.ConcurrencyForbid, v1beta2.ApplicationStateRunning, []string{first.name},
			"concurrencyPolicy Forbid: the due run waits for " + first.name + " to finish", false, due},
		{"Forbid counts a pending rerun as active", v1beta2.ConcurrencyForbid, v1beta2.ApplicationStatePendingRerun, []string{first.name},
			"concurrencyPolicy Forbid: the due run waits for " + first.name + " to finish", false, due},
		{"Forbid runs after a failed submission", v1beta2.ConcurrencyForbid, v1beta2.ApplicationStateFailedSubmission, []string{first.name, "nightly-pi-1717412400"}, "", true, "2024-06-03T12:00:00Z"},
		{"Replace deletes an active run", v1beta2.ConcurrencyReplace, v1beta2.ApplicationStateRunning, []string{"nightly-pi-1717412400"}, "", true, "2024-06-03T12:00:00Z"},
		{"Replace keeps a finished run", v1beta2.ConcurrencyReplace, v1beta2.ApplicationStateCompleted, []string{first.name, "nightly-pi-1717412400"}, "", true, "2024-06-03T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParent("0 * * * *")
			p.Spec.ConcurrencyPolicy = tt.policy
			p.Status.ScheduleState = v1beta2.ScheduleStateScheduled
			p.Status.NextRun = metaTime(due)
			r := *first
			r.state = tt.state
			resp, res, err := Sync(request(t, p, &r), at("2024-06-03T11:00:01Z"), Config{})
			require.NoError(t, err)
			assert.Equal(t, tt.wantRuns, childNames(resp))
			assert.Equal(t, tt.wantReason, status(resp).Reason)
			assert.Equal(t, tt.created, res.Submitted)
			assert.Equal(t, at(tt.nextRun), status(resp).NextRun.UTC())
		})
	}
}

func TestSyncForbidRunsOnceTheActiveRunFinishes(t *testing.T) {
	p := newParent("0 * * * *")
	p.Spec.ConcurrencyPolicy = v1beta2.ConcurrencyForbid
	w := newWorld(t, p, at("2024-06-03T10:30:00Z"))
	w.syncEvery(10*time.Minute, at("2024-06-03T13:20:00Z"), nil) // the 11:00 run never ends
	assert.Equal(t, []string{"2024-06-03 11:00 UTC"}, w.scheduledTimes(time.UTC))
	assert.Equal(t, at("2024-06-03T12:00:00Z"), w.parent.Status.NextRun.UTC(), "the first held-back time")

	w.finish(w.created[0], v1beta2.ApplicationStateCompleted)
	w.sync()
	assert.Equal(t, []string{"2024-06-03 11:00 UTC", "2024-06-03 13:00 UTC"}, w.scheduledTimes(time.UTC), "one catch-up run, the latest")
	assert.Equal(t, at("2024-06-03T14:00:00Z"), w.parent.Status.NextRun.UTC())
}

func TestSyncHistoryPruning(t *testing.T) {
	hour := func(h int) time.Time { return time.Date(2024, 6, 3, h, 0, 0, 0, time.UTC) }
	runs := []*observedRun{
		runAt(hour(1), v1beta2.ApplicationStateCompleted),
		runAt(hour(2), v1beta2.ApplicationStateFailed),
		runAt(hour(3), v1beta2.ApplicationStateCompleted),
		runAt(hour(4), v1beta2.ApplicationStateFailedSubmission),
		runAt(hour(5), v1beta2.ApplicationStateCompleted),
		runAt(hour(6), v1beta2.ApplicationStateRunning),
	}
	name := func(h int) string { return runName("nightly-pi", hour(h)) }
	tests := []struct {
		name                  string
		successful, failed    *int32
		suspend               bool
		wantRuns              []string
		wantSucceeded, wantFa []string
	}{
		{"defaults keep one of each", nil, nil, false,
			[]string{name(4), name(5), name(6)}, []string{name(5)}, []string{name(4)}},
		{"larger limits", ptr.To[int32](2), ptr.To[int32](5), false,
			[]string{name(2), name(3), name(4), name(5), name(6)}, []string{name(5), name(3)}, []string{name(4), name(2)}},
		{"zero keeps no finished run", ptr.To[int32](0), ptr.To[int32](0), false,
			[]string{name(6)}, nil, nil},
		{"suspended keeps everything", ptr.To[int32](0), ptr.To[int32](0), true,
			[]string{name(1), name(2), name(3), name(4), name(5), name(6)}, []string{name(5), name(3), name(1)}, []string{name(4), name(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParent("0 * * * *")
			p.Spec.SuccessfulRunHistoryLimit = tt.successful
			p.Spec.FailedRunHistoryLimit = tt.failed
			p.Spec.Suspend = ptr.To(tt.suspend)
			p.Status.NextRun = metaTime("2024-06-03T07:00:00Z")
			resp, res, err := Sync(request(t, p, runs...), at("2024-06-03T06:30:00Z"), Config{})
			require.NoError(t, err)
			assert.False(t, res.Submitted)
			assert.Equal(t, tt.wantRuns, childNames(resp))
			assert.Equal(t, tt.wantSucceeded, status(resp).PastSuccessfulRunNames)
			assert.Equal(t, tt.wantFa, status(resp).PastFailedRunNames)
		})
	}
}

func TestSyncSuspendAndResume(t *testing.T) {
	p := newParent("0 * * * *")
	w := newWorld(t, p, at("2024-06-03T10:30:00Z"))
	w.syncEvery(30*time.Minute, at("2024-06-03T11:30:00Z"), nil)
	require.Len(t, w.created, 1)

	p.Spec.Suspend = ptr.To(true)
	p.Generation++
	w.syncEvery(30*time.Minute, at("2024-06-03T15:30:00Z"), nil)
	assert.Len(t, w.created, 1, "no runs while suspended")
	assert.Equal(t, w.created, w.runNames(), "the earlier run is untouched")
	assert.Equal(t, "suspended: no new runs are started", p.Status.Reason)
	assert.Equal(t, at("2024-06-03T12:00:00Z"), p.Status.NextRun.UTC(), "the first time missed")

	p.Spec.Suspend = nil
	p.Generation++
	w.now = at("2024-06-03T15:40:00Z")
	resp, res := w.sync()
	assert.True(t, res.Submitted, "resuming runs the latest missed time once")
	assert.Equal(t, []string{"2024-06-03 11:00 UTC", "2024-06-03 15:00 UTC"}, w.scheduledTimes(time.UTC))
	assert.Empty(t, status(resp).Reason)
	assert.Equal(t, at("2024-06-03T16:00:00Z"), p.Status.NextRun.UTC())
}

func TestSyncMissedRunsCatchUpOnce(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		nextRun  string
		now      string
		deadline *int64
		want     []string
		nextWant string
	}{
		{"three days down, daily", "0 3 * * *", "2024-06-01T03:00:00Z", "2024-06-03T10:00:00Z", nil,
			[]string{"2024-06-03 03:00 UTC"}, "2024-06-04T03:00:00Z"},
		{"a year down, every minute", "* * * * *", "2023-06-03T10:00:00Z", "2024-06-03T10:00:30Z", nil,
			[]string{"2024-06-03 10:00 UTC"}, "2024-06-03T10:01:00Z"},
		{"every: the grid of the first missed time", "@every 45m", "2024-06-03T01:15:00Z", "2024-06-03T10:00:00Z", nil,
			[]string{"2024-06-03 09:30 UTC"}, "2024-06-03T10:15:00Z"},
		{"within the starting deadline", "0 3 * * *", "2024-06-02T03:00:00Z", "2024-06-03T03:04:59Z", ptr.To[int64](300),
			[]string{"2024-06-03 03:00 UTC"}, "2024-06-04T03:00:00Z"},
		{"past the starting deadline", "0 3 * * *", "2024-06-02T03:00:00Z", "2024-06-03T03:05:01Z", ptr.To[int64](300),
			nil, "2024-06-04T03:00:00Z"},
		{"every past the starting deadline", "@every 1h", "2024-06-03T01:15:00Z", "2024-06-03T10:16:01Z", ptr.To[int64](60),
			nil, "2024-06-03T11:15:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParent(tt.schedule)
			p.Spec.StartingDeadlineSeconds = tt.deadline
			p.Status.ScheduleState = v1beta2.ScheduleStateScheduled
			p.Status.NextRun = metaTime(tt.nextRun)
			w := newWorld(t, p, at(tt.now))
			w.sync()
			assert.Equal(t, tt.want, nilIfEmpty(w.scheduledTimes(time.UTC)))
			assert.Equal(t, at(tt.nextWant), p.Status.NextRun.UTC())
		})
	}
}

func TestSyncLostStatusWriteDoesNotRunTwice(t *testing.T) {
	p := newParent("0 * * * *")
	p.Status.ScheduleState = v1beta2.ScheduleStateScheduled
	p.Status.NextRun = metaTime("2024-06-03T11:00:00Z")
	// The run was created but the status update that recorded it was lost.
	r := runAt(at("2024-06-03T11:00:00Z"), v1beta2.ApplicationStateRunning)
	resp, res, err := Sync(request(t, p, r), at("2024-06-03T11:00:05Z"), Config{})
	require.NoError(t, err)
	assert.False(t, res.Submitted)
	assert.Equal(t, []string{r.name}, childNames(resp))
	assert.Equal(t, r.name, status(resp).LastRunName)
	assert.Equal(t, at("2024-06-03T12:00:00Z"), status(resp).NextRun.UTC())
}

func TestSyncScheduleEditRecomputesNextRun(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		now      string
		want     string
	}{
		{"daily to hourly", "0 3 * * *", "0 * * * *", "2024-06-03T10:20:00Z", "2024-06-03T11:00:00Z"},
		{"hourly to daily", "0 * * * *", "0 3 * * *", "2024-06-03T10:20:00Z", "2024-06-04T03:00:00Z"},
		{"new time zone", "0 3 * * *", "CRON_TZ=Asia/Tokyo 0 3 * * *", "2024-06-03T10:20:00Z", "2024-06-03T18:00:00Z"},
		{"every shorter", "@every 6h", "@every 10m", "2024-06-03T10:20:00Z", "2024-06-03T10:30:00Z"},
		{"cron to every", "0 3 * * *", "@every 2h", "2024-06-03T10:20:00Z", "2024-06-03T12:20:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParent(tt.from)
			w := newWorld(t, p, at("2024-06-03T10:00:00Z"))
			w.sync()
			p.Spec.Schedule = tt.to
			p.Generation++
			w.now = at(tt.now)
			_, res := w.sync()
			assert.False(t, res.Submitted, "an edit is not a due time")
			assert.Equal(t, at(tt.want), p.Status.NextRun.UTC())
		})
	}
}

func TestSyncInvalidThenFixed(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(p *v1beta2.ScheduledSparkApplication)
		fix        func(p *v1beta2.ScheduledSparkApplication)
		condReason string
		reason     string
	}{
		{"bad expression", func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Schedule = "0 25 * * *" }, func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Schedule = "0 * * * *" },
			reasonInvalidSchedule, `spec.schedule: Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25`},
		{"unknown time zone", func(p *v1beta2.ScheduledSparkApplication) { p.Spec.TimeZone = "Mars/Olympus" }, func(p *v1beta2.ScheduledSparkApplication) { p.Spec.TimeZone = "Europe/Paris" },
			reasonInvalidTimeZone, `spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone "Mars/Olympus": use an IANA name such as UTC or America/New_York`},
		{"unknown prefix zone", func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Schedule = "CRON_TZ=Nowhere 0 * * * *" }, func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Schedule = "CRON_TZ=UTC 0 * * * *" },
			reasonInvalidSchedule, `unknown time zone "Nowhere"`},
		{"never fires", func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Schedule = "0 0 30 2 *" }, func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Schedule = "0 0 28 2 *" },
			reasonInvalidSchedule, "matches no time in the next five years"},
		{"invalid template", func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Template.Type = "Cobol" }, func(p *v1beta2.ScheduledSparkApplication) { p.Spec.Template.Type = v1beta2.SparkApplicationTypeScala },
			reasonInvalidSpec, "spec.template.type"},
		{"negative starting deadline", func(p *v1beta2.ScheduledSparkApplication) { p.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) }, func(p *v1beta2.ScheduledSparkApplication) { p.Spec.StartingDeadlineSeconds = nil },
			reasonInvalidSpec, "spec.startingDeadlineSeconds: Invalid value: -1: must not be negative"},
		{"starting deadline over the maximum", func(p *v1beta2.ScheduledSparkApplication) { p.Spec.StartingDeadlineSeconds = ptr.To[int64](1e10) },
			func(p *v1beta2.ScheduledSparkApplication) {
				p.Spec.StartingDeadlineSeconds = ptr.To(v1beta2.MaxSeconds)
			},
			reasonInvalidSpec, "spec.startingDeadlineSeconds: Invalid value: 10000000000: must be at most 315360000 seconds (10 years)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParent("0 * * * *")
			w := newWorld(t, p, at("2024-06-03T10:30:00Z"))
			w.syncEvery(30*time.Minute, at("2024-06-03T11:00:00Z"), nil)
			require.Len(t, w.created, 1)

			tt.mutate(p)
			p.Generation++
			w.now = at("2024-06-03T11:10:00Z")
			resp, res := w.sync()
			st := status(resp)
			assert.Equal(t, []any{"Scheduled", "FailedValidation", true}, []any{res.From, res.To, res.ValidationFailed})
			assert.Equal(t, v1beta2.ScheduleStateFailedValidation, st.ScheduleState)
			assert.Contains(t, st.Reason, tt.reason)
			assert.True(t, st.NextRun.IsZero())
			assert.Equal(t, w.created, w.runNames(), "the existing run is kept")
			assert.Equal(t, "nightly-pi-1717412400", st.LastRunName)
			assert.Equal(t, tt.condReason, st.Conditions[0].Reason)
			assert.Equal(t, "False", string(st.Conditions[0].Status))
			assert.Equal(t, at("2024-06-03T11:10:00Z"), st.Conditions[0].LastTransitionTime.UTC())
			assert.Zero(t, resp.ResyncAfterSeconds)

			w.syncEvery(30*time.Minute, at("2024-06-03T12:40:00Z"), nil)
			assert.Len(t, w.created, 1, "no runs while invalid")

			tt.fix(p)
			p.Generation++
			resp, res = w.sync()
			st = status(resp)
			assert.Equal(t, []any{"FailedValidation", "Scheduled", false}, []any{res.From, res.To, res.ValidationFailed})
			assert.Empty(t, st.Reason)
			assert.Equal(t, "True", string(st.Conditions[0].Status))
			assert.Equal(t, int64(3), st.Conditions[0].ObservedGeneration)
			assert.Equal(t, int64(3), st.ObservedGeneration)
			assert.False(t, st.NextRun.IsZero())
			assert.True(t, st.NextRun.After(w.now), "the fix counts from now; missed times while invalid do not run")
		})
	}
}

func TestSyncLongNamesAreShortened(t *testing.T) {
	tests := []struct {
		name    string
		parent  string
		pattern string
	}{
		{"fits", strings.Repeat("a", 52), `^a{52}-1717412400$`},
		{"one too long", strings.Repeat("a", 53), `^a{43}-[0-9a-f]{8}-1717412400$`},
		{"63 characters", "nightly-" + strings.Repeat("x", 55), `^nightly-x{35}-[0-9a-f]{8}-1717412400$`},
		{"cut at a dash", strings.Repeat("a", 42) + "-" + strings.Repeat("b", 20), `^a{42}-[0-9a-f]{8}-1717412400$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParent("0 * * * *")
			p.Name = tt.parent
			p.Status.NextRun = metaTime("2024-06-03T11:00:00Z")
			w := newWorld(t, p, at("2024-06-03T11:00:00Z"))
			w.sync()
			require.Len(t, w.created, 1)
			name := w.created[0]
			assert.Regexp(t, tt.pattern, name)
			assert.LessOrEqual(t, len(name), 63)
			assert.Empty(t, validation.IsDNS1035Label(name))

			// The shortened run is recognised on the next sync, without its label or annotation.
			r := w.runs[name]
			r.labels, r.annots = nil, nil
			w.now = w.now.Add(time.Minute)
			w.sync()
			assert.Equal(t, []string{name}, w.runNames())
		})
	}
}

func TestRunNameHashSeparatesLongNames(t *testing.T) {
	common := strings.Repeat("team-analytics-", 4)
	a := runName(common+"daily", at("2024-06-03T11:00:00Z"))
	b := runName(common+"weekly", at("2024-06-03T11:00:00Z"))
	assert.NotEqual(t, a, b)
	assert.Equal(t, a[:43], b[:43], "both are cut to the same prefix")
	assert.Equal(t, a, runName(common+"daily", at("2024-06-03T11:00:00Z")), "stable")
}

// TestSyncParentBeingDeletedStartsNoRun: with no finalize hook registered, Metacontroller
// syncs a parent being deleted; a finalizing request for one is answered the same way.
func TestSyncParentBeingDeletedStartsNoRun(t *testing.T) {
	for _, finalizing := range []bool{false, true} {
		t.Run(fmt.Sprintf("finalizing %t", finalizing), func(t *testing.T) {
			p := newParent("0 * * * *")
			p.Status.NextRun = metaTime("2024-06-03T11:00:00Z")
			deleted := metaTime("2024-06-03T10:59:00Z")
			p.DeletionTimestamp = &deleted
			r := runAt(at("2024-06-03T10:00:00Z"), v1beta2.ApplicationStateRunning)
			req := request(t, p, r)
			req.Finalizing = finalizing
			resp, res, err := Sync(req, at("2024-06-03T11:00:05Z"), Config{})
			require.NoError(t, err)
			assert.False(t, res.Submitted)
			assert.Equal(t, []string{r.name}, childNames(resp))
			assert.Equal(t, "being deleted: no new runs are started", status(resp).Reason)
			assert.False(t, resp.Finalized, "the runs are kept, so nothing is finalized")
		})
	}
}

// TestSyncSimulatedDays drives three days of syncs at irregular times, with runs that take a
// while and sometimes fail, and checks the promises of each policy.
func TestSyncSimulatedDays(t *testing.T) {
	for _, policy := range []v1beta2.ConcurrencyPolicy{v1beta2.ConcurrencyAllow, v1beta2.ConcurrencyForbid, v1beta2.ConcurrencyReplace} {
		t.Run(string(policy), func(t *testing.T) {
			p := newParent("*/20 * * * *")
			p.Spec.ConcurrencyPolicy = policy
			p.Spec.SuccessfulRunHistoryLimit = ptr.To[int32](3)
			p.Spec.FailedRunHistoryLimit = ptr.To[int32](2)
			start := at("2024-06-03T00:00:00Z")
			w := newWorld(t, p, start)
			rng := rand.New(rand.NewPCG(7, uint64(len(policy))))
			startedAt := map[string]time.Time{}
			maxActive := 0
			const days = 3
			// Every 20 minutes, except 00:00 on the first day: the object is new then.
			scheduled := days*24*3 - 1
			for w.now.Before(start.Add(days * 24 * time.Hour)) {
				for name, r := range w.runs {
					if _, ok := startedAt[name]; !ok {
						startedAt[name] = w.now
					}
					// Runs take 5 to 45 minutes; one in five fails.
					if r.state == "" && w.now.Sub(startedAt[name]) > time.Duration(5+rng.IntN(40))*time.Minute {
						r.state = v1beta2.ApplicationStateCompleted
						if rng.IntN(5) == 0 {
							r.state = v1beta2.ApplicationStateFailed
						}
					}
				}
				w.sync()
				active := 0
				for _, r := range w.runs {
					if r.state == "" {
						active++
					}
				}
				maxActive = max(maxActive, active)
				w.now = w.now.Add(time.Duration(1+rng.IntN(9)) * time.Minute).Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
			}

			seen := map[string]bool{}
			for _, at := range w.createdAt {
				key := at.String()
				assert.False(t, seen[key], "two runs for %s", key)
				seen[key] = true
				assert.Zero(t, at.Minute()%20, "run at %s is off schedule", at)
			}
			assert.Equal(t, w.created, slices.Sorted(slices.Values(w.created)), "run names grow with time")
			switch policy {
			case v1beta2.ConcurrencyAllow:
				assert.Equal(t, scheduled, len(w.created), "syncs every few minutes start every time")
				assert.Greater(t, maxActive, 1)
			case v1beta2.ConcurrencyForbid:
				assert.Equal(t, 1, maxActive, "Forbid never has two active runs")
				assert.Less(t, len(w.created), scheduled)
			case v1beta2.ConcurrencyReplace:
				assert.Equal(t, 1, maxActive, "Replace leaves one active run")
				assert.Equal(t, scheduled, len(w.created))
			}
			assert.LessOrEqual(t, len(w.parent.Status.PastSuccessfulRunNames), 3)
			assert.LessOrEqual(t, len(w.parent.Status.PastFailedRunNames), 2)
		})
	}
}

// A spec value of the wrong JSON type, which the CRD lets through inside the schemaless pod
// templates, is the user's error: FailedValidation naming the field, runs kept.
func TestSpecThatDoesNotDecodeFailsValidation(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(spec map[string]any)
		want   string
	}{
		{"schedule a number", func(spec map[string]any) { spec["schedule"] = 5 }, "spec.schedule: Invalid value: must be a string, not a number"},
		{"template containers a string", func(spec map[string]any) {
			spec["template"].(map[string]any)["driver"] = map[string]any{"template": map[string]any{"spec": map[string]any{"containers": "spark"}}}
		}, "spec.template.driver.template.spec.containers: Invalid value: must be a list, not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, jsonRoundTrip(request(t, newParent("@hourly")), &m))
			tt.mutate(m["parent"].(map[string]any)["spec"].(map[string]any))
			resp, _, err := Sync(decodeSyncRequest(t, m), at("2024-06-03T10:00:00Z"), Config{})
			require.NoError(t, err)
			var status v1beta2.ScheduledSparkApplicationStatus
			require.NoError(t, jsonRoundTrip(resp.Status, &status))
			assert.Equal(t, v1beta2.ScheduleStateFailedValidation, status.ScheduleState)
			assert.Equal(t, tt.want, status.Reason)
		})
	}
}
