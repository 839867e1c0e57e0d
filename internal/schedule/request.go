package schedule

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// requestErrorf is a metacontroller.RequestError: the request cannot be understood.
func requestErrorf(format string, args ...any) error {
	return metacontroller.RequestErrorf(format, args...)
}

// parentObject is a ScheduledSparkApplication as sent, with the fields of the spec that the
// v1beta2 types do not have yet.
type parentObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              parentSpec                              `json:"spec"`
	Status            v1beta2.ScheduledSparkApplicationStatus `json:"status"`
}

type parentSpec struct {
	v1beta2.ScheduledSparkApplicationSpec
	// StartingDeadlineSeconds, as in a Kubernetes CronJob: a due time older than this is
	// skipped rather than run late.
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
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
	var p parentObject
	if err := json.Unmarshal(req.Parent, &p); err != nil {
		return nil, requestErrorf("decode parent ScheduledSparkApplication: %w", err)
	}
	if p.Kind != "" && p.Kind != v1beta2.KindScheduledSparkApplication {
		return nil, requestErrorf("parent is a %s, want %s", p.Kind, v1beta2.KindScheduledSparkApplication)
	}
	if p.Name == "" {
		return nil, requestErrorf("parent ScheduledSparkApplication lacks metadata.name")
	}
	in := &input{
		ssa: &v1beta2.ScheduledSparkApplication{
			TypeMeta:   p.TypeMeta,
			ObjectMeta: p.ObjectMeta,
			Spec:       p.Spec.ScheduledSparkApplicationSpec,
			Status:     p.Status,
		},
		startingDeadline: p.Spec.StartingDeadlineSeconds,
	}
	var err error
	in.runs, in.foreign, err = observeRuns(req.Children, p.Name)
	if err != nil {
		return nil, err
	}
	return in, nil
}
