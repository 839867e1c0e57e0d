package sparkapp

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// Condition types in status.conditions: the Apache Spark Kubernetes Operator's finer phases of
// an attempt, next to the Kubeflow applicationState.
const (
	condSpecValid       = "SpecValid"
	condDriverRequested = "DriverRequested"
	condDriverStarted   = "DriverStarted"
	condDriverReady     = "DriverReady"
	condExecutorsReady  = "ExecutorsReady"
	condDriverMissing   = "DriverMissing"
	condTimedOut        = "TimedOut"
	condFailed          = "Failed"
	condComplete        = "Complete"
	condExecutorFailed  = "ExecutorFailed"
	condExpired         = "Expired"
)

// Condition reasons that the decision reads back.
const (
	reasonInvalidSpec       = "InvalidSpec"
	reasonBuildFailed       = "BuildFailed"
	reasonExecutorsStarting = "Starting"
	reasonExecutorsBelow    = "BelowMinimum"
	reasonExecutorsReleased = "Released"
	reasonAttemptEnded      = "AttemptEnded"
	reasonRetryScheduled    = "RetryScheduled"
)

// attemptEndedMessages retire the conditions of a running attempt once it has ended: whatever
// its last sync saw (two executors running, none yet), an ended attempt has none.
var attemptEndedMessages = map[string]string{
	condDriverStarted:  "the attempt ended before the driver started",
	condDriverReady:    "the attempt has ended",
	condExecutorsReady: "the attempt has ended; executorState says how each executor ended",
}

// settleConditions keeps the conditions in line with the state the sync decided: the ones an
// ended attempt leaves are retired, and Complete or Failed say how the application ended, so
// that kubectl wait --for=condition=Complete (or Failed) returns when, and only when, it has.
// Failed is False with reason RetryScheduled while a failed attempt waits for its retry: the
// application has not failed yet.
func (d *decider) settleConditions() {
	st := d.status.AppState.State
	// Dated by the termination, not the clock, so that a stale sync deciding the same end again
	// writes the same condition.
	ended := d.status.TerminationTime.Time
	if ended.IsZero() {
		ended = d.now
	}
	if !activeStates[st] {
		for _, typ := range []string{condDriverStarted, condDriverReady, condExecutorsReady} {
			c := d.condition(typ)
			if c == nil || c.Reason == reasonAttemptEnded || (typ == condDriverStarted && c.Status == metav1.ConditionTrue) {
				continue
			}
			d.setCondition(typ, metav1.ConditionFalse, reasonAttemptEnded, attemptEndedMessages[typ], ended)
		}
	}
	switch {
	case st == v1beta2.ApplicationStateCompleted:
		d.removeCondition(condFailed)
		if d.condition(condComplete) == nil {
			d.setCondition(condComplete, metav1.ConditionTrue, ReasonAppSucceeded,
				fmt.Sprintf("attempt %d completed", d.status.SubmissionAttempts), ended)
		}
	case d.retry != "":
		d.removeCondition(condComplete)
		d.setCondition(condFailed, metav1.ConditionFalse, reasonRetryScheduled,
			d.failedReason()+": "+d.status.AppState.ErrorMessage+"; "+d.retry, ended)
	case st == v1beta2.ApplicationStateFailed || st == v1beta2.ApplicationStateFailedSubmission && d.failedForGood():
		d.removeCondition(condComplete)
		if c := d.condition(condFailed); c == nil || c.Status != metav1.ConditionTrue {
			d.setCondition(condFailed, metav1.ConditionTrue, d.failedReason(), d.status.AppState.ErrorMessage, ended)
		}
	case st == v1beta2.ApplicationStateFailing || st == v1beta2.ApplicationStatePendingRerun || st == v1beta2.ApplicationStateFailedSubmission:
		// Waiting out a retry decided before: the condition that sync set stays.
	default:
		d.removeCondition(condComplete, condFailed)
	}
}

// failedForGood is true for a submission failure that no retry follows until the spec changes.
func (d *decider) failedForGood() bool {
	c := d.condition(condDriverRequested)
	return c != nil && (c.Reason == reasonInvalidSpec || c.Reason == reasonBuildFailed)
}

// failedReason names the failure of an application that has failed for good: the failure this
// sync decided, else the submission's.
func (d *decider) failedReason() string {
	if d.failReason != "" {
		return d.failReason
	}
	if c := d.condition(condDriverRequested); c != nil && c.Status == metav1.ConditionFalse {
		return c.Reason
	}
	return ReasonAppFailed
}

// setCondition sets a condition; at is its lastTransitionTime when the status flips. Taking
// the instant from what was observed (a container's start, the Pod's Ready transition) rather
// than from the clock keeps repeated syncs byte-identical.
func (d *decider) setCondition(typ string, status metav1.ConditionStatus, reason, msg string, at time.Time) {
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	meta.SetStatusCondition(&d.status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		ObservedGeneration: d.in.app.Generation,
		LastTransitionTime: metav1.NewTime(at.UTC().Truncate(time.Second)),
	})
}

// removeCondition drops conditions in place: meta.RemoveStatusCondition copies the slice on
// every call, even for a type that is absent, and the answer path counts its allocations.
func (d *decider) removeCondition(types ...string) {
	kept := d.status.Conditions[:0]
	for _, c := range d.status.Conditions {
		if !slices.Contains(types, c.Type) {
			kept = append(kept, c)
		}
	}
	clear(d.status.Conditions[len(kept):])
	d.status.Conditions = kept
	if len(d.status.Conditions) == 0 {
		d.status.Conditions = nil
	}
}

func (d *decider) condition(typ string) *metav1.Condition {
	return meta.FindStatusCondition(d.status.Conditions, typ)
}

// reasonPattern is the CRD's pattern for condition reasons; a kubelet waiting reason outside it
// would make the whole status invalid.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

func conditionReason(s string) string {
	if len(s) <= 1024 && reasonPattern.MatchString(s) {
		return s
	}
	return "Waiting"
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
