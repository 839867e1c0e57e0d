package validate

import (
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
)

// Kind is a custom resource the webhook validates, named as an AdmissionRequest names it.
type Kind struct {
	GroupVersion schema.GroupVersion
	Kind         string // e.g. SparkApplication
	Resource     string // the plural, e.g. sparkapplications
	decode       func(raw []byte) (object, error)
}

// object is a decoded request object.
type object interface {
	GetName() string
	GetNamespace() string
	SetNamespace(namespace string)
	// spec is what an update must change for the object to be validated again.
	spec() any
	// validate returns every problem the sync hook would report at now. It may default the
	// object in place, so it is called last.
	validate(now time.Time) field.ErrorList
}

// Kinds lists every kind the webhook validates, one route each. A SparkConnect joins this list
// when its API exists.
func Kinds() []Kind {
	return []Kind{SparkApplication(), ScheduledSparkApplication()}
}

// SparkApplication is the sparkoperator.k8s.io/v1beta2 SparkApplication.
func SparkApplication() Kind {
	return Kind{
		GroupVersion: v1beta2.GroupVersion,
		Kind:         v1beta2.KindSparkApplication,
		Resource:     "sparkapplications",
		decode: func(raw []byte) (object, error) {
			app := &sparkApplication{}
			// encoding/json, as the sync hook decodes its parent.
			err := json.Unmarshal(raw, &app.SparkApplication)
			return app, err
		},
	}
}

// ScheduledSparkApplication is the sparkoperator.k8s.io/v1beta2 ScheduledSparkApplication.
func ScheduledSparkApplication() Kind {
	return Kind{
		GroupVersion: v1beta2.GroupVersion,
		Kind:         v1beta2.KindScheduledSparkApplication,
		Resource:     "scheduledsparkapplications",
		decode: func(raw []byte) (object, error) {
			ssa := &scheduledSparkApplication{}
			err := json.Unmarshal(raw, &ssa.ScheduledSparkApplication)
			return ssa, err
		},
	}
}

type sparkApplication struct{ v1beta2.SparkApplication }

func (a *sparkApplication) spec() any { return &a.Spec }

// validate is the sync hook's own verdict; a test holds the two equal on every golden.
func (a *sparkApplication) validate(time.Time) field.ErrorList {
	return v1beta2.DefaultAndValidate(&a.SparkApplication)
}

type scheduledSparkApplication struct {
	v1beta2.ScheduledSparkApplication
}

func (s *scheduledSparkApplication) spec() any { return &s.Spec }

func (s *scheduledSparkApplication) validate(now time.Time) field.ErrorList {
	return schedule.Validate(&s.ScheduledSparkApplication, now)
}
