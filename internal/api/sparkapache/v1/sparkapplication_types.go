package v1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// KindSparkApplication is the Apache operator's application kind. Its name is the Kubeflow
// API's too: the group tells them apart.
const KindSparkApplication = "SparkApplication"

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sparkapp,singular=sparkapplication
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// The Apache operator's v1 columns, in its order.
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name=Current State,type=string,JSONPath=`.status.currentState.currentStateSummary`

// SparkApplication is one Spark application in the Apache operator's shape: its spec is what
// spark-submit would be told, its status the Apache state history. sparkhooks runs it on the
// same attempt core as the Kubeflow-API SparkApplication (see internal/apacheapp).
type SparkApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApplicationSpec   `json:"spec,omitempty"`
	Status ApplicationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SparkApplicationList is a list of SparkApplications.
type SparkApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SparkApplication `json:"items"`
}

// ApplicationSpec is the Apache operator's application spec, field for field.
type ApplicationSpec struct {
	// MainClass is the entry class; org.apache.spark.deploy.PythonRunner runs the first of
	// pyFiles.
	// +optional
	MainClass string `json:"mainClass,omitempty"`
	// Jars is the primary resource of a JVM application (comma-separated URIs, the first is
	// the main jar); it wins over pyFiles and sparkRFiles.
	// +optional
	Jars string `json:"jars,omitempty"`
	// PyFiles is the primary resource of a Python application when jars is unset (the first
	// entry), followed by further Python files.
	// +optional
	PyFiles string `json:"pyFiles,omitempty"`
	// SparkRFiles is the primary resource of an R application when neither jars nor pyFiles
	// is set.
	// +optional
	SparkRFiles string `json:"sparkRFiles,omitempty"`
	// Files are comma-separated files placed in each executor's working directory
	// (spark.files unless sparkConf sets it).
	// +optional
	Files string `json:"files,omitempty"`
	// DriverArgs are the application's arguments, in order.
	// +optional
	DriverArgs []string `json:"driverArgs,omitempty"`
	// ProxyUser is the user the driver impersonates (spark-submit --proxy-user).
	// +optional
	ProxyUser string `json:"proxyUser,omitempty"`
	// SparkConf are the Spark properties. The image (spark.kubernetes.container.image and the
	// per-role keys) and the service account
	// (spark.kubernetes.authenticate.driver.serviceAccountName) come from here;
	// {{SPARK_VERSION}} in a value is replaced by runtimeVersions.sparkVersion.
	// +optional
	SparkConf map[string]string `json:"sparkConf,omitempty"`
	// RuntimeVersions are the versions of the image.
	RuntimeVersions RuntimeVersions `json:"runtimeVersions"`
	// DeploymentMode is ClusterMode (the default); ClientMode is refused, as by Apache.
	// +kubebuilder:validation:Enum=ClientMode;ClusterMode
	// +optional
	DeploymentMode string `json:"deploymentMode,omitempty"`
	// ConfigMapSpecs are ConfigMaps that live as long as the attempt's driver Pod (Apache
	// creates them before the driver and owns them by it).
	// +optional
	ConfigMapSpecs []ConfigMapSpec `json:"configMapSpecs,omitempty"`
	// DriverSpec holds the driver's pod template.
	// +optional
	DriverSpec *RoleSpec `json:"driverSpec,omitempty"`
	// ExecutorSpec holds the executors' pod template.
	// +optional
	ExecutorSpec *RoleSpec `json:"executorSpec,omitempty"`
	// ApplicationTolerations are the restart, timeout, executor and clean-up rules.
	// +optional
	ApplicationTolerations *ApplicationTolerations `json:"applicationTolerations,omitempty"`
	// DriverServiceIngressList asks for a Service and an Ingress per entry, which live as long
	// as the attempt's driver Pod.
	// +optional
	DriverServiceIngressList []DriverExposure `json:"driverServiceIngressList,omitempty"`
	// DriverHTTPRouteList asks for a Service and a Gateway API HTTPRoute per entry, which
	// live as long as the attempt's driver Pod.
	// +optional
	DriverHTTPRouteList []DriverExposure `json:"driverHttpRouteList,omitempty"`
	// DriverGRPCRouteList asks for a Service and a Gateway API GRPCRoute per entry, which
	// live as long as the attempt's driver Pod.
	// +optional
	DriverGRPCRouteList []DriverExposure `json:"driverGrpcRouteList,omitempty"`
}

