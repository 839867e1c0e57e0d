package schedule

import (
	"slices"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Event reasons of a ScheduledSparkApplication.
const (
	EventRunCreated  = "ScheduledSparkApplicationRunCreated"
	EventSpecInvalid = "ScheduledSparkApplicationSpecInvalid"
	EventScheduled   = "ScheduledSparkApplicationScheduled"
)

// newTeller keeps what the Events of this sync are told from: the parent's identity and its
// status as observed, whose conditions the decision edits in place.
func newTeller(ssa *v1beta2.ScheduledSparkApplication) hook.Teller[v1beta2.ScheduledSparkApplicationStatus] {
	observed := ssa.Status
	observed.Conditions = slices.Clone(observed.Conditions)
	return hook.NewTeller(ssa.TypeMeta, &ssa.ObjectMeta, observed, Events)
}

// outcome reports result r and its answer resp.
func outcome(told hook.Teller[v1beta2.ScheduledSparkApplicationStatus], r result, resp *metacontroller.SyncResponse) hook.Outcome {
	return hook.Outcome{
		Kind:             v1beta2.KindScheduledSparkApplication,
		From:             r.From,
		To:               r.To,
		Submitted:        r.Created,
		ValidationFailed: r.ValidationFailed,
		Story:            told.Story(resp.Status),
	}
}

// Events tells a new run and a change of the schedule's validity. The runs themselves are
// SparkApplications, which tell their own story.
func Events(observed, answered *v1beta2.ScheduledSparkApplicationStatus) []event.Event {
	var events []event.Event
	if answered.ScheduleState != observed.ScheduleState || answered.Reason != observed.Reason {
		switch answered.ScheduleState {
		case v1beta2.ScheduleStateFailedValidation:
			events = append(events, event.New(event.Warning, EventSpecInvalid, "Validate", answered.Reason))
		case v1beta2.ScheduleStateScheduled:
			if observed.ScheduleState == v1beta2.ScheduleStateFailedValidation {
				events = append(events, event.New(event.Normal, EventScheduled, "Validate", "the schedule is valid again"))
			}
		}
	}
	if answered.LastRunName != "" && answered.LastRunName != observed.LastRunName {
		msg := "run " + answered.LastRunName + " created"
		if !answered.NextRun.IsZero() {
			msg += "; the next is due at " + answered.NextRun.UTC().Format("2006-01-02T15:04:05Z")
		}
		events = append(events, event.New(event.Normal, EventRunCreated, "Schedule", msg))
	}
	return events
}
