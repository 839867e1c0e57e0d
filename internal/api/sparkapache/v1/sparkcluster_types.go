package v1

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sparkcluster,singular=sparkcluster
// +kubebuilder:subresource:status
// The Apache operator's v1 columns, in its order.
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name=Current State,type=string,JSONPath=`.status.currentState.currentStateSummary`

// SparkCluster is a standalone Spark cluster: one master and a pool of workers that
// applications reach at spark://<name>-master-svc:7077.
type SparkCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSpec   `json:"spec,omitempty"`
	Status ClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SparkClusterList is a list of SparkClusters.
type SparkClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SparkCluster `json:"items"`
}

// ClusterSpec is the desired cluster.
type ClusterSpec struct {
	// RuntimeVersions are the versions of the image; sparkVersion labels every object and fills
	// {{SPARK_VERSION}} in the image.
	RuntimeVersions RuntimeVersions `json:"runtimeVersions"`
	// ClusterTolerations sizes the worker pool.
	ClusterTolerations ClusterTolerations `json:"clusterTolerations"`
	// SparkConf are Spark properties of the master and the workers (as -D flags of both
	// daemons); spark.kubernetes.container.image and spark.kubernetes.scheduler.name also
	// choose the image and the scheduler of their Pods.
	// +optional
	SparkConf map[string]string `json:"sparkConf,omitempty"`
	// MasterSpec is the base of the master's StatefulSet and Service.
	// +optional
	MasterSpec *MasterSpec `json:"masterSpec,omitempty"`
	// WorkerSpec is the base of the workers' StatefulSet, Service and autoscaler.
	// +optional
	WorkerSpec *WorkerSpec `json:"workerSpec,omitempty"`
	// Suspend releases the master and the workers (their StatefulSets, autoscaler and
	// disruption budget) while true, keeping the Services and the NetworkPolicy, as the Apache
	// operator 1.1 does; back to false, the cluster is built again from scratch. A cluster
	// created suspended gets nothing but its Services.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// RuntimeVersions are the versions of the cluster's image.
type RuntimeVersions struct {
	// SparkVersion is the Spark version, for example 4.0.1.
	SparkVersion string `json:"sparkVersion"`
	// ScalaVersion is informational.
	// +optional
	ScalaVersion string `json:"scalaVersion,omitempty"`
	// JdkVersion is informational.
	// +optional
	JdkVersion string `json:"jdkVersion,omitempty"`
}

// ClusterTolerations bounds the worker pool.
type ClusterTolerations struct {
	// InstanceConfig is the number of workers.
	InstanceConfig WorkerInstanceConfig `json:"instanceConfig"`
}

// WorkerInstanceConfig is the size of the worker pool: initWorkers at the start, between
// minWorkers and maxWorkers under the autoscaler (which exists when minWorkers < maxWorkers).
type WorkerInstanceConfig struct {
	// InitWorkers is the number of workers when the autoscaler does not decide.
	// +kubebuilder:validation:Minimum=0
	InitWorkers int32 `json:"initWorkers"`
	// MinWorkers is the autoscaler's floor, and the number of ready workers the cluster needs
	// to be RunningHealthy; at 1 or more the workers get a PodDisruptionBudget.
	// +kubebuilder:validation:Minimum=0
	MinWorkers int32 `json:"minWorkers"`
	// MaxWorkers is the autoscaler's ceiling.
	// +kubebuilder:validation:Minimum=0
	MaxWorkers int32 `json:"maxWorkers"`
}

// MasterSpec is the base of the master's objects.
type MasterSpec struct {
	// StatefulSetSpec is the base of the master StatefulSet's spec (pod template, volumes, ...).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	StatefulSetSpec *appsv1.StatefulSetSpec `json:"statefulSetSpec,omitempty"`
	// StatefulSetMetadata is the base of the master StatefulSet's metadata.
	// +optional
	StatefulSetMetadata *metav1.ObjectMeta `json:"statefulSetMetadata,omitempty"`
	// ServiceSpec is the base of the master Service's spec.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ServiceSpec *corev1.ServiceSpec `json:"serviceSpec,omitempty"`
	// ServiceMetadata is the base of the master Service's metadata.
	// +optional
	ServiceMetadata *metav1.ObjectMeta `json:"serviceMetadata,omitempty"`
}

// WorkerSpec is the base of the workers' objects.
type WorkerSpec struct {
	// StatefulSetSpec is the base of the worker StatefulSet's spec.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	StatefulSetSpec *appsv1.StatefulSetSpec `json:"statefulSetSpec,omitempty"`
	// StatefulSetMetadata is the base of the worker StatefulSet's metadata.
	// +optional
	StatefulSetMetadata *metav1.ObjectMeta `json:"statefulSetMetadata,omitempty"`
	// ServiceSpec is the base of the worker Service's spec.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ServiceSpec *corev1.ServiceSpec `json:"serviceSpec,omitempty"`
	// ServiceMetadata is the base of the worker Service's metadata.
	// +optional
	ServiceMetadata *metav1.ObjectMeta `json:"serviceMetadata,omitempty"`
	// HorizontalPodAutoscalerSpec replaces the autoscaler's default metrics and behavior; its
	// bounds and target are always the cluster's.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	HorizontalPodAutoscalerSpec *autoscalingv2.HorizontalPodAutoscalerSpec `json:"horizontalPodAutoscalerSpec,omitempty"`
}

// The states of a cluster, Apache's names.
const (
	StateSubmitted         = "Submitted"
	StateSchedulingFailure = "SchedulingFailure"
	StateRunningHealthy    = "RunningHealthy"
	StateFailed            = "Failed"
	StateResourceReleased  = "ResourceReleased"
	StateSuspended         = "Suspended"
)

// SuspendReasonSpec is why a cluster is Suspended: spec.suspend (Apache's SuspendReason, whose
// other value, KueueEviction, a SparkCluster never has here).
const SuspendReasonSpec = "SpecSuspend"

// ClusterStatus is the observed state of a cluster, in the Apache operator's shape.
type ClusterStatus struct {
	// CurrentState is the state now.
	// +optional
	CurrentState ClusterState `json:"currentState,omitempty"`
	// StateTransitionHistory holds the last states, keyed "0", "1", ... in order; sparkhooks
	// keeps the last 20 and records a state only when it changes.
	// +optional
	StateTransitionHistory map[string]ClusterState `json:"stateTransitionHistory,omitempty"`
	// CurrentAttemptSummary is Apache's attempt record; a cluster has one attempt.
	// +optional
	CurrentAttemptSummary *ClusterAttemptSummary `json:"currentAttemptSummary,omitempty"`
	// PreviousAttemptSummary is never set for clusters, as in Apache's operator.
	// +optional
	PreviousAttemptSummary *ClusterAttemptSummary `json:"previousAttemptSummary,omitempty"`
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready is True while the cluster is RunningHealthy, so that `kubectl wait
	// --for=condition=Ready` works as for other workloads; otherwise False with the state as its
	// reason. A sparkhooks addition: the Apache operator's status has states only.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterState is one state of a cluster.
type ClusterState struct {
	// CurrentStateSummary is the state: Submitted, SchedulingFailure, RunningHealthy, Failed,
	// ResourceReleased or Suspended.
	// +kubebuilder:validation:Enum=Submitted;SchedulingFailure;RunningHealthy;Failed;ResourceReleased;Suspended
	// +optional
	CurrentStateSummary string `json:"currentStateSummary,omitempty"`
	// SuspendReason says why the cluster is Suspended: SpecSuspend.
	// +kubebuilder:validation:Enum=SpecSuspend;KueueEviction
	// +optional
	SuspendReason string `json:"suspendReason,omitempty"`
	// LastTransitionTime is when the cluster entered the state (RFC 3339).
	// +optional
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	// Message says why.
	// +optional
	Message string `json:"message,omitempty"`
}

// ClusterAttemptSummary is Apache's record of an attempt.
type ClusterAttemptSummary struct {
	// AttemptInfo identifies the attempt.
	// +optional
	AttemptInfo AttemptInfo `json:"attemptInfo,omitempty"`
	// StateTransitionHistory is the attempt's own history; never filled for clusters.
	// +optional
	StateTransitionHistory map[string]ClusterState `json:"stateTransitionHistory,omitempty"`
}

// AttemptInfo identifies an attempt.
type AttemptInfo struct {
	// ID is the attempt's number.
	// +optional
	ID int64 `json:"id"`
	// RestartCounter counts restarts.
	// +optional
	RestartCounter int64 `json:"restartCounter"`
}
