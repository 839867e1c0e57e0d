package v1beta2

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The values spec.managedBy may take, those of Kubeflow's proposal: the field's own default,
// and Kueue's MultiKueue controller name, which its generic adapter for custom kinds looks for.
const (
	ManagedBySparkOperator = "sparkoperator.k8s.io/spark-operator"
	ManagedByMultiKueue    = "kueue.x-k8s.io/multikueue"
)

// Manager is the controller that runs the application: spec.managedBy, or sparkhooks when it is
// unset.
func (s *SparkApplicationSpec) Manager() string {
	if s.ManagedBy == nil {
		return ManagedBySparkOperator
	}
	return *s.ManagedBy
}

// ManagedElsewhere tells whether another controller runs the application, so that sparkhooks
// must create nothing for it. Any value but ours counts, as for a Job's managedBy: one the
// validation refuses can still be stored where the webhook and the CRD's rules were off.
func (s *SparkApplicationSpec) ManagedElsewhere() bool {
	return s.Manager() != ManagedBySparkOperator
}

func (v *specValidator) managedBy() {
	if by := v.spec.ManagedBy; by != nil && *by != ManagedBySparkOperator && *by != ManagedByMultiKueue {
		v.add(field.NotSupported(v.path.Child("managedBy"), *by, []string{ManagedBySparkOperator, ManagedByMultiKueue}))
	}
}

// ValidateSparkApplicationUpdate refuses an update that changes who runs the application: a
// controller that has started it would be left with Pods nobody follows, and one that has not
// would have its status overwritten. Writing the default out, or removing it, is no change. The
// CRD's rule on SparkApplication.spec says the same, for clusters without the webhook.
func ValidateSparkApplicationUpdate(old, app *SparkApplication) field.ErrorList {
	if before, after := old.Spec.Manager(), app.Spec.Manager(); before != after {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "managedBy"), after,
			"spec.managedBy is immutable: it is chosen when the SparkApplication is created (it was "+before+")")}
	}
	return nil
}
