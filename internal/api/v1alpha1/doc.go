// Package v1alpha1 holds the sparkoperator.k8s.io/v1alpha1 API: SparkConnect, a long-running
// Spark Connect server (a driver in client mode) with its executors and a gRPC Service, field
// for field and JSON name for JSON name compatible with the Kubeflow Spark Operator's, so that
// its manifests and the Kubeflow SDK work unchanged. Our additions to the status (the server's
// submission, its spec hash, observedGeneration) are optional fields that Kubeflow clients ignore.
//
// +kubebuilder:object:generate=true
// +groupName=sparkoperator.k8s.io
package v1alpha1
