package sparkcluster

import (
	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/event"
)

// warningStates are the states the Apache operator records as Warning Events.
var warningStates = map[string]bool{"SchedulingFailure": true, "Failed": true}

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
