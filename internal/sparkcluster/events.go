package sparkcluster

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// warningStates are the states the Apache operator records as Warning Events.
var warningStates = map[string]bool{"SchedulingFailure": true, "Failed": true}

// Story reads the parent of a sync request and the status the hook answered, and tells the
// Events of that decision, for the server to record after answering.
func Story(parent json.RawMessage, answered *metacontroller.SyncResponse) (event.Story, error) {
	var c struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta     `json:"metadata"`
		Status          sparkv1.ClusterStatus `json:"status"`
	}
	if err := json.Unmarshal(parent, &c); err != nil {
		return event.Story{}, fmt.Errorf("decode SparkCluster: %w", err)
	}
	st, ok := answered.Status.(*sparkv1.ClusterStatus)
	if !ok {
		return event.Story{}, fmt.Errorf("answered status is %T, not a SparkCluster status", answered.Status)
	}
	return event.Story{Regarding: event.Regarding(c.TypeMeta, &c.Metadata), Events: Events(&c.Status, st)}, nil
}

// Events tells a change of state as the Apache operator does: one Event, its reason the new
// state, Warning for the failure states. A sync that keeps the state tells nothing.
func Events(observed, answered *sparkv1.ClusterStatus) []event.Event {
	from, to := observed.CurrentState, answered.CurrentState
	if to.CurrentStateSummary == "" || (to.CurrentStateSummary == from.CurrentStateSummary && to.SuspendReason == from.SuspendReason) {
		return nil
	}
	typ := event.Normal
	if warningStates[to.CurrentStateSummary] || to.SuspendReason == "KueueEviction" {
		typ = event.Warning
	}
	msg := to.Message
	if msg == "" {
		msg = "the cluster is " + to.CurrentStateSummary
	}
	return []event.Event{event.New(typ, to.CurrentStateSummary, "Reconcile", msg)}
}
