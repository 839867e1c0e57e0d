package schedule

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// input is a decoded sync request.
type input struct {
	ssa              *v1beta2.ScheduledSparkApplication
	specErrs         field.ErrorList // the parts of the stored spec that did not decode
	startingDeadline *int64
	runs             []run // oldest first
	foreign          []*foreignObject
}

func decodeRequest(req *metacontroller.SyncRequest) (*input, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("empty request")
	}
	// A spec that does not decode is the user's error, reported as FailedValidation.
	parent, specErrs, err := metacontroller.DecodeParent(req.Parent, v1beta2.GroupVersion.WithKind(v1beta2.KindScheduledSparkApplication), false, v1beta2.DecodeScheduledSparkApplication)
	if err != nil {
		return nil, err
	}
	p := *parent
	// No finalize hook is registered for ScheduledSparkApplication, so Metacontroller never
	// sets finalizing; a parent being deleted is synced, and keeps its runs. A finalizing
	// request for a parent that is not being deleted contradicts itself.
	if req.Finalizing && p.DeletionTimestamp == nil {
		return nil, metacontroller.RequestErrorf("finalizing request for ScheduledSparkApplication %s/%s, which has no metadata.deletionTimestamp: only a parent being deleted is finalized", p.Namespace, p.Name)
	}
	// A null observed object is neither kept nor deleted by any answer; building a run from
	// it would create one. A misfiled object could make the answer keep one run and delete
	// another.
	if err := req.TidyObserved(p.Namespace); err != nil {
		return nil, err
	}
	in := &input{ssa: &p, specErrs: specErrs, startingDeadline: p.Spec.StartingDeadlineSeconds}
	in.runs, in.foreign, err = observeRuns(req.Children, p.Name)
	if err != nil {
		return nil, err
	}
	return in, nil
}
