package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sparkconn,singular=sparkconnect
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubeflow/spark-operator/pull/1298"
// +kubebuilder:subresource:status
// Kubeflow's columns, in its order; crds/crds_test.go pins them.
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name=Status,type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name=PodName,type=string,JSONPath=`.status.server.podName`

// SparkConnect is a long-running Spark Connect server: a Spark driver in client mode serving
// gRPC on port 15002, its executors, and a Service clients reach at
// sc://<service>.<namespace>.svc:15002. A server is never done: the hooks start it again when it
// stops or when its spec changes.
type SparkConnect struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec   SparkConnectSpec   `json:"spec"`
	Status SparkConnectStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SparkConnectList is a list of SparkConnects.
type SparkConnectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SparkConnect `json:"items"`
}

// SparkConnectSpec is the desired Spark Connect server.
type SparkConnectSpec struct {
	// SparkVersion is the Spark version of the image, for example 4.0.1; pod templates need 3.0
	// or later.
	SparkVersion string `json:"sparkVersion"`
	// Image is the image of the server and the executors, unless their template containers
	// name their own.
	// +optional
	Image *string `json:"image,omitempty"`
	// HadoopConf are Hadoop properties, passed as spark.hadoop.<key>.
	// +optional
	HadoopConf map[string]string `json:"hadoopConf,omitempty"`
	// SparkConf are Spark properties of the server and its executors.
	// +optional
	SparkConf map[string]string `json:"sparkConf,omitempty"`
	// Server is the Spark Connect server: the driver.
	Server ServerSpec `json:"server"`
	// Executor is the executors the server starts.
	Executor ExecutorSpec `json:"executor"`
	// DynamicAllocation lets the server scale its executors with the load.
	// +optional
	DynamicAllocation *v1beta2.DynamicAllocation `json:"dynamicAllocation,omitempty"`
}

// SparkPodSpec is what the server and the executors have in common.
type SparkPodSpec struct {
	// Cores is the number of cores of each Spark process (spark.driver.cores or
	// spark.executor.cores).
	// +kubebuilder:validation:Minimum=1
	// +optional
	Cores *int32 `json:"cores,omitempty"`
	// Memory is the JVM heap, in Spark's notation (512m, 2g).
	// +optional
	Memory *string `json:"memory,omitempty"`
	// Template is the Pod the Spark Pod starts from: service account, node selector,
	// tolerations, volumes, security contexts. A template without containers is accepted.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// ServerSpec is the Spark Connect server.
type ServerSpec struct {
	SparkPodSpec `json:",inline"`
	// ServiceAccount is the server's service account, which also creates its executors. It wins
	// over the template's serviceAccountName; without either, the operator's default
	// (--default-service-account) applies.
	// +optional
	ServiceAccount *string `json:"serviceAccount,omitempty"`
	// Service is the base of the server's Service: its name (default <name>-server), labels,
	// annotations and type. The ports and the selector are the server's.
	// +optional
	Service *corev1.Service `json:"service,omitempty"`
	// GRPCRoute asks for a Gateway API GRPCRoute to the server's gRPC port (15002), where the
	// operator's registration declares GRPCRoutes (chart value gatewayAPI.enabled). A
	// sparkhooks extension.
	// +optional
	GRPCRoute *v1beta2.GRPCRouteConfiguration `json:"grpcRoute,omitempty"`
	// HTTPRoute asks for a Gateway API HTTPRoute to the server's Spark UI, where the operator's
	// registration declares HTTPRoutes. A sparkhooks extension.
	// +optional
	HTTPRoute *v1beta2.HTTPRouteConfiguration `json:"httpRoute,omitempty"`
}

// ExecutorSpec is the executors of the server.
type ExecutorSpec struct {
	SparkPodSpec `json:",inline"`
	// Instances is the number of executors (spark.executor.instances).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Instances *int32 `json:"instances,omitempty"`
}

// SparkConnectState is the server's state, which the Kubeflow SDK waits on.
// +kubebuilder:validation:Enum="";Provisioning;Ready;NotReady;Failed
type SparkConnectState string

// The states. Clients connect on Ready and give up on Failed.
const (
	StateProvisioning SparkConnectState = "Provisioning"
	StateReady        SparkConnectState = "Ready"
	StateNotReady     SparkConnectState = "NotReady"
	StateFailed       SparkConnectState = "Failed"
)

// SparkConnectStatus is the observed state of a SparkConnect.
type SparkConnectStatus struct {
	// Conditions: ServerPodReady as in Kubeflow, and SpecValid.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// State is Provisioning until the first server is ready, then Ready or NotReady; Failed
	// when the spec cannot make a server.
	// +optional
	State SparkConnectState `json:"state,omitempty"`
	// Server is where clients find the server.
	// +optional
	Server SparkConnectServerStatus `json:"server,omitempty"`
	// Executors counts the executor Pods by lower-cased phase, for example {"running": 2}.
	// +optional
	Executors map[string]int `json:"executors,omitempty"`
	// StartTime is when the first server was requested.
	// +optional
	StartTime metav1.Time `json:"startTime,omitempty"`
	// LastUpdateTime is when the status last changed.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// SubmissionID identifies the server Pod of the current spec (its submission-id label).
	// +optional
	SubmissionID string `json:"submissionID,omitempty"`
	// SubmittedSpecHash is the hash of the spec the server was built from; a different spec
	// restarts the server.
	// +optional
	SubmittedSpecHash string `json:"submittedSpecHash,omitempty"`
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// SparkConnectServerStatus locates the server.
type SparkConnectServerStatus struct {
	// PodName is the server Pod, <name>-server.
	// +optional
	PodName string `json:"podName,omitempty"`
	// PodIP is the server Pod's IP.
	// +optional
	PodIP string `json:"podIp,omitempty"`
	// ServiceName is the Service clients connect to on port 15002.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// GRPCRouteName is the server's GRPCRoute (Gateway API). A sparkhooks extension.
	// +optional
	GRPCRouteName string `json:"grpcRouteName,omitempty"`
	// WebUIHTTPRouteName is the server's Spark UI HTTPRoute. A sparkhooks extension.
	// +optional
	WebUIHTTPRouteName string `json:"webUIHTTPRouteName,omitempty"`
	// WebUIHTTPRouteAddress is the Spark UI's URL through that route, as in a
	// SparkApplication's status.driverInfo. A sparkhooks extension.
	// +optional
	WebUIHTTPRouteAddress string `json:"webUIHTTPRouteAddress,omitempty"`
}
