package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the Apache operator's API group.
const GroupName = "spark.apache.org"

// GroupVersion identifies this API version.
var GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// KindSparkCluster is the kind, as it appears in apiVersion/kind and in Metacontroller's keys.
const KindSparkCluster = "SparkCluster"

var (
	// SchemeBuilder registers the types of this version with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &SparkCluster{}, &SparkClusterList{}, &SparkApplication{}, &SparkApplicationList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
