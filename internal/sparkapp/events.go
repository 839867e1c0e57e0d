package sparkapp

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Event reasons. The Kubeflow operator's where it has one, since users alert on them; the
// Apache operator's for the executor threshold and Kueue; ours elsewhere.
const (
	EventSubmitted        = "SparkApplicationSubmitted"
	EventSubmissionFailed = "SparkApplicationSubmissionFailed"
	EventCompleted        = "SparkApplicationCompleted"
	EventFailed           = "SparkApplicationFailed"
	EventPendingRerun     = "SparkApplicationPendingRerun"
	EventSuspending       = "SparkApplicationSuspending"
	EventSuspended        = "SparkApplicationSuspended"
	EventResuming         = "SparkApplicationResuming"
	EventDriverPending    = "SparkDriverPending"
	EventDriverRunning    = "SparkDriverRunning"
	EventDriverFailed     = "SparkDriverFailed"
	EventDriverUnknown    = "SparkDriverUnknown"
	EventExecutorRunning  = "SparkExecutorRunning"
	EventExecutorFailed   = "SparkExecutorFailed"

	EventExecutorsBelow    = "RunningWithBelowThresholdExecutors"
	EventAdmissionPending  = "KueueAdmissionPending"
	EventAdmitted          = "KueueAdmitted"
	EventEvicted           = "KueueEvicted"
	EventSpecChanged       = "SparkApplicationSpecChanged"
	EventSpecInvalid       = "SparkApplicationSpecInvalid"
	EventDriverNotStarting = "SparkDriverNotStarting"
	EventExpired           = "SparkApplicationExpired"
	// EventNamespaceNotSelected says why an application does not start.
	EventNamespaceNotSelected = "SparkApplicationNamespaceNotSelected"
	// EventManagedElsewhere says, once, that another controller (spec.managedBy) runs it.
	EventManagedElsewhere = "SparkApplicationManagedElsewhere"
	// EventAdopted and EventDriverNotOwned tell how an attempt the Kubeflow operator submitted
	// was taken over (the Adopted condition).
	EventAdopted        = "SparkApplicationAdopted"
	EventDriverNotOwned = "SparkDriverNotOwned"
)

// Event actions: what sparkhooks did, or saw, about the application.
const (
	actionSubmit   = "Submit"
	actionTrack    = "Track"
	actionRetry    = "Retry"
	actionSuspend  = "Suspend"
	actionResume   = "Resume"
	actionValidate = "Validate"
	actionQueue    = "Queue"
	actionExpire   = "Expire"
)

// newTeller keeps what the Events of this sync are told from: the parent's identity and its
// status as observed, whose conditions the decision edits in place.
func newTeller(app *v1beta2.SparkApplication) hook.Teller[v1beta2.SparkApplicationStatus] {
	observed := app.Status
	observed.Conditions = slices.Clone(observed.Conditions)
	return hook.NewTeller(app.TypeMeta, &app.ObjectMeta, observed, Events)
}

// outcome reports decision d, with Kubeflow's view app of it, and its answer resp.
func outcome(told hook.Teller[v1beta2.SparkApplicationStatus], d decision, app *hook.Application, resp *metacontroller.SyncResponse) hook.Outcome {
	return hook.Outcome{
		Kind:             v1beta2.KindSparkApplication,
		From:             string(d.From),
		To:               string(d.To),
		Submitted:        d.Submitted,
		RestartReason:    d.RestartReason,
		ValidationFailed: d.ValidationFailed,
		Application:      app,
		Story:            told.Story(resp.Status),
	}
}

// Events tells what a sync decided as Kubernetes Events: a pure function of the status the
// request observed and the one the hook answered. It names transitions only, so a sync that
// decides nothing new (a resync, or a retry of a sync whose status was written) tells nothing,
// and one that decides the same transition again (a stale read) tells the same Event, which the
// recorder folds into a series.
func Events(observed, answered *v1beta2.SparkApplicationStatus) []event.Event {
	t := transition{o: observed, a: answered}
	t.specEvents()
	t.queueEvents()
	t.stateEvents()
	t.conditionEvents()
	return t.events
}

type transition struct {
	o, a   *v1beta2.SparkApplicationStatus
	events []event.Event
}

func (t *transition) add(typ, reason, action, msg string) {
	t.events = append(t.events, event.New(typ, reason, action, msg))
}

