package schedule

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// FuzzSync feeds arbitrary schedules and time zones through two syncs of a new object, the
// second after a long outage so that the catch-up search runs too: a bad schedule is a
// FailedValidation status, a good one a nextRun after now. Then it syncs an object with the
// same schedule and up to eight observed runs, each in any state, named, labelled, deleted or
// null as the runs bytes say (see fuzzRequest), under any policy, history limits and nextRun.
// No sync may panic or fault, and every 200 answer must keep the invariant (checkInvariant).
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
		f.Add(s.schedule, s.timeZone, uint8(0), []byte(nil), int64(0), int64(0), uint16(0))
	}
	// now is 10:20:30; runs are three bytes each: age in quarter hours before 10:15, state
	// index, shape bits; nextRun is in minutes after 10:00 (fuzzRequest).
	f.Add("*/15 * * * *", "", uint8(2), []byte{1, 2, 0, 2, 4, 0}, int64(0), int64(0), uint16(0))                         // Replace, due
	f.Add("*/15 * * * *", "", uint8(1), []byte{1, 2, 0}, int64(0), int64(0), uint16(0))                                  // Forbid, due
	f.Add("*/15 * * * *", "", uint8(2), []byte{0, 3, 0, 1, 2, 0}, int64(0), int64(0), uint16(0))                         // Replace, due run already made
	f.Add("*/15 * * * *", "", uint8(2), []byte{1, 2, 1, 2, 2, 8}, int64(0), int64(0), uint16(0))                         // deleting, foreign
	f.Add("0 * * * *", "", uint8(0), []byte{1, 3, 0, 2, 4, 0, 3, 5, 0, 4, 3, 0}, int64(60), int64(0), uint16(1<<4|1<<6)) // pruning to 0
	f.Add("0 * * * *", "", uint8(0), []byte{1, 2, 32, 2, 2, 16, 3, 2, 2}, int64(-60), int64(0), uint16(1))               // suspended, null, other label
	f.Add("0 * * * *", "", uint8(2), []byte{1, 2, 128, 2, 2, 70}, int64(-120), int64(60), uint16(1<<8))                  // Kubeflow names, deadline
	f.Add("@every 1m", "", uint8(2), []byte{1, 2, 0}, int64(-1), int64(0), uint16(1<<1|1<<2|1<<3))                       // deleted, finalizing, long name
	f.Add("@every 1m", "", uint8(2), []byte{1, 2, 0}, int64(-1), int64(0), uint16(1<<2))                                 // finalizing only

	now := time.Date(2024, 6, 3, 10, 20, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, schedule, timeZone string, policy uint8, runs []byte, nextRun, deadline int64, flags uint16) {
		if !utf8.ValidString(schedule) || !utf8.ValidString(timeZone) {
			t.Skip("the API server only stores UTF-8")
		}
		fuzzNewObject(t, schedule, timeZone, now)

		req, wantBad := fuzzRequest(t, schedule, timeZone, policy, runs, nextRun, deadline, flags, now)
		body := coretest.MustJSON(t, req)
		resp, _, err := Sync(req, now, Config{})
		if wantBad {
			var bad *metacontroller.RequestError
			require.ErrorAs(t, err, &bad)
			return
		}
		require.NoError(t, err, "only finalizing a parent not being deleted is a bad request here, and no decision may be refused")
		require.NoError(t, checkInvariant(body, resp))
	})
}

// fuzzNewObject syncs a new object, then again after 400 days down.
func fuzzNewObject(t *testing.T, schedule, timeZone string, now time.Time) {
	p := newParent(schedule)
	p.Spec.TimeZone = timeZone
	p.Spec.ConcurrencyPolicy = v1beta2.ConcurrencyForbid

	resp, res, err := Sync(request(t, p), now, Config{})
	require.NoError(t, err)
	st := status(resp)
	require.LessOrEqual(t, len(st.Reason), maxReason)
	require.False(t, res.Submitted, "a new object does not run at once")
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
	require.Equal(t, due, res.Submitted)
	require.Len(t, resp.Children, map[bool]int{true: 1}[due])
	st = status(resp)
	require.False(t, st.LastRun.After(later))
	require.True(t, st.NextRun.After(later))
}

var fuzzPolicies = []v1beta2.ConcurrencyPolicy{
	v1beta2.ConcurrencyAllow, v1beta2.ConcurrencyForbid, v1beta2.ConcurrencyReplace, "", "replace",
}

// fuzzStates are the states a run is given; "" leaves the status out.
var fuzzStates = []v1beta2.ApplicationStateType{
	v1beta2.ApplicationStateNew, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning,
	v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission,
	v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateInvalidating, v1beta2.ApplicationStateSucceeding,
	v1beta2.ApplicationStateFailing, v1beta2.ApplicationStateSuspending, v1beta2.ApplicationStateSuspended,
	v1beta2.ApplicationStateResuming, v1beta2.ApplicationStateUnknown, "completed", "DANCING",
}

