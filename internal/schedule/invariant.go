package schedule

import (
	"maps"
	"slices"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Refusal reasons of the final check (metric label values).
const (
	refuseLiveRunDropped      = "LiveRunDropped"
	refuseForeignChildDropped = "ForeignChildDropped"
)

// checkKeepsLive is the last step before answering. Metacontroller deletes every observed
// child that the answer leaves out, so a mistake in the decision, or an input it misreads,
// would delete a run that is still working. The check reads the observed objects again
// rather than trusting the decision's view of them, and refuses when the answer leaves out:
//   - a child that is not a run of this schedule (a foreign SparkApplication, or an object of
//     a child type the schedule does not know): the schedule never deletes what it did not make;
//   - a run that has not finished and is not being deleted, unless concurrencyPolicy Replace
//     started a new run in this decision, which is what ends it.
//
// Finished runs and runs already being deleted may go: that is history pruning.
func (d *decider) checkKeepsLive(observed metacontroller.ChildMap, desired []any) error {
	kept := make(map[string]map[string]bool, 1)
	for _, c := range desired {
		key, name := c.(identified).id()
		if kept[key] == nil {
			kept[key] = map[string]bool{}
		}
		kept[key][name] = true
	}
	runs := make(map[string]bool, len(d.in.runs))
	for _, r := range d.in.runs {
		runs[r.name] = true
	}
	replaced := d.result.Created && d.in.ssa.Spec.ConcurrencyPolicy == v1beta2.ConcurrencyReplace
	// In order, so that a retry is refused for the same child and reason.
	for _, key := range slices.Sorted(maps.Keys(observed)) {
		for _, name := range observed.Names(key) {
			if kept[key][name] {
				continue
			}
			if key != ChildKey || !runs[name] {
				return metacontroller.Refusef(refuseForeignChildDropped,
					"the answer leaves out %s %q, which is not a run of ScheduledSparkApplication %s/%s; Metacontroller would delete it",
					key, name, d.in.ssa.Namespace, d.in.ssa.Name)
			}
			var v childView
			if _, err := observed.Decode(key, name, &v); err != nil {
				return metacontroller.RequestErrorf("%w", err)
			}
			state := v.Status.ApplicationState.State
			if finished(state) || v.Metadata.DeletionTimestamp != nil || replaced {
				continue
			}
			return metacontroller.Refusef(refuseLiveRunDropped,
				"the answer leaves out run %s in state %q, which has not finished and is not being deleted; only concurrencyPolicy Replace starting a new run may end it",
				name, state)
		}
	}
	return nil
}

// identified is a desired child, named as Metacontroller matches it with the observed ones.
// Every type response builds implements it: one that did not would panic in checkKeepsLive on
// every answer, which no test would miss.
type identified interface {
	id() (key, name string)
}

func (o *runObject) id() (key, name string) {
	return metacontroller.Key(o.Kind, o.APIVersion), o.Metadata.Name
}

func (o *foreignObject) id() (key, name string) {
	return metacontroller.Key(o.Kind, o.APIVersion), o.Metadata.Name
}

// finished tells whether a run does nothing more. It spells the final states out rather than
// asking stateOf, so that a mistake there cannot hide from this check.
func finished(s v1beta2.ApplicationStateType) bool {
	switch s {
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
		return true
	}
	return false
}
