package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// The hook must read any zone a user names, even in an image without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cronSchedule is a parsed schedule in its zone. Exactly one of spec and every is set.
type cronSchedule struct {
	expr  string // without the zone prefix
	spec  *cron.SpecSchedule
	every time.Duration
}

// describe says how the schedule was read, for the ScheduleValid condition.
func (s *cronSchedule) describe() string {
	if s.spec == nil {
		return fmt.Sprintf("runs every %s", s.every)
	}
	return fmt.Sprintf("runs at %q in time zone %s", s.expr, s.spec.Location)
}

// parseSchedule parses a schedule string, read in timeZone unless it carries its own
// CRON_TZ=/TZ= prefix, and checks that it fires after now.
func parseSchedule(schedule, timeZone string, now time.Time) (*cronSchedule, field.ErrorList) {
	specPath := field.NewPath("spec")
	loc, err := loadLocation(timeZone)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(specPath.Child("timeZone"), timeZone, err.Error())}
	}
	expr, prefixZone, hasPrefix, err := splitZonePrefix(strings.TrimSpace(schedule))
	if err == nil && hasPrefix {
		loc, err = loadLocation(prefixZone)
	}
	var s *cronSchedule
	if err == nil {
		s, err = parseExpr(expr, loc)
	}
	if err == nil && s.nextAfter(now).IsZero() {
		err = errors.New("the schedule matches no time in the next five years")
	}
	if err != nil {
		return nil, field.ErrorList{field.Invalid(specPath.Child("schedule"), schedule, err.Error())}
	}
	return s, nil
}

// splitZonePrefix separates a leading CRON_TZ=<zone> or TZ=<zone> from the expression.
// robfig/cron does this too, but panics when nothing follows the zone.
func splitZonePrefix(schedule string) (expr, zone string, ok bool, err error) {
	var rest string
	switch {
	case strings.HasPrefix(schedule, "CRON_TZ="):
		rest = strings.TrimPrefix(schedule, "CRON_TZ=")
	case strings.HasPrefix(schedule, "TZ="):
		rest = strings.TrimPrefix(schedule, "TZ=")
	default:
		return schedule, "", false, nil
	}
	zone, expr, found := strings.Cut(rest, " ")
	expr = strings.TrimSpace(expr)
	if !found || expr == "" {
		return "", "", false, errors.New("a CRON_TZ= or TZ= prefix must be followed by a space and the schedule")
	}
	if zone == "" {
		return "", "", false, errors.New("the CRON_TZ= or TZ= prefix names no time zone")
	}
	return expr, zone, true, nil
}

// loadLocation resolves an IANA zone name; "" is UTC. "Local" is refused: it would be the zone
// of whichever hook replica answers, not something the user chose.
func loadLocation(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, errors.New(`"Local" is the operator's own time zone; name an IANA zone such as UTC or Europe/Paris`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as UTC or America/New_York", name)
	}
	return loc, nil
}

// parseExpr parses an expression without a zone prefix.
func parseExpr(expr string, loc *time.Location) (s *cronSchedule, err error) {
	if strings.HasPrefix(expr, "@every") {
		return parseEvery(expr)
	}
	defer func() {
		// A third-party parser reading user input must not take the hook down with it.
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cannot parse the schedule: %v", r)
		}
	}()
	parsed, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, err
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("unsupported schedule %q", expr)
	}
	spec.Location = loc
	return &cronSchedule{expr: expr, spec: spec}, nil
}

// parseEvery reads "@every <duration>". robfig/cron silently turns durations under a second,
// zero and negative ones into one second; such a value is a typo, not a wish for a run per
// second.
func parseEvery(expr string) (*cronSchedule, error) {
	arg, ok := strings.CutPrefix(expr, "@every ")
	if !ok {
		return nil, errors.New(`"@every" needs a duration, for example "@every 30m"`)
	}
	d, err := time.ParseDuration(strings.TrimSpace(arg))
	if err != nil {
		return nil, fmt.Errorf("@every: %w", err)
	}
	if d < time.Second {
		return nil, fmt.Errorf("@every %s: the interval must be at least 1s", d)
	}
	return &cronSchedule{expr: expr, every: cron.Every(d).Delay}, nil
}

// nextAfter is the first scheduled time strictly after t, zero if none within five years.
// For @every the times are counted from t itself.
func (s *cronSchedule) nextAfter(t time.Time) time.Time {
	if s.spec != nil {
		return s.spec.Next(t)
	}
	return cron.Every(s.every).Next(t)
}

// holds reports whether n, a stored nextRun, still belongs to this schedule at now: a future
// time must be the schedule's next one (an interval's next one at the latest), a past time
// must be one of its times. A time that does not hold comes from an edited schedule.
func (s *cronSchedule) holds(n, now time.Time) bool {
	if n.After(now) {
		next := s.nextAfter(now)
		if s.spec != nil {
			return n.Equal(next)
		}
		return !n.After(next)
	}
	if s.spec != nil {
		return s.spec.Next(n.Add(-time.Second)).Equal(n)
	}
	return true
}

// latest is the last scheduled time in [from, now], where from is a scheduled time not after
// now. It searches backwards from now in doubling windows, so a long outage costs a few dozen
// calls to Next rather than one per missed time.
func (s *cronSchedule) latest(from, now time.Time) time.Time {
	gap := now.Sub(from)
	if s.spec == nil {
		return from.Add(gap / s.every * s.every)
	}
	for window := time.Minute; ; {
		start := now.Add(-window)
		if window >= gap {
			start = from.Add(-time.Second)
		}
		t := s.spec.Next(start)
		if !t.IsZero() && !t.After(now) {
			for next := s.spec.Next(t); !next.IsZero() && !next.After(now); next = s.spec.Next(t) {
				t = next
			}
			return t
		}
		if window >= gap {
			return from // not reached while from is one of the schedule's times
		}
		if window > gap/2 {
			window = gap
		} else {
			window *= 2
		}
	}
}
