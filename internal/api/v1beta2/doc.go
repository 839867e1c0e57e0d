// Package v1beta2 holds the sparkoperator.k8s.io/v1beta2 API: SparkApplication and
// ScheduledSparkApplication, field for field and JSON name for JSON name compatible with the
// Kubeflow Spark Operator, so manifests and tools written for it work unchanged. Our additions
// (per-phase timeouts, a resource retain policy, status conditions and observedGeneration) are
// optional fields that Kubeflow clients ignore.
//
// The package also holds the defaulting and validation that the hooks apply in memory on every
// sync: nothing here talks to the API server.
//
// The group ends in .k8s.io, which the API server reserves for APIs approved by Kubernetes API
// review; each CRD therefore carries the api-approved.kubernetes.io annotation, pointing at the
// review that approved this group for the Kubeflow operator, whose API this is.
//
// +kubebuilder:object:generate=true
// +groupName=sparkoperator.k8s.io
package v1beta2
