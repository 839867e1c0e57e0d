package validate

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
)

// Kind is a custom resource the webhook validates, named as an AdmissionRequest names it.
type Kind struct {
	GroupVersion schema.GroupVersion
	Kind         string // e.g. SparkApplication
	Resource     string // the plural, e.g. sparkapplications
	// Name is the route segment when the kind's lower-cased name is another kind's too.
	Name   string
	decode func(raw []byte) (object, error)
}

// Route is the kind's route segment: its Name, else its kind in lower case.
func (k Kind) Route() string {
	if k.Name != "" {
		return k.Name
	}
	return strings.ToLower(k.Kind)
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

// updater is an object with rules on how it may change, checked against the stored old one
// (of the same kind) before validate, which may default both.
type updater interface {
	validateUpdate(old object) field.ErrorList
}

// Kinds lists every kind the webhook validates, one route each.
func Kinds() []Kind {
	return []Kind{SparkApplication(), ScheduledSparkApplication(), SparkConnect(), SparkCluster(), ApacheSparkApplication()}
}

// ApacheSparkApplication is the Apache operator's spark.apache.org/v1 SparkApplication.
func ApacheSparkApplication() Kind {
	return Kind{
		GroupVersion: sparkv1.GroupVersion,
		Kind:         sparkv1.KindSparkApplication,
		Resource:     "sparkapplications",
		Name:         "apachesparkapplication",
		decode: func(raw []byte) (object, error) {
			app, specErrs, err := sparkv1.DecodeSparkApplication(raw)
			if err != nil {
				return nil, err
			}
			return &apacheApplication{SparkApplication: *app, specErrs: specErrs}, nil
		},
	}
}

type apacheApplication struct {
	sparkv1.SparkApplication
	specErrs field.ErrorList
}

func (a *apacheApplication) spec() any { return &a.Spec }

// validate is the Apache SparkApplication sync hook's verdict.
func (a *apacheApplication) validate(time.Time) field.ErrorList {
	if len(a.specErrs) > 0 {
		return a.specErrs
	}
	return sparkv1.ValidateSparkApplication(&a.SparkApplication)
}

// SparkCluster is the Apache operator's spark.apache.org/v1 SparkCluster.
func SparkCluster() Kind {
	return Kind{
		GroupVersion: sparkv1.GroupVersion,
		Kind:         sparkv1.KindSparkCluster,
		Resource:     "sparkclusters",
		decode: func(raw []byte) (object, error) {
			c, specErrs, err := sparkv1.DecodeSparkCluster(raw)
			if err != nil {
				return nil, err
			}
			return &sparkCluster{SparkCluster: *c, specErrs: specErrs}, nil
		},
	}
}

type sparkCluster struct {
	sparkv1.SparkCluster
	specErrs field.ErrorList
}

func (c *sparkCluster) spec() any { return &c.Spec }

// validate is the SparkCluster sync hook's verdict.
func (c *sparkCluster) validate(time.Time) field.ErrorList {
	if len(c.specErrs) > 0 {
		return c.specErrs
	}
	return sparkv1.ValidateSparkCluster(&c.SparkCluster)
}

// SparkConnect is the sparkoperator.k8s.io/v1alpha1 SparkConnect.
func SparkConnect() Kind {
	return Kind{
		GroupVersion: v1alpha1.GroupVersion,
		Kind:         v1alpha1.KindSparkConnect,
		Resource:     "sparkconnects",
		decode: func(raw []byte) (object, error) {
			sc, specErrs, err := v1alpha1.DecodeSparkConnect(raw)
			if err != nil {
				return nil, err
			}
			return &sparkConnect{SparkConnect: *sc, specErrs: specErrs}, nil
		},
	}
}

type sparkConnect struct {
	v1alpha1.SparkConnect
	specErrs field.ErrorList
}

func (s *sparkConnect) spec() any { return &s.Spec }

// validate is the SparkConnect sync hook's verdict.
func (s *sparkConnect) validate(time.Time) field.ErrorList {
	if len(s.specErrs) > 0 {
		return s.specErrs
	}
	return v1alpha1.ValidateSparkConnect(&s.SparkConnect)
}

// SparkApplication is the sparkoperator.k8s.io/v1beta2 SparkApplication.
func SparkApplication() Kind {
	return Kind{
		GroupVersion: v1beta2.GroupVersion,
		Kind:         v1beta2.KindSparkApplication,
		Resource:     "sparkapplications",
		decode: func(raw []byte) (object, error) {
			// As the sync hook decodes its parent.
			app, specErrs, err := v1beta2.DecodeSparkApplication(raw)
			if err != nil {
				return nil, err
			}
			return &sparkApplication{SparkApplication: *app, specErrs: specErrs}, nil
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
			ssa, specErrs, err := v1beta2.DecodeScheduledSparkApplication(raw)
			if err != nil {
				return nil, err
			}
			return &scheduledSparkApplication{ScheduledSparkApplication: *ssa, specErrs: specErrs}, nil
		},
	}
}

type sparkApplication struct {
	v1beta2.SparkApplication
	specErrs field.ErrorList // the parts of the spec that did not decode
}

func (a *sparkApplication) spec() any { return &a.Spec }

// validate is the sync hook's own verdict; a test holds the two equal on every golden.
func (a *sparkApplication) validate(time.Time) field.ErrorList {
	if errs := v1beta2.DefaultAndValidate(&a.SparkApplication); len(a.specErrs) == 0 {
		return errs
	}
	return a.specErrs
}

// validateUpdate keeps the manager the application was created with (spec.managedBy).
func (a *sparkApplication) validateUpdate(old object) field.ErrorList {
	o, ok := old.(*sparkApplication)
	if !ok {
		return nil
	}
	return v1beta2.ValidateSparkApplicationUpdate(&o.SparkApplication, &a.SparkApplication)
}

type scheduledSparkApplication struct {
	v1beta2.ScheduledSparkApplication
	specErrs field.ErrorList
}

func (s *scheduledSparkApplication) spec() any { return &s.Spec }

func (s *scheduledSparkApplication) validate(now time.Time) field.ErrorList {
	if len(s.specErrs) > 0 {
		return s.specErrs
	}
	return schedule.Validate(&s.ScheduledSparkApplication, now)
}