// changed is the answered condition typ when it differs from the observed one in status,
// reason or message; nil when it is the same or absent.
func (t *transition) changed(typ string) *metav1.Condition {
	a := meta.FindStatusCondition(t.a.Conditions, typ)
	if a == nil {
		return nil
	}
	o := meta.FindStatusCondition(t.o.Conditions, typ)
	if o != nil && o.Status == a.Status && o.Reason == a.Reason && o.Message == a.Message {
		return nil
	}
	return a
}

func (t *transition) wasTrue(typ string) bool {
	return meta.IsStatusConditionTrue(t.o.Conditions, typ)
}

func (t *transition) specEvents() {
	from, to := t.o.AppState.State, t.a.AppState.State
	if c := t.changed(condSpecValid); c != nil && c.Status == metav1.ConditionFalse && to != v1beta2.ApplicationStateFailedSubmission {
		t.add(event.Warning, EventSpecInvalid, actionValidate, "the edited spec is invalid, and the current attempt goes on as it was submitted: "+c.Message)
	}
	resubmitted := t.o.SubmittedSpecHash != "" && t.a.SubmittedSpecHash != "" && t.a.SubmittedSpecHash != t.o.SubmittedSpecHash
	// A spec Kueue edited while it held the application runs as the next attempt, not afresh.
	if t.o.SubmissionAttempts > 0 && t.a.SubmissionAttempts == t.o.SubmissionAttempts+1 {
		resubmitted = false
	}
	if from == v1beta2.ApplicationStateInvalidating || (to != v1beta2.ApplicationStateInvalidating && !resubmitted) {
		return
	}
	msg := "the spec changed: it is submitted afresh, with its attempts counted from 1"
	if activeStates[from] {
		msg = fmt.Sprintf("the spec changed: attempt %d is stopped, and the new spec is submitted once its resources are gone", t.o.SubmissionAttempts)
	}
	t.add(event.Normal, EventSpecChanged, actionSubmit, msg)
}

func (t *transition) queueEvents() {
	c := t.changed(condQueued)
	if c == nil {
		return
	}
	o := meta.FindStatusCondition(t.o.Conditions, condQueued)
	switch {
	case c.Status == metav1.ConditionFalse && c.Reason == reasonAdmitted:
		t.add(event.Normal, EventAdmitted, actionQueue, c.Message)
	case c.Status == metav1.ConditionTrue && o != nil && o.Status == metav1.ConditionFalse && o.Reason == reasonAdmitted:
		t.add(event.Warning, EventEvicted, actionQueue, c.Message)
	case c.Reason == reasonKueueModeConflict:
		t.add(event.Warning, EventAdmissionPending, actionQueue, c.Reason+": "+c.Message)
	case c.Status == metav1.ConditionTrue:
		t.add(event.Normal, EventAdmissionPending, actionQueue, c.Reason+": "+c.Message)
	}
}

