package schedule

import (
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Config holds the operator-wide settings of the schedule decision.
type Config struct {
	// MaxResync bounds resyncAfterSeconds, so that clock steps and missed watch events are
	// caught up with; 0 means one hour.
	MaxResync time.Duration
}

// result is what one decision did, for metrics: Sync reports it as a hook.Outcome. From and
// To are status.scheduleState before and after ("" is a new object).
type result struct {
	From, To         string
	Created          bool
	ValidationFailed bool
}

// Condition type and reasons in status.conditions.
const (
	CondScheduleValid = "ScheduleValid"

	reasonValid           = "Valid"
	reasonInvalidSchedule = "InvalidSchedule"
	reasonInvalidTimeZone = "InvalidTimeZone"
	reasonInvalidSpec     = "InvalidSpec"
)

// maxReason caps status.reason, which repeats every validation error.
const maxReason = 1024

// Hooks are the ScheduledSparkApplication's hooks with the settings cfg: a sync alone, since
// its runs are SparkApplications that finalize themselves.
func Hooks(cfg Config) hook.Kind {
	return hook.Kind{
		Name: "scheduledsparkapplication",
		Sync: func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
			return Sync(req, now, cfg)
		},
	}
}

// Sync decides the desired SparkApplication runs and the status of one
// ScheduledSparkApplication at now. A request that cannot be understood gives an error whose
// BadRequest method returns true; an answer that would delete a run still working or a child
// the schedule did not make is refused instead (metacontroller.Refusal).
func Sync(req *metacontroller.SyncRequest, now time.Time, cfg Config) (*metacontroller.SyncResponse, hook.Outcome, error) {
	in, err := decodeRequest(req)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	told := newTeller(in.ssa)
	if cfg.MaxResync <= 0 {
		cfg.MaxResync = time.Hour
	}
	// keep is edited in place (Replace, pruning); in.runs stays what was observed, for the
	// final check.
	d := &decider{in: in, now: now.UTC(), cfg: cfg, status: in.ssa.Status, keep: slices.Clone(in.runs)}
	d.decide()
	resp := d.response()
	if err := d.checkKeepsLive(req.Children, resp.Children); err != nil {
		return nil, hook.Outcome{}, err
	}
	return resp, outcome(told, d.result, resp), nil
}

// decider holds one decision in progress.
type decider struct {
	in     *input
	now    time.Time
	cfg    Config
	status v1beta2.ScheduledSparkApplicationStatus
	keep   []run // the runs in the desired set
	resync time.Duration
	result result
}

func (d *decider) decide() {
	ssa := d.in.ssa
	d.result.From = string(ssa.Status.ScheduleState)
	d.status.ObservedGeneration = ssa.Generation
	sched, errs := d.validate()
	if len(errs) > 0 {
		d.failValidation(errs)
	} else {
		d.setCondition(metav1.ConditionTrue, reasonValid, sched.describe())
		d.schedule(sched)
	}
	d.result.To = string(d.status.ScheduleState)
}

// validate checks the whole object, the schedule as this package reads it included.
func (d *decider) validate() (*cronSchedule, field.ErrorList) {
	if len(d.in.specErrs) > 0 {
		return nil, d.in.specErrs
	}
	return validate(d.in.ssa, d.now)
}

// Validate checks a ScheduledSparkApplication exactly as the sync hook does before it schedules
// anything, at now: the object, its template with the defaults the SparkApplication hook gives
// each run, and the schedule and time zone as this package reads them. The admission webhook
// calls it so that it refuses what the hook would report as FailedValidation, and nothing else.
func Validate(ssa *v1beta2.ScheduledSparkApplication, now time.Time) field.ErrorList {
	_, errs := validate(ssa, now)
	return errs
}

func validate(ssa *v1beta2.ScheduledSparkApplication, now time.Time) (*cronSchedule, field.ErrorList) {
	// Each run is a SparkApplication whose hook defaults it before validating; a template valid
	// only without the defaults (a memoryLimit below the default 1g heap) would make every run
	// fail, or be refused by the webhook when Metacontroller creates it.
	defaulted := *ssa
	defaulted.Spec = *ssa.Spec.DeepCopy()
	v1beta2.SetScheduledSparkApplicationDefaults(&defaulted)
	errs := v1beta2.ValidateScheduledSparkApplication(&defaulted)
	if strings.TrimSpace(ssa.Spec.Schedule) == "" {
		return nil, errs // already reported as required
	}
	sched, schedErrs := parseSchedule(ssa.Spec.Schedule, ssa.Spec.TimeZone, now)
	return sched, append(errs, schedErrs...)
}

// failValidation keeps every run and waits for the spec to be fixed; a spec edit triggers the
// next sync, so there is nothing to resync for.
func (d *decider) failValidation(errs field.ErrorList) {
	d.result.ValidationFailed = true
	d.status.ScheduleState = v1beta2.ScheduleStateFailedValidation
	d.status.Reason = truncate(errs.ToAggregate().Error(), maxReason)
	d.status.NextRun = metav1.Time{}
	d.setCondition(metav1.ConditionFalse, invalidReason(errs[0]), d.status.Reason)
	d.recordHistory(false)
}