// The deployment modes.
const (
	DeploymentModeCluster = "ClusterMode"
	DeploymentModeClient  = "ClientMode"
)

// ConfigMapSpec is a ConfigMap the application asks for.
type ConfigMapSpec struct {
	// Name is the ConfigMap's name.
	Name string `json:"name"`
	// Labels of the ConfigMap.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations of the ConfigMap.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// Data of the ConfigMap.
	// +optional
	Data map[string]string `json:"data,omitempty"`
}

// RoleSpec is the pod template of the driver or of the executors.
type RoleSpec struct {
	// PodTemplateSpec is the base of the role's Pods, as Spark's pod template file.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	PodTemplateSpec *corev1.PodTemplateSpec `json:"podTemplateSpec,omitempty"`
}

// DriverExposure is one entry of the driver exposure lists: the Service and the Ingress or
// route Apache builds for it, kept without a schema.
type DriverExposure struct {
	// ServiceMetadata is the Service's metadata.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ServiceMetadata *metav1.ObjectMeta `json:"serviceMetadata,omitempty"`
	// ServiceSpec is the Service's spec.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ServiceSpec *corev1.ServiceSpec `json:"serviceSpec,omitempty"`
	// IngressMetadata is the Ingress's metadata (driverServiceIngressList).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	IngressMetadata *metav1.ObjectMeta `json:"ingressMetadata,omitempty"`
	// IngressSpec is the Ingress's spec (driverServiceIngressList).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	IngressSpec *apiextensionsv1.JSON `json:"ingressSpec,omitempty"`
	// HTTPRouteMetadata is the HTTPRoute's metadata (driverHttpRouteList).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	HTTPRouteMetadata *metav1.ObjectMeta `json:"httpRouteMetadata,omitempty"`
	// HTTPRouteSpec is the HTTPRoute's spec (driverHttpRouteList).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	HTTPRouteSpec *apiextensionsv1.JSON `json:"httpRouteSpec,omitempty"`
	// GRPCRouteMetadata is the GRPCRoute's metadata (driverGrpcRouteList).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	GRPCRouteMetadata *metav1.ObjectMeta `json:"grpcRouteMetadata,omitempty"`
	// GRPCRouteSpec is the GRPCRoute's spec (driverGrpcRouteList).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	GRPCRouteSpec *apiextensionsv1.JSON `json:"grpcRouteSpec,omitempty"`
}

// ApplicationTolerations are Apache's rules for restarts, timeouts, executors and clean-up.
type ApplicationTolerations struct {
	// RestartConfig says whether and how often a stopped attempt is followed by another.
	// +optional
	RestartConfig *RestartConfig `json:"restartConfig,omitempty"`
	// ApplicationTimeoutConfig bounds the start-up phases of an attempt.
	// +optional
	ApplicationTimeoutConfig *ApplicationTimeoutConfig `json:"applicationTimeoutConfig,omitempty"`
	// InstanceConfig are the executor thresholds of the running states.
	// +optional
	InstanceConfig *ExecutorInstanceConfig `json:"instanceConfig,omitempty"`
	// ResourceRetainPolicy says whether the last attempt's resources stay once it stopped:
	// Always, OnFailure or Never (the default).
	// +kubebuilder:validation:Enum=Always;Never;OnFailure
	// +optional
	ResourceRetainPolicy string `json:"resourceRetainPolicy,omitempty"`
	// ResourceRetainDurationMillis bounds how long retained resources stay; negative: for ever.
	// +kubebuilder:default=-1
	// +optional
	ResourceRetainDurationMillis *int64 `json:"resourceRetainDurationMillis,omitempty"`
	// TTLAfterStopMillis deletes the application this long after it stopped; negative: never.
	// +kubebuilder:default=-1
	// +optional
	TTLAfterStopMillis *int64 `json:"ttlAfterStopMillis,omitempty"`
}

// The retain policies.
const (
	RetainAlways    = "Always"
	RetainOnFailure = "OnFailure"
	RetainNever     = "Never"
)

