package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of both kinds.
const GroupName = "sparkoperator.k8s.io"

// GroupVersion identifies this API version.
var GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta2"}

// Kind names, as they appear in apiVersion/kind and in Metacontroller's child keys.
const (
	KindSparkApplication          = "SparkApplication"
	KindScheduledSparkApplication = "ScheduledSparkApplication"
)

var (
	// SchemeBuilder registers the types of this version with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&SparkApplication{},
		&SparkApplicationList{},
		&ScheduledSparkApplication{},
		&ScheduledSparkApplicationList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