// schedule is the decision for a valid spec: move nextRun, start the due run if the policy
// lets it, prune the history.
func (d *decider) schedule(sched *cronSchedule) {
	spec := &d.in.ssa.Spec
	d.status.ScheduleState = v1beta2.ScheduleStateScheduled
	d.status.Reason = ""
	next := d.status.NextRun.Time
	if next.IsZero() || !sched.holds(next, d.now) {
		// A new object, a fixed spec or an edited schedule: count from now.
		next = sched.nextAfter(d.now)
	}
	paused := ptrTrue(spec.Suspend) || d.in.ssa.DeletionTimestamp != nil
	switch {
	case paused:
		d.status.Reason = "suspended: no new runs are started"
		if d.in.ssa.DeletionTimestamp != nil {
			d.status.Reason = "being deleted: no new runs are started"
		}
	case !next.After(d.now):
		next = d.runDue(sched, next)
	}
	d.status.NextRun = metav1.NewTime(next)
	d.recordHistory(!paused)
	switch {
	case paused:
		d.resync = 0
	case next.After(d.now):
		d.resync = min(next.Sub(d.now), d.cfg.MaxResync)
	default:
		// Waiting on an active run: its state changes trigger a sync, this is a safety net.
		d.resync = d.cfg.MaxResync
	}
}

// runDue handles a due nextRun: only the latest missed time may still run, once. It returns
// the new nextRun.
func (d *decider) runDue(sched *cronSchedule, next time.Time) time.Time {
	at := sched.latest(next, d.now)
	if sd := d.in.startingDeadline; sd != nil && d.now.Sub(at) > v1beta2.Seconds(*sd) {
		return sched.nextAfter(at)
	}
	name := runName(d.in.ssa.Name, at)
	if slices.ContainsFunc(d.keep, func(r run) bool { return r.name == name }) {
		// Created by an earlier sync whose status write was lost.
		d.recordRun(name, at)
		return sched.nextAfter(at)
	}
	switch d.in.ssa.Spec.ConcurrencyPolicy {
	case v1beta2.ConcurrencyForbid:
		if active := d.activeRuns(); len(active) > 0 {
			d.status.Reason = truncate("concurrencyPolicy Forbid: the due run waits for "+strings.Join(active, ", ")+" to finish", maxReason)
			return next
		}
	case v1beta2.ConcurrencyReplace:
		d.keep = slices.DeleteFunc(d.keep, func(r run) bool { return r.state == runActive })
	}
	d.keep = append(d.keep, run{name: name, at: at, state: runActive})
	d.result.Created = true
	d.recordRun(name, at)
	return sched.nextAfter(at)
}

func (d *decider) recordRun(name string, at time.Time) {
	d.status.LastRun = metav1.NewTime(at)
	d.status.LastRunName = name
}

// activeRuns are the names of kept runs that have not finished, oldest first. A run being
// deleted does not count: it is going away whether or not it finishes.
func (d *decider) activeRuns() []string {
	var names []string
	for _, r := range d.keep {
		if r.state == runActive && !r.deleting {
			names = append(names, r.name)
		}
	}
	return names
}

// recordHistory lists the finished runs kept, newest first. With prune, runs beyond the
// history limits leave the desired set.
func (d *decider) recordHistory(prune bool) {
	spec := &d.in.ssa.Spec
	limits := map[runState]int{
		runSucceeded: historyLimit(spec.SuccessfulRunHistoryLimit),
		runFailed:    historyLimit(spec.FailedRunHistoryLimit),
	}
	names := map[runState][]string{}
	kept := make([]run, 0, len(d.keep))
	for i := len(d.keep) - 1; i >= 0; i-- {
		r := d.keep[i]
		if r.state != runActive {
			if prune && len(names[r.state]) >= limits[r.state] {
				continue
			}
			names[r.state] = append(names[r.state], r.name)
		}
		kept = append(kept, r)
	}
	slices.Reverse(kept)
	d.keep = kept
	d.status.PastSuccessfulRunNames = names[runSucceeded]
	d.status.PastFailedRunNames = names[runFailed]
}

func historyLimit(limit *int32) int {
	if limit == nil {
		return int(v1beta2.DefaultRunHistoryLimit)
	}
	return max(int(*limit), 0)
}

// setCondition sets the ScheduleValid condition. lastTransitionTime moves only when the
// condition's status flips, which keeps repeated syncs byte-identical.
func (d *decider) setCondition(status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&d.status.Conditions, metav1.Condition{
		Type:               CondScheduleValid,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		ObservedGeneration: d.in.ssa.Generation,
		LastTransitionTime: metav1.NewTime(d.now.Truncate(time.Second)),
	})
}

func (d *decider) response() *metacontroller.SyncResponse {
	b := newRunBuilder(d.in.ssa)
	slices.SortFunc(d.keep, func(a, b run) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	children := make([]any, 0, len(d.keep)+len(d.in.foreign))
	for _, r := range d.keep {
		children = append(children, b.build(r.name, r.at))
	}
	for _, f := range d.in.foreign {
		children = append(children, f)
	}
	return &metacontroller.SyncResponse{
		Status:             &d.status,
		Children:           children,
		ResyncAfterSeconds: math.Ceil(d.resync.Seconds()),
	}
}

func invalidReason(err *field.Error) string {
	switch err.Field {
	case "spec.schedule":
		return reasonInvalidSchedule
	case "spec.timeZone":
		return reasonInvalidTimeZone
	}
	return reasonInvalidSpec
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
