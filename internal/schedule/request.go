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
	if len(req.Parent) == 0 || string(req.Parent) == "null" {
		return nil, metacontroller.RequestErrorf("request has no parent")
	}
	// A spec that does not decode is the user's error, reported as FailedValidation.
	parent, specErrs, err := v1beta2.DecodeScheduledSparkApplication(req.Parent)
	if err != nil {
		return nil, metacontroller.RequestErrorf("decode parent ScheduledSparkApplication: %w", err)
	}
	p := *parent
	// An empty kind or apiVersion is accepted: both are implied by the hook's URL.
	if err := metacontroller.CheckParentType(p.TypeMeta, v1beta2.GroupVersion.WithKind(v1beta2.KindScheduledSparkApplication)); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, metacontroller.RequestErrorf("parent ScheduledSparkApplication lacks metadata.name")
	}
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