func (t *transition) stateEvents() {
	from, to := t.o.AppState.State, t.a.AppState.State
	a := t.a
	if to == v1beta2.ApplicationStateSubmitted && a.SubmissionID != t.o.SubmissionID {
		t.add(event.Normal, EventSubmitted, actionSubmit, fmt.Sprintf("attempt %d submitted: driver Pod %s, Spark application %s",
			a.SubmissionAttempts, a.DriverInfo.PodName, a.SparkApplicationID))
		return
	}
	if to == v1beta2.ApplicationStateFailedSubmission && (from != to || t.o.AppState.ErrorMessage != a.AppState.ErrorMessage) {
		msg := a.AppState.ErrorMessage
		if c := meta.FindStatusCondition(a.Conditions, condFailed); c != nil && c.Reason == reasonRetryScheduled {
			msg = c.Message
		}
		t.add(event.Warning, EventSubmissionFailed, actionSubmit, msg)
		return
	}
	if from == to {
		return
	}
	driverPod := a.DriverInfo.PodName
	// A queued application is parked in SUSPENDED by Kueue, not by spec.suspend: queueEvents
	// tells that story.
	queued := meta.IsStatusConditionTrue(a.Conditions, condQueued)
	switch to {
	case v1beta2.ApplicationStateSubmitted:
		t.add(event.Normal, EventDriverPending, actionTrack, fmt.Sprintf("driver Pod %s is pending", driverPod))
	case v1beta2.ApplicationStateRunning:
		t.add(event.Normal, EventDriverRunning, actionTrack, fmt.Sprintf("driver Pod %s is running (attempt %d)", driverPod, a.SubmissionAttempts))
	case v1beta2.ApplicationStateCompleted:
		msg := fmt.Sprintf("attempt %d completed", a.SubmissionAttempts)
		if start, end := a.LastSubmissionAttemptTime.Time, a.TerminationTime.Time; !start.IsZero() && !end.Before(start) {
			msg += " in " + end.Sub(start).Round(time.Second).String()
		}
		t.add(event.Normal, EventCompleted, actionTrack, msg)
	case v1beta2.ApplicationStateFailed:
		msg := a.AppState.ErrorMessage
		if c := meta.FindStatusCondition(a.Conditions, condFailed); c != nil && c.Status == metav1.ConditionTrue {
			msg = c.Reason + ": " + c.Message
		}
		t.add(event.Warning, EventFailed, actionTrack, msg)
	case v1beta2.ApplicationStateFailing:
		msg := a.AppState.ErrorMessage
		if c := meta.FindStatusCondition(a.Conditions, condFailed); c != nil {
			msg = c.Message
		}
		t.add(event.Warning, EventDriverFailed, actionRetry, msg)
	case v1beta2.ApplicationStatePendingRerun:
		msg := fmt.Sprintf("the next attempt is submitted once the resources of attempt %d are gone", a.SubmissionAttempts)
		if activeStates[from] {
			msg = fmt.Sprintf("attempt %d completed, and restartPolicy Always runs the application again once its resources are gone", a.SubmissionAttempts)
		}
		if c := meta.FindStatusCondition(a.Conditions, condNamespaceSelected); c != nil && c.Status == metav1.ConditionFalse {
			msg = fmt.Sprintf("attempt %d has ended; the next one waits until the namespace is selected", a.SubmissionAttempts)
		}
		t.add(event.Normal, EventPendingRerun, actionRetry, msg)
	case v1beta2.ApplicationStateSuspending:
		if !queued {
			t.add(event.Normal, EventSuspending, actionSuspend, "spec.suspend is true: the application's resources are being released")
		}
	case v1beta2.ApplicationStateSuspended:
		if !queued {
			t.add(event.Normal, EventSuspended, actionSuspend, "spec.suspend is true: the application is suspended, with no resources left")
		}
	case v1beta2.ApplicationStateResuming:
		t.add(event.Normal, EventResuming, actionResume, "spec.suspend is false: the application is submitted again once its resources are gone")
	case v1beta2.ApplicationStateUnknown:
		t.add(event.Warning, EventDriverUnknown, actionTrack, a.AppState.ErrorMessage)
	}
}

func (t *transition) conditionEvents() {
	to := t.a.AppState.State
	if c := t.changed(condDriverStarted); c != nil && to == v1beta2.ApplicationStateSubmitted &&
		c.Status == metav1.ConditionFalse && c.Reason != "Pending" {
		t.add(event.Warning, EventDriverNotStarting, actionTrack, c.Message)
	}
	if c := t.changed(condExecutorsReady); c != nil {
		switch {
		case c.Status == metav1.ConditionTrue && !t.wasTrue(condExecutorsReady):
			t.add(event.Normal, EventExecutorRunning, actionTrack, c.Message)
		case c.Status == metav1.ConditionFalse && c.Reason == reasonExecutorsBelow && t.wasTrue(condExecutorsReady):
			t.add(event.Warning, EventExecutorsBelow, actionTrack, c.Message)
		}
	}
	if c := t.changed(condExecutorFailed); c != nil && c.Status == metav1.ConditionTrue {
		t.add(event.Warning, EventExecutorFailed, actionTrack, c.Message)
	}
	if c := t.changed(condExpired); c != nil && c.Status == metav1.ConditionTrue && !t.wasTrue(condExpired) {
		t.add(event.Normal, EventExpired, actionExpire, c.Message)
	}
	if c := t.changed(condNamespaceSelected); c != nil && c.Status == metav1.ConditionFalse {
		t.add(event.Normal, EventNamespaceNotSelected, actionSubmit, c.Message)
	}
	if c := t.changed(condAdopted); c != nil {
		if c.Status == metav1.ConditionTrue {
			t.add(event.Normal, EventAdopted, actionTrack, c.Message)
		} else {
			t.add(event.Warning, EventDriverNotOwned, actionTrack, c.Message)
		}
	}
}
