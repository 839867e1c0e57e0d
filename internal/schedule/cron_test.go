package schedule

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
)

var parseNow = time.Date(2024, 6, 3, 10, 20, 30, 0, time.UTC)

func TestParseSchedule(t *testing.T) {
	tests := []struct {
		schedule, timeZone string
		next               string // first time after parseNow
	}{
		{"0 3 * * *", "", "2024-06-04T03:00:00Z"},
		{"  0 3 * * *  ", "", "2024-06-04T03:00:00Z"},
		{"0 3 * * *", "Europe/Paris", "2024-06-04T01:00:00Z"},
		{"CRON_TZ=Asia/Kolkata 0 3 * * *", "", "2024-06-03T21:30:00Z"},
		{"TZ=Asia/Kolkata 0 3 * * *", "Europe/Paris", "2024-06-03T21:30:00Z"}, // the prefix wins
		{"CRON_TZ=UTC   @hourly", "", "2024-06-03T11:00:00Z"},
		{"@daily", "America/New_York", "2024-06-04T04:00:00Z"},
		{"@weekly", "", "2024-06-09T00:00:00Z"},
		{"@monthly", "", "2024-07-01T00:00:00Z"},
		{"@yearly", "", "2025-01-01T00:00:00Z"},
		{"@every 5m", "", "2024-06-03T10:25:30Z"},
		{"@every 1h30m10.5s", "Europe/Paris", "2024-06-03T11:50:40Z"},
		{"*/15 9-17 * * MON-FRI", "", "2024-06-03T10:30:00Z"},
		{"0 0 29 2 *", "", "2028-02-29T00:00:00Z"},
		{"0 12 * JAN,JUL SUN", "", "2024-07-07T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.schedule+"/"+tt.timeZone, func(t *testing.T) {
			s, errs := parseSchedule(tt.schedule, tt.timeZone, parseNow)
			require.Empty(t, errs)
			assert.Equal(t, at(tt.next), s.nextAfter(parseNow).UTC())
		})
	}
}

func TestParseScheduleErrors(t *testing.T) {
	tests := []struct {
		schedule, timeZone string
		field, msg         string
	}{
		{"", "", "spec.schedule", "empty spec string"},
		{"0 3 * *", "", "spec.schedule", "expected exactly 5 fields, found 4"},
		{"0 0 3 * * *", "", "spec.schedule", "expected exactly 5 fields, found 6"},
		{"60 * * * *", "", "spec.schedule", "above maximum (59)"},
		{"*/0 * * * *", "", "spec.schedule", "step of range should be a positive number"},
		{"@fortnightly", "", "spec.schedule", "unrecognized descriptor"},
		{"@every", "", "spec.schedule", `"@every" needs a duration`},
		{"@every ten minutes", "", "spec.schedule", `@every: time: invalid duration`},
		{"@every 0s", "", "spec.schedule", "must be at least 1s"},
		{"@every -5m", "", "spec.schedule", "must be at least 1s"},
		{"@every 500ms", "", "spec.schedule", "must be at least 1s"},
		{"CRON_TZ=UTC", "", "spec.schedule", "must be followed by a space and the schedule"},
		{"CRON_TZ=", "", "spec.schedule", "must be followed by a space and the schedule"},
		{"TZ= 0 * * * *", "", "spec.schedule", "names no time zone"},
		{"CRON_TZ=Moon/Base 0 * * * *", "", "spec.schedule", `unknown time zone "Moon/Base"`},
		{"CRON_TZ=Local 0 * * * *", "", "spec.schedule", `"Local" is the operator's own time zone`},
		{"0 0 30 2 *", "", "spec.schedule", "matches no time in the next five years"},
		{"0 3 * * *", "Local", "spec.timeZone", `"Local" is the operator's own time zone`},
		{"0 3 * * *", "Europe/Pariss", "spec.timeZone", `unknown time zone "Europe/Pariss"`},
		{"0 3 * * *", "../../etc/passwd", "spec.timeZone", "unknown time zone"},
	}
	for _, tt := range tests {
		t.Run(tt.schedule+"/"+tt.timeZone, func(t *testing.T) {
			s, errs := parseSchedule(tt.schedule, tt.timeZone, parseNow)
			assert.Nil(t, s)
			require.Len(t, errs, 1)
			assert.Equal(t, tt.field, errs[0].Field)
			assert.Contains(t, errs[0].Error(), tt.msg)
		})
	}
}

func TestValidate(t *testing.T) {
	ssa := newParent("0 3 * * *")
	ssa.Spec.TimeZone = "Europe/Paris"
	assert.Empty(t, Validate(ssa, parseNow))

	bad := ssa.DeepCopy()
	bad.Spec.Schedule = "0 3 * * * *"
	errs := Validate(bad, parseNow)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.schedule", errs[0].Field)

	// Valid as written, but every run would get the default 1g heap, above this limit.
	lowLimit := ssa.DeepCopy()
	lowLimit.Spec.Template.Executor.Memory = nil
	lowLimit.Spec.Template.Executor.MemoryLimit = ptr.To("512Mi")
	errs = Validate(lowLimit, parseNow)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.template.executor.memoryLimit", errs[0].Field)
	assert.Nil(t, lowLimit.Spec.Template.Executor.Memory, "the object must not be defaulted in place")
}

// TestLatestMatchesBruteForce compares the backwards search with walking every scheduled time.
func TestLatestMatchesBruteForce(t *testing.T) {
	exprs := []string{
		"* * * * *", "*/7 * * * *", "0 * * * *", "30 2 * * *", "0 9-17 * * MON-FRI", "0 0 1 * *",
		"* 0 * * *", "0 0 29 2 *", "15 3 * JAN *", "@every 17m", "@every 25h",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, expr := range exprs {
		for _, zone := range []string{"UTC", "America/New_York", "Australia/Lord_Howe"} {
			s, errs := parseSchedule(expr, zone, parseNow)
			require.Empty(t, errs, expr)
			for range 10 {
				from := s.nextAfter(parseNow.Add(-time.Duration(rng.Int64N(int64(3 * 365 * 24 * time.Hour)))))
				// Gaps from a minute to 40 days, log-uniform, keep the brute force affordable.
				gap := math.Exp(math.Log(60) + rng.Float64()*math.Log(40*24*60))
				now := from.Add(time.Duration(gap * float64(time.Second)))
				want := from
				for next := s.nextAfter(from); !next.After(now); next = s.nextAfter(next) {
					want = next
				}
				assert.Equal(t, want, s.latest(from, now), "%s in %s from %s to %s", expr, zone, from, now)
			}
		}
	}
}

func TestHolds(t *testing.T) {
	daily, _ := parseSchedule("0 3 * * *", "", parseNow)
	every, _ := parseSchedule("@every 10m", "", parseNow)
	tests := []struct {
		name string
		s    *cronSchedule
		n    string
		want bool
	}{
		{"the next time", daily, "2024-06-04T03:00:00Z", true},
		{"a later time", daily, "2024-06-05T03:00:00Z", false},
		{"a future time not scheduled", daily, "2024-06-04T04:00:00Z", false},
		{"a past scheduled time", daily, "2024-05-01T03:00:00Z", true},
		{"a past time not scheduled", daily, "2024-06-03T10:00:00Z", false},
		{"every: within one interval", every, "2024-06-03T10:30:30Z", true},
		{"every: beyond one interval", every, "2024-06-03T10:30:31Z", false},
		{"every: any past time", every, "2024-06-03T09:01:17Z", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.s.holds(at(tt.n), parseNow))
		})
	}
}
