package v1beta2

// SparkApplicationTimeouts bound the start-up phases of one attempt. Each phase is timed from
// the moment the previous one ended; a phase that runs over fails the attempt (state FAILING,
// then FAILED or a retry by the restart policy) with a message naming the timeout. Unset fields
// mean no timeout for that phase; set ones are at most MaxSeconds (10 years). This is a
// sparkhooks extension, after the Apache Spark Kubernetes Operator's applicationTimeoutConfig.
type SparkApplicationTimeouts struct {
	// DriverStartSeconds is how long the driver Pod may take, from its creation, until its
	// Spark container runs: it catches unschedulable Pods and images that cannot be pulled.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=315360000
	// +optional
	DriverStartSeconds *int64 `json:"driverStartSeconds,omitempty"`
	// DriverReadySeconds is how long the driver may take, from its container running, until
	// the Pod is ready.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=315360000
	// +optional
	DriverReadySeconds *int64 `json:"driverReadySeconds,omitempty"`
	// ExecutorsStartSeconds is how long the executors may take, from the driver being ready,
	// until the minimum number of them runs: executor.instances, or
	// dynamicAllocation.minExecutors when dynamic allocation is on (at least one).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=315360000
	// +optional
	ExecutorsStartSeconds *int64 `json:"executorsStartSeconds,omitempty"`
}

// ResourceRetainPolicy says which resources of a terminated application are kept.
// +kubebuilder:validation:Enum=Always;OnFailure;Never
type ResourceRetainPolicy string

// Resource retain policies.
const (
	// ResourceRetainPolicyAlways keeps the driver Pod, its ConfigMap and Services after the
	// application terminates, until the application itself is deleted (by hand or by
	// timeToLiveSeconds). It is the default.
	ResourceRetainPolicyAlways ResourceRetainPolicy = "Always"
	// ResourceRetainPolicyOnFailure keeps them only when the application FAILED, for
	// debugging, and deletes them when it COMPLETED.
	ResourceRetainPolicyOnFailure ResourceRetainPolicy = "OnFailure"
	// ResourceRetainPolicyNever deletes them as soon as the application terminates.
	ResourceRetainPolicyNever ResourceRetainPolicy = "Never"
)
