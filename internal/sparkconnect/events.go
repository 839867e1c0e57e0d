package sparkconnect

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/event"
)

// Event reasons of a Spark Connect server.
const (
	EventProvisioning = "SparkConnectProvisioning"
	EventReady        = "SparkConnectReady"
	EventNotReady     = "SparkConnectNotReady"
	EventFailed       = "SparkConnectFailed"
	EventSpecInvalid  = "SparkConnectSpecInvalid"
	// EventAdopted and EventServerNotOwned tell how a server Kubeflow's operator made is
	// followed (condition Adopted).
	EventAdopted        = "SparkConnectAdopted"
	EventServerNotOwned = "SparkServerNotOwned"
)

// Events tells a change of the server's state, or of why it is not ready, as an Event with the
// Ready condition's message; a spec that turned invalid; and how a server Kubeflow's operator
// made is followed. A sync that changes none tells nothing.
func Events(observed, answered *v1alpha1.SparkConnectStatus) []event.Event {
	var events []event.Event
	if c := changedCondition(observed, answered, condSpecValid); c != nil && c.Status == metav1.ConditionFalse {
		events = append(events, event.New(event.Warning, EventSpecInvalid, "Validate", c.Message))
	}
	if c := changedCondition(observed, answered, condAdopted); c != nil {
		if c.Status == metav1.ConditionTrue {
			events = append(events, event.New(event.Normal, EventAdopted, "Adopt", c.Message))
		} else {
			events = append(events, event.New(event.Warning, EventServerNotOwned, "Adopt", c.Message))
		}
	}
	c := meta.FindStatusCondition(answered.Conditions, condReady)
	if c == nil {
		return events
	}
	o := meta.FindStatusCondition(observed.Conditions, condReady)
	if observed.State == answered.State && o != nil && o.Reason == c.Reason {
		return events
	}
	switch answered.State {
	case v1alpha1.StateProvisioning:
		events = append(events, event.New(event.Normal, EventProvisioning, "Track", c.Reason+": "+c.Message))
	case v1alpha1.StateReady:
		events = append(events, event.New(event.Normal, EventReady, "Track", c.Message))
	case v1alpha1.StateNotReady:
		events = append(events, event.New(event.Warning, EventNotReady, "Track", c.Reason+": "+c.Message))
	case v1alpha1.StateFailed:
		events = append(events, event.New(event.Warning, EventFailed, "Track", c.Reason+": "+c.Message))
	}
	return events
}

func changedCondition(observed, answered *v1alpha1.SparkConnectStatus, typ string) *metav1.Condition {
	a := meta.FindStatusCondition(answered.Conditions, typ)
	o := meta.FindStatusCondition(observed.Conditions, typ)
	if a == nil || (o != nil && o.Status == a.Status && o.Reason == a.Reason && o.Message == a.Message) {
		return nil
	}
	return a
}