// fuzzRequest builds a sync request from the fuzzer's numbers, and tells whether only a 400
// is right for it.
//
// flags: 1 suspend, 1<<1 parent being deleted, 1<<2 finalizing, 1<<3 a parent name too long
// for plain run names, 1<<4..1<<5 and 1<<6..1<<7 the successful and failed history limits
// (unset, 0, 1, MaxInt32), 1<<8 startingDeadlineSeconds = deadline, 1<<9 no status.nextRun
// (else nextRun minutes after the hour now is in, within three years: a past nextRun counts
// only on one of the schedule's times, which are whole minutes).
//
// runs, three bytes a run (eight at most): its scheduled time in quarter hours before now
// (from 200 on, after now), its state (fuzzStates), and its shape: 1 being deleted, 1<<1 no
// schedule label, 1<<2 no scheduled-time annotation, 1<<3 a name the schedule would not give,
// 1<<4 the label of another schedule, 1<<5 a null object, 1<<6 no creationTimestamp, 1<<7
// named in nanoseconds as the Kubeflow operator did.
func fuzzRequest(t *testing.T, schedule, timeZone string, policy uint8, runs []byte, nextRun, deadline int64, flags uint16, now time.Time) (*metacontroller.SyncRequest, bool) {
	limit := func(bits uint16) *int32 {
		return []*int32{nil, ptr.To[int32](0), ptr.To[int32](1), ptr.To[int32](math.MaxInt32)}[bits&3]
	}
	p := newParent(schedule)
	p.Spec.TimeZone = timeZone
	p.Spec.ConcurrencyPolicy = fuzzPolicies[int(policy)%len(fuzzPolicies)]
	p.Spec.Suspend = ptr.To(flags&1 != 0)
	p.Spec.SuccessfulRunHistoryLimit = limit(flags >> 4)
	p.Spec.FailedRunHistoryLimit = limit(flags >> 6)
	if flags&(1<<1) != 0 {
		p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Minute)))
	}
	if flags&(1<<3) != 0 {
		p.Name = "nightly-pi-" + strings.Repeat("x", 50)
	}
	if flags&(1<<8) != 0 {
		p.Spec.StartingDeadlineSeconds = ptr.To(deadline)
	}
	if flags&(1<<9) == 0 {
		const threeYears = 3 * 365 * 24 * 60
		p.Status.NextRun = metav1.NewTime(now.Truncate(time.Hour).Add(time.Duration(nextRun%threeYears) * time.Minute))
	}
	p.Status.ScheduleState = v1beta2.ScheduleStateScheduled

	base := now.Truncate(15 * time.Minute)
	var observed []*observedRun
	var nulls []string
	for i := 0; i+2 < len(runs) && i < 24; i += 3 {
		age, state, shape := runs[i], runs[i+1], runs[i+2]
		at := base.Add(-time.Duration(age) * 15 * time.Minute)
		if age >= 200 {
			at = base.Add(time.Duration(age-199) * 15 * time.Minute)
		}
		r := &observedRun{
			name:    runName(p.Name, at),
			labels:  map[string]string{LabelScheduledAppName: p.Name},
			annots:  map[string]string{AnnotationScheduledTime: at.Format(time.RFC3339)},
			created: at,
			state:   fuzzStates[int(state)%len(fuzzStates)],
		}
		if shape&1 != 0 {
			r.deleted = ptr.To(now.Add(-time.Second))
		}
		if shape&(1<<1) != 0 {
			delete(r.labels, LabelScheduledAppName)
		}
		if shape&(1<<2) != 0 {
			r.annots = nil
		}
		if shape&(1<<3) != 0 {
			r.name = fmt.Sprintf("adhoc-%d", i/3)
		}
		if shape&(1<<4) != 0 {
			r.labels[LabelScheduledAppName] = "another-schedule"
		}
		if shape&(1<<6) != 0 {
			r.created = time.Time{}
		}
		if shape&(1<<7) != 0 {
			r.name = fmt.Sprintf("%s-%d", p.Name, at.UnixNano())
		}
		if shape&(1<<5) != 0 {
			nulls = append(nulls, r.name)
			continue
		}
		observed = append(observed, r)
	}
	req := request(t, p, observed...)
	for _, name := range nulls {
		req.Children[ChildKey][name] = json.RawMessage("null")
	}
	req.Finalizing = flags&(1<<2) != 0
	return req, req.Finalizing && p.DeletionTimestamp == nil
}
