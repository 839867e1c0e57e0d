package schedule

import (
	"encoding/json"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// requestErrorf is a metacontroller.RequestError: the request cannot be understood.
func requestErrorf(format string, args ...any) error {
	return metacontroller.RequestErrorf(format, args...)
}

// input is a decoded sync request.
type input struct {
	ssa              *v1beta2.ScheduledSparkApplication
	startingDeadline *int64
	runs             []run // oldest first
	foreign          []*foreignObject
}

func decodeRequest(req *metacontroller.SyncRequest) (*input, error) {
	if req == nil {
		return nil, requestErrorf("empty request")
	}
	if len(req.Parent) == 0 || string(req.Parent) == "null" {
		return nil, requestErrorf("request has no parent")
	}
	var p v1beta2.ScheduledSparkApplication
	if err := json.Unmarshal(req.Parent, &p); err != nil {
		return nil, requestErrorf("decode parent ScheduledSparkApplication: %w", err)
	}
	if p.Kind != "" && p.Kind != v1beta2.KindScheduledSparkApplication {
		return nil, requestErrorf("parent is a %s, want %s", p.Kind, v1beta2.KindScheduledSparkApplication)
	}
	if p.Name == "" {
		return nil, requestErrorf("parent ScheduledSparkApplication lacks metadata.name")
	}
	in := &input{ssa: &p, startingDeadline: p.Spec.StartingDeadlineSeconds}
	var err error
	in.runs, in.foreign, err = observeRuns(req.Children, p.Name)
	if err != nil {
		return nil, err
	}
	return in, nil
}
