package schedule

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Event reasons of a ScheduledSparkApplication.
const (
	EventRunCreated  = "ScheduledSparkApplicationRunCreated"
	EventSpecInvalid = "ScheduledSparkApplicationSpecInvalid"
	EventScheduled   = "ScheduledSparkApplicationScheduled"
)

// Story reads the parent of a sync request and the status the hook answered, and tells the
// Events of that decision, for the server to record after answering.
func Story(parent json.RawMessage, answered *metacontroller.SyncResponse) (event.Story, error) {
	var ssa struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta                       `json:"metadata"`
		Status          v1beta2.ScheduledSparkApplicationStatus `json:"status"`
	}
	if err := json.Unmarshal(parent, &ssa); err != nil {
		return event.Story{}, fmt.Errorf("decode ScheduledSparkApplication: %w", err)
	}
	st, ok := answered.Status.(*v1beta2.ScheduledSparkApplicationStatus)
	if !ok {
		return event.Story{}, fmt.Errorf("answered status is %T, not a ScheduledSparkApplication status", answered.Status)
	}
	return event.Story{Regarding: event.Regarding(ssa.TypeMeta, &ssa.Metadata), Events: Events(&ssa.Status, st)}, nil
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
