package schedule

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// FuzzSync feeds arbitrary schedules and time zones through two syncs, the second after a long
// outage so that the catch-up search runs too. It must never panic or fail the request: a bad
// schedule is a FailedValidation status, a good one a nextRun after now.
func FuzzSync(f *testing.F) {
	seeds := []struct{ schedule, timeZone string }{
		{"0 3 * * *", ""}, {"@every 5m", "UTC"}, {"@hourly", "America/New_York"},
		{"CRON_TZ=Europe/Paris 30 2 * * *", ""}, {"TZ=", ""}, {"TZ=UTC", ""}, {"CRON_TZ= ", ""},
		{"@every 1s", ""}, {"@every -1h", ""}, {"@every 2562047h", ""}, {"0 0 30 2 *", ""},
		{"* * * * * *", ""}, {"1-100000000000000000000 * * * *", ""}, {"0-59/60 * * * ?", ""},
		{"5/70 * * * *", ""}, {"@every 1h", "Local"}, {"0 3 * * *", "../../etc/passwd"},
		{"\x00", ""}, {"@", ""}, {"0 0 29 2 MON", "Australia/Lord_Howe"},
	}
	for _, s := range seeds {
		f.Add(s.schedule, s.timeZone)
	}
	now := time.Date(2024, 6, 3, 10, 20, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, schedule, timeZone string) {
		if !utf8.ValidString(schedule) || !utf8.ValidString(timeZone) {
			t.Skip("the API server only stores UTF-8")
		}
		p := newParent(schedule)
		p.Spec.TimeZone = timeZone
		p.Spec.ConcurrencyPolicy = v1beta2.ConcurrencyForbid

		resp, res, err := Sync(request(t, p), now, Config{})
		require.NoError(t, err)
		st := status(resp)
		require.LessOrEqual(t, len(st.Reason), maxReason)
		require.False(t, res.Created, "a new object does not run at once")
		if res.ValidationFailed {
			require.Equal(t, v1beta2.ScheduleStateFailedValidation, st.ScheduleState)
			require.NotEmpty(t, st.Reason)
			return
		}
		require.Equal(t, v1beta2.ScheduleStateScheduled, st.ScheduleState)
		require.True(t, st.NextRun.After(now), "nextRun %s", st.NextRun)

		// Down for 400 days: one run, for the latest time missed.
		p.Status = *st
		later := now.Add(400 * 24 * time.Hour)
		due := !st.NextRun.After(later)
		resp, res, err = Sync(request(t, p), later, Config{})
		require.NoError(t, err)
		if res.ValidationFailed {
			return // e.g. no time left in the next five years
		}
		require.Equal(t, due, res.Created)
		require.Len(t, resp.Children, map[bool]int{true: 1}[due])
		st = status(resp)
		require.False(t, st.LastRun.After(later))
		require.True(t, st.NextRun.After(later))
	})
}
