package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sparkapp,singular=sparkapplication
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Current State,type=string,JSONPath=`.status.currentState.currentStateSummary`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

// SparkApplication is the v1beta1 form of spark.apache.org/v1 SparkApplication: the same
// fields, served for manifests written against it.
type SparkApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   sparkv1.ApplicationSpec   `json:"spec,omitempty"`
	Status sparkv1.ApplicationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SparkApplicationList is a list of SparkApplications.
type SparkApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SparkApplication `json:"items"`
}