// RestartConfig is Apache's restart policy and its limits.
type RestartConfig struct {
	// RestartPolicy is Never (the default), Always, OnFailure or OnInfrastructureFailure.
	// +kubebuilder:validation:Enum=Always;Never;OnFailure;OnInfrastructureFailure
	// +optional
	RestartPolicy string `json:"restartPolicy,omitempty"`
	// MaxRestartAttempts bounds all restarts (default 3).
	// +optional
	MaxRestartAttempts *int64 `json:"maxRestartAttempts,omitempty"`
	// RestartBackoffMillis is the wait before a restart (default 30000).
	// +optional
	RestartBackoffMillis *int64 `json:"restartBackoffMillis,omitempty"`
	// MaxRestartOnFailure bounds consecutive restarts after failures.
	// +optional
	MaxRestartOnFailure *int64 `json:"maxRestartOnFailure,omitempty"`
	// RestartBackoffMillisForFailure is the wait before a restart after a failure.
	// +optional
	RestartBackoffMillisForFailure *int64 `json:"restartBackoffMillisForFailure,omitempty"`
	// MaxRestartOnSchedulingFailure bounds consecutive restarts after scheduling failures.
	// +optional
	MaxRestartOnSchedulingFailure *int64 `json:"maxRestartOnSchedulingFailure,omitempty"`
	// RestartBackoffMillisForSchedulingFailure is the wait before a restart after a
	// scheduling failure.
	// +optional
	RestartBackoffMillisForSchedulingFailure *int64 `json:"restartBackoffMillisForSchedulingFailure,omitempty"`
	// RestartCounterResetMillis resets the counters after an attempt that ran this long;
	// negative: never. sparkhooks refuses other values (see docs/apache.md).
	// +kubebuilder:default=-1
	// +optional
	RestartCounterResetMillis *int64 `json:"restartCounterResetMillis,omitempty"`
}

// The restart policies.
const (
	RestartNever                   = "Never"
	RestartAlways                  = "Always"
	RestartOnFailure               = "OnFailure"
	RestartOnInfrastructureFailure = "OnInfrastructureFailure"
)

// ApplicationTimeoutConfig bounds the phases of an attempt, in milliseconds; zero or less
// turns a timeout off.
type ApplicationTimeoutConfig struct {
	// DriverStartTimeoutMillis bounds DriverRequested (default 300000).
	// +optional
	DriverStartTimeoutMillis *int64 `json:"driverStartTimeoutMillis,omitempty"`
	// DriverReadyTimeoutMillis bounds DriverStarted (default 300000).
	// +optional
	DriverReadyTimeoutMillis *int64 `json:"driverReadyTimeoutMillis,omitempty"`
	// ExecutorStartTimeoutMillis bounds DriverReady and InitializedBelowThresholdExecutors
	// (default 300000).
	// +optional
	ExecutorStartTimeoutMillis *int64 `json:"executorStartTimeoutMillis,omitempty"`
	// ForceTerminationGracePeriodMillis: sparkhooks refuses values other than the default
	// (see docs/apache.md).
	// +optional
	ForceTerminationGracePeriodMillis *int64 `json:"forceTerminationGracePeriodMillis,omitempty"`
	// TerminationRequeuePeriodMillis is how often Apache's operator looks again while it
	// cleans up; the hooks are asked again when something changes, so it has no use here.
	// +optional
	TerminationRequeuePeriodMillis *int64 `json:"terminationRequeuePeriodMillis,omitempty"`
}

// ExecutorInstanceConfig are the executor thresholds of the running states.
type ExecutorInstanceConfig struct {
	// InitExecutors ready executors make a starting application RunningHealthy; 0 makes it
	// healthy as soon as the driver is ready.
	// +optional
	InitExecutors int64 `json:"initExecutors,omitempty"`
	// MinExecutors below which a running application is RunningWithBelowThresholdExecutors.
	// +optional
	MinExecutors int64 `json:"minExecutors,omitempty"`
	// MaxExecutors above the ready ones make it RunningWithPartialCapacity, without dynamic
	// allocation.
	// +optional
	MaxExecutors int64 `json:"maxExecutors,omitempty"`
}

// The application states, Apache's names.
const (
	AppSubmitted                          = "Submitted"
	AppScheduledToRestart                 = "ScheduledToRestart"
	AppDriverRequested                    = "DriverRequested"
	AppDriverStarted                      = "DriverStarted"
	AppDriverReady                        = "DriverReady"
	AppInitializedBelowThresholdExecutors = "InitializedBelowThresholdExecutors"
	AppRunningHealthy                     = "RunningHealthy"
	AppRunningWithPartialCapacity         = "RunningWithPartialCapacity"
	AppRunningWithBelowThresholdExecutors = "RunningWithBelowThresholdExecutors"
	AppDriverStartTimedOut                = "DriverStartTimedOut"
	AppExecutorsStartTimedOut             = "ExecutorsStartTimedOut"
	AppDriverReadyTimedOut                = "DriverReadyTimedOut"
	AppSucceeded                          = "Succeeded"
	AppFailed                             = "Failed"
	AppSchedulingFailure                  = "SchedulingFailure"
	AppDriverEvicted                      = "DriverEvicted"
	AppResourceReleased                   = "ResourceReleased"
	AppTerminatedWithoutReleaseResources  = "TerminatedWithoutReleaseResources"
)

// ApplicationStatus is the Apache operator's application status, plus sparkhooks' record of
// the attempt core, its conditions and observedGeneration.
type ApplicationStatus struct {
	// CurrentState is the state now.
	// +optional
	CurrentState ApplicationState `json:"currentState,omitempty"`
	// StateTransitionHistory holds the states of the current attempt, keyed "0", "1", ... in
	// order of entry, the keys going on from attempt to attempt; a restart moves it to
	// previousAttemptSummary, and sparkhooks keeps at most the last 20 entries.
	// +optional
	StateTransitionHistory map[string]ApplicationState `json:"stateTransitionHistory,omitempty"`
	// PreviousAttemptSummary is the attempt before the current one.
	// +optional
	PreviousAttemptSummary *ApplicationAttemptSummary `json:"previousAttemptSummary,omitempty"`
	// CurrentAttemptSummary is the current attempt.
	// +optional
	CurrentAttemptSummary *ApplicationAttemptSummary `json:"currentAttemptSummary,omitempty"`
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are those of a Kubeflow-API SparkApplication (DriverRequested, DriverReady,
	// Complete, Failed, Expired, ...): kubectl wait and sparkhooks gc read them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Attempt is the attempt core's own record (its conditions are the ones above): the
	// memory the shared state machine decides from. A sparkhooks addition.
	// +optional
	Attempt *v1beta2.SparkApplicationStatus `json:"attempt,omitempty"`
}

// ApplicationState is one state of an application.
type ApplicationState struct {
	// CurrentStateSummary is the state's name.
	// +kubebuilder:validation:Enum=Submitted;ScheduledToRestart;DriverRequested;DriverStarted;DriverReady;InitializedBelowThresholdExecutors;RunningHealthy;RunningWithPartialCapacity;RunningWithBelowThresholdExecutors;DriverStartTimedOut;ExecutorsStartTimedOut;DriverReadyTimedOut;Succeeded;Failed;SchedulingFailure;DriverEvicted;ResourceReleased;TerminatedWithoutReleaseResources
	// +optional
	CurrentStateSummary string `json:"currentStateSummary,omitempty"`
	// LastTransitionTime is when the application entered the state (RFC 3339).
	// +optional
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	// Message says why.
	// +optional
	Message string `json:"message,omitempty"`
	// LastObservedDriverStatus is the driver Pod's status when the attempt stopped on it.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	LastObservedDriverStatus *corev1.PodStatus `json:"lastObservedDriverStatus,omitempty"`
}

// ApplicationAttemptSummary is Apache's record of one attempt.
type ApplicationAttemptSummary struct {
	// AttemptInfo identifies the attempt and counts restarts.
	// +optional
	AttemptInfo ApplicationAttemptInfo `json:"attemptInfo,omitempty"`
	// StateTransitionHistory is the attempt's history, kept for the previous attempt.
	// +optional
	StateTransitionHistory map[string]ApplicationState `json:"stateTransitionHistory,omitempty"`
}

// ApplicationAttemptInfo is Apache's attempt number and restart counters.
type ApplicationAttemptInfo struct {
	// ID is the attempt's number, from 0.
	ID int64 `json:"id"`
	// RestartCounter counts restarts.
	RestartCounter int64 `json:"restartCounter"`
	// FailureRestartCounter counts consecutive restarts after failures.
	FailureRestartCounter int64 `json:"failureRestartCounter"`
	// SchedulingFailureRestartCounter counts consecutive restarts after scheduling failures.
	SchedulingFailureRestartCounter int64 `json:"schedulingFailureRestartCounter"`
}
