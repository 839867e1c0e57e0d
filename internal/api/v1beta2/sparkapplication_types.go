package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sparkapp,singular=sparkapplication
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubeflow/spark-operator/pull/1298"
// +kubebuilder:subresource:status
// The columns are Kubeflow's, types included (Attempts, Start and Finish are strings there),
// since scripts parse `kubectl get sparkapp`; crds/printer_columns_test.go pins them.
// +kubebuilder:printcolumn:name=Suspend,type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name=Status,type=string,JSONPath=`.status.applicationState.state`
// +kubebuilder:printcolumn:name=Attempts,type=string,JSONPath=`.status.executionAttempts`
// +kubebuilder:printcolumn:name=Start,type=string,JSONPath=`.status.lastSubmissionAttemptTime`
// +kubebuilder:printcolumn:name=Finish,type=string,JSONPath=`.status.terminationTime`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

// SparkApplication is one Spark application run on Kubernetes in cluster mode: the hooks build
// its driver Pod, configuration and Services, and follow it to completion.
type SparkApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="(has(self.managedBy) ? self.managedBy : 'sparkoperator.k8s.io/spark-operator') == (has(oldSelf.managedBy) ? oldSelf.managedBy : 'sparkoperator.k8s.io/spark-operator')",message="spec.managedBy is immutable: it is chosen when the SparkApplication is created",fieldPath=".managedBy"
	Spec   SparkApplicationSpec   `json:"spec"`
	Status SparkApplicationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SparkApplicationList is a list of SparkApplications.
type SparkApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SparkApplication `json:"items"`
}

// The CEL rules repeat cheap checks of ValidateSparkApplicationSpec, so that a cluster without
// the validating webhook refuses them too; they must never refuse what it accepts (a test in
// crds/ holds them to that). The sparkConf keys are those forbiddenConf refuses.
// +kubebuilder:validation:XValidation:rule="!has(self.sparkConf) || !('spark.master' in self.sparkConf) || self.sparkConf['spark.master'].startsWith('spark://')",message="sparkConf may set spark.master only to a standalone cluster's master (spark://<cluster>-master-svc:7077): the operator sets the Kubernetes one",fieldPath=".sparkConf"
// +kubebuilder:validation:XValidation:rule="!has(self.sparkConf) || !['spark.kubernetes.driver.master', 'spark.kubernetes.container.image', 'spark.kubernetes.driver.container.image', 'spark.kubernetes.executor.container.image', 'spark.kubernetes.authenticate.driver.serviceAccountName', 'spark.kubernetes.authenticate.executor.serviceAccountName', 'spark.kubernetes.authenticate.oauthToken', 'spark.kubernetes.authenticate.oauthTokenFile', 'spark.kubernetes.authenticate.driver.oauthToken', 'spark.kubernetes.authenticate.driver.oauthTokenFile', 'spark.kubernetes.authenticate.executor.oauthToken', 'spark.kubernetes.authenticate.executor.oauthTokenFile', 'spark.kubernetes.authenticate.submission.oauthToken', 'spark.kubernetes.authenticate.submission.oauthTokenFile', 'spark.kubernetes.authenticate.driver.mounted.oauthToken', 'spark.kubernetes.authenticate.driver.mounted.oauthTokenFile'].exists(k, k in self.sparkConf)",message="sparkConf must not set the Kubernetes master, the container images, the service accounts or the OAuth tokens: the operator sets them from the spec (image, driver.serviceAccount, executor.serviceAccount)",fieldPath=".sparkConf"
// +kubebuilder:validation:XValidation:rule="!has(self.nodeSelector) || size(self.nodeSelector) == 0 || ((!has(self.driver.nodeSelector) || size(self.driver.nodeSelector) == 0) && (!has(self.executor.nodeSelector) || size(self.executor.nodeSelector) == 0))",message="spec.nodeSelector cannot be combined with driver.nodeSelector or executor.nodeSelector: put all keys either in spec.nodeSelector, or in the driver's and the executor's"

// SparkApplicationSpec is what the user asks for: everything spark-submit would be told, plus
// how the operator should restart, expose and clean up the application.
type SparkApplicationSpec struct {
	// Type is the language of the application. It selects the default memory overhead factor
	// (0.1 for JVM languages, 0.4 for Python and R).
	// +kubebuilder:validation:Enum=Java;Python;Scala;R
	Type SparkApplicationType `json:"type"`
	// SparkVersion is the Spark version of the image, for example "3.5.5" or "4.0.1".
	SparkVersion string `json:"sparkVersion"`
	// Mode is the deploy mode. Only cluster mode, in which the driver runs in its own Pod, is
	// supported; defaults to cluster.
	// +kubebuilder:validation:Enum=cluster;client
	// +optional
	Mode DeployMode `json:"mode,omitempty"`
	// ProxyUser is the user the driver impersonates (spark-submit --proxy-user).
	// +optional
	ProxyUser *string `json:"proxyUser,omitempty"`
	// Image is the container image of the driver and the executors, unless spec.driver.image or
	// spec.executor.image overrides it.
	// +optional
	Image *string `json:"image,omitempty"`
	// ImagePullPolicy is the pull policy of the Spark containers (Always, IfNotPresent or Never).
	// +optional
	ImagePullPolicy *string `json:"imagePullPolicy,omitempty"`
	// ImagePullSecrets names Secrets in the application's namespace used to pull the image.
	// +optional
	ImagePullSecrets []string `json:"imagePullSecrets,omitempty"`
	// MainClass is the fully qualified entry class of a Java or Scala application.
	// +optional
	MainClass *string `json:"mainClass,omitempty"`
	// MainApplicationFile is the jar, Python or R file to run, as a URI such as
	// local:///opt/spark/examples/jars/spark-examples.jar or s3a://bucket/app.py. It may be omitted
	// for a Java or Scala application whose mainClass is already on the image's classpath.
	// +optional
	MainApplicationFile *string `json:"mainApplicationFile,omitempty"`
	// Arguments are passed to the main class or file, in order.
	// +optional
	Arguments []string `json:"arguments,omitempty"`
	// SparkConf holds Spark properties, as spark-submit --conf would take them. Typed fields of
	// this spec (for example driver.cores) win over the same key here.
	// +optional
	SparkConf map[string]string `json:"sparkConf,omitempty"`
	// HadoopConf holds Hadoop properties; each key is passed to Spark with the "spark.hadoop."
	// prefix added.
	// +optional
	HadoopConf map[string]string `json:"hadoopConf,omitempty"`
	// SparkConfigMap names a ConfigMap of Spark configuration files (for example
	// log4j2.properties); it is mounted in the Spark containers and SPARK_CONF_DIR points to it.
	// +optional
	SparkConfigMap *string `json:"sparkConfigMap,omitempty"`
	// HadoopConfigMap names a ConfigMap of Hadoop configuration files (for example
	// core-site.xml); it is mounted in the Spark containers and HADOOP_CONF_DIR points to it.
	// +optional
	HadoopConfigMap *string `json:"hadoopConfigMap,omitempty"`
	// Volumes are the Pod volumes the driver and executors may mount through their volumeMounts.
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// Driver describes the driver Pod.
	Driver DriverSpec `json:"driver"`
	// Executor describes the executor Pods.
	Executor ExecutorSpec `json:"executor"`
	// Deps lists the application's dependencies (jars, files, packages, ...).
	// +optional
	Deps Dependencies `json:"deps,omitempty"`
	// RestartPolicy says whether and when a terminated application is run again.
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
	// NodeSelector is applied to the driver and executor Pods. It cannot be combined with
	// driver.nodeSelector or executor.nodeSelector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// FailureRetries is accepted for compatibility and has no effect; use
	// restartPolicy.onFailureRetries.
	// +optional
	FailureRetries *int32 `json:"failureRetries,omitempty"`
	// RetryInterval is accepted for compatibility and has no effect; use
	// restartPolicy.onFailureRetryInterval.
	// +optional
	RetryInterval *int64 `json:"retryInterval,omitempty"`
	// PythonVersion is the major Python version of a PySpark application ("2" or "3").
	// +kubebuilder:validation:Enum="2";"3"
	// +optional
	PythonVersion *string `json:"pythonVersion,omitempty"`
	// MemoryOverheadFactor is the fraction of the heap added as non-heap memory to each Spark
	// container, for example "0.2". driver.memoryOverhead and executor.memoryOverhead take
	// precedence over it.
	// +optional
	MemoryOverheadFactor *string `json:"memoryOverheadFactor,omitempty"`
	// Monitoring configures Spark metrics and their export to Prometheus.
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`
	// BatchScheduler names the batch scheduler of the Spark Pods, for example volcano or
	// yunikorn.
	// +optional
	BatchScheduler *string `json:"batchScheduler,omitempty"`
	// TimeToLiveSeconds is how long the SparkApplication object is kept after it terminates
	// before it is deleted, together with everything it owns. Unset keeps it forever; the
	// most is 315360000 (10 years).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=315360000
	// +optional
	TimeToLiveSeconds *int64 `json:"timeToLiveSeconds,omitempty"`
	// BatchSchedulerOptions tunes the batch scheduler (queue, priority, minimum resources).
	// +optional
	BatchSchedulerOptions *BatchSchedulerConfiguration `json:"batchSchedulerOptions,omitempty"`
	// SparkUIOptions configures the Service and Ingress that expose the Spark UI.
	// +optional
	SparkUIOptions *SparkUIConfiguration `json:"sparkUIOptions,omitempty"`
	// DriverIngressOptions exposes further driver ports, each through its own Service and
	// Ingress.
	// +optional
	DriverIngressOptions []DriverIngressConfiguration `json:"driverIngressOptions,omitempty"`
	// DynamicAllocation lets Spark scale the number of executors with the workload.
	// +optional
	DynamicAllocation *DynamicAllocation `json:"dynamicAllocation,omitempty"`
	// Suspend, when true, stops a running application (its driver is deleted) and keeps a new
	// one from starting until it is set back to false. Queueing systems such as Kueue use it.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// ManagedBy names the controller that runs the application. Unset or
	// sparkoperator.k8s.io/spark-operator: sparkhooks. kueue.x-k8s.io/multikueue: Kueue's
	// MultiKueue, which runs a copy on a worker cluster and mirrors its status here; sparkhooks
	// then creates nothing for it and leaves its status alone. It cannot change once the
	// SparkApplication exists.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self in ['sparkoperator.k8s.io/spark-operator', 'kueue.x-k8s.io/multikueue']",message="spec.managedBy must be sparkoperator.k8s.io/spark-operator (sparkhooks, the default) or kueue.x-k8s.io/multikueue"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
	// DriverPodDisruptionBudget, when true, asks for a PodDisruptionBudget that keeps voluntary
	// evictions (node drains) away from the running driver.
	// +optional
	DriverPodDisruptionBudget *bool `json:"driverPodDisruptionBudget,omitempty"`

	// Timeouts bound how long each start-up phase of an attempt may take; a phase that runs
	// over fails the attempt, which the restart policy may then retry. This is a sparkhooks
	// extension; unset means no timeouts.
	// +optional
	Timeouts *SparkApplicationTimeouts `json:"timeouts,omitempty"`
	// ResourceRetainPolicy says which of the application's resources (driver Pod, its
	// ConfigMap and Services) are kept once the application has terminated: Always keeps them
	// (so that `kubectl logs` works on the driver) until timeToLiveSeconds removes the
	// application, OnFailure keeps them only for a FAILED application, Never deletes them as
	// soon as the application terminates. This is a sparkhooks extension; unset means Always,
	// as with the Kubeflow operator.
	// +optional
	ResourceRetainPolicy *ResourceRetainPolicy `json:"resourceRetainPolicy,omitempty"`
}

// SparkApplicationType is the language of a Spark application.
type SparkApplicationType string

// The supported application languages.
const (
	SparkApplicationTypeJava   SparkApplicationType = "Java"
	SparkApplicationTypeScala  SparkApplicationType = "Scala"
	SparkApplicationTypePython SparkApplicationType = "Python"
	SparkApplicationTypeR      SparkApplicationType = "R"
)

// DeployMode is where the driver runs.
type DeployMode string

// Deploy modes. Only cluster mode is run by sparkhooks; the others exist for compatibility.
const (
	DeployModeCluster         DeployMode = "cluster"
	DeployModeClient          DeployMode = "client"
	DeployModeInClusterClient DeployMode = "in-cluster-client"
)

// RestartPolicy says whether and when a terminated application is run again.
type RestartPolicy struct {
	// Type is Never (the default), OnFailure (retry failed submissions and runs within the
	// limits below) or Always (run again after every termination, successful or not).
	// +kubebuilder:validation:Enum=Never;Always;OnFailure
	// +optional
	Type RestartPolicyType `json:"type,omitempty"`
	// OnSubmissionFailureRetries is how many times a failed submission is retried under
	// OnFailure. Unset means no retries.
	// +kubebuilder:validation:Minimum=0
	// +optional
	OnSubmissionFailureRetries *int32 `json:"onSubmissionFailureRetries,omitempty"`
	// OnFailureRetries is how many times a failed run is retried under OnFailure. Unset means
	// no retries.
	// +kubebuilder:validation:Minimum=0
	// +optional
	OnFailureRetries *int32 `json:"onFailureRetries,omitempty"`
	// OnSubmissionFailureRetryInterval is the base wait, in seconds, before a failed submission
	// is retried; the wait grows linearly with the number of submission attempts. Defaults to
	// 5 unless the type is Never; at most 315360000 (10 years).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=315360000
	// +optional
	OnSubmissionFailureRetryInterval *int64 `json:"onSubmissionFailureRetryInterval,omitempty"`
	// OnFailureRetryInterval is the base wait, in seconds, before a failed run is retried; the
	// wait grows linearly with the number of submission attempts. Defaults to 5 unless the type
	// is Never; at most 315360000 (10 years).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=315360000
	// +optional
	OnFailureRetryInterval *int64 `json:"onFailureRetryInterval,omitempty"`
}

// RestartPolicyType is the kind of restart policy.
type RestartPolicyType string

// Restart policy types.
const (
	RestartPolicyNever     RestartPolicyType = "Never"
	RestartPolicyOnFailure RestartPolicyType = "OnFailure"
	RestartPolicyAlways    RestartPolicyType = "Always"
)

// BatchSchedulerConfiguration tunes the batch scheduler of the Spark Pods.
type BatchSchedulerConfiguration struct {
	// Queue is the scheduler queue of the application (Volcano queue, YuniKorn queue label).
	// +optional
	Queue *string `json:"queue,omitempty"`
	// PriorityClassName is the PriorityClass of the application's pod group.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
	// Resources replaces the computed minimum resources of the application's pod group.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
}

// SparkUIConfiguration configures the Service and Ingress of the Spark UI.
type SparkUIConfiguration struct {
	// ServicePort is the port of the UI Service; the target is always spark.ui.port (4040
	// unless set). Defaults to 4040.
	// +optional
	ServicePort *int32 `json:"servicePort,omitempty"`
	// ServicePortName is the name of the UI Service port; service meshes use it to detect the
	// protocol. Defaults to spark-driver-ui-port.
	// +optional
	ServicePortName *string `json:"servicePortName,omitempty"`
	// ServiceType is the type of the UI Service. Defaults to ClusterIP.
	// +optional
	ServiceType *corev1.ServiceType `json:"serviceType,omitempty"`
	// ServiceAnnotations are added to the UI Service.
	// +optional
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`
	// ServiceLabels are added to the UI Service.
	// +optional
	ServiceLabels map[string]string `json:"serviceLabels,omitempty"`
	// IngressAnnotations are added to the UI Ingress, for example the ingress class.
	// +optional
	IngressAnnotations map[string]string `json:"ingressAnnotations,omitempty"`
	// IngressTLS is the TLS configuration of the UI Ingress.
	// +optional
	IngressTLS []networkingv1.IngressTLS `json:"ingressTLS,omitempty"`
	// HTTPRoute asks for a Gateway API HTTPRoute to the UI Service, where the operator's
	// registration declares HTTPRoutes (chart value gatewayAPI.enabled). A sparkhooks extension.
	// +optional
	HTTPRoute *HTTPRouteConfiguration `json:"httpRoute,omitempty"`
}

// DriverIngressConfiguration exposes one more driver port through a Service and an Ingress, or
// (a sparkhooks extension) Gateway API routes instead of or beside the Ingress.
// +kubebuilder:validation:XValidation:rule="(has(self.ingressURLFormat) && size(self.ingressURLFormat) > 0) || has(self.httpRoute) || has(self.grpcRoute)",message="the Ingress URL, for example {{$appName}}.spark.example.com, or an httpRoute or grpcRoute",fieldPath=".ingressURLFormat"
type DriverIngressConfiguration struct {
	// ServicePort is the driver port to expose; the Service uses it as port and target port.
	ServicePort *int32 `json:"servicePort"`
	// ServicePortName is the name of the Service port.
	ServicePortName *string `json:"servicePortName"`
	// ServiceType is the type of the Service. Defaults to ClusterIP.
	// +optional
	ServiceType *corev1.ServiceType `json:"serviceType,omitempty"`
	// ServiceAnnotations are added to the Service.
	// +optional
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`
	// ServiceLabels are added to the Service.
	// +optional
	ServiceLabels map[string]string `json:"serviceLabels,omitempty"`
	// IngressURLFormat is the URL of the Ingress. It may contain {{$appName}},
	// {{$appNamespace}} and {{$appId}}; http:// is assumed when there is no scheme. Required
	// unless the port has a route (httpRoute or grpcRoute); empty means no Ingress.
	// +optional
	IngressURLFormat string `json:"ingressURLFormat,omitempty"`
	// IngressAnnotations are added to the Ingress.
	// +optional
	IngressAnnotations map[string]string `json:"ingressAnnotations,omitempty"`
	// IngressTLS is the TLS configuration of the Ingress.
	// +optional
	IngressTLS []networkingv1.IngressTLS `json:"ingressTLS,omitempty"`
	// HTTPRoute asks for a Gateway API HTTPRoute to the port, where the operator's registration
	// declares HTTPRoutes. The route strips its path prefix. A sparkhooks extension.
	// +optional
	HTTPRoute *HTTPRouteConfiguration `json:"httpRoute,omitempty"`
	// GRPCRoute asks for a Gateway API GRPCRoute to the port, for example Spark Connect's 15002
	// on a driver that runs the Spark Connect server, where the operator's registration declares
	// GRPCRoutes. A sparkhooks extension.
	// +optional
	GRPCRoute *GRPCRouteConfiguration `json:"grpcRoute,omitempty"`
}

// Dependencies are the files and packages Spark fetches for the application.
type Dependencies struct {
	// Jars are added to the driver and executor classpaths (spark-submit --jars).
	// +optional
	Jars []string `json:"jars,omitempty"`
	// Files are placed in the working directory of each executor (--files).
	// +optional
	Files []string `json:"files,omitempty"`
	// PyFiles are .py, .zip or .egg files put on the PYTHONPATH (--py-files).
	// +optional
	PyFiles []string `json:"pyFiles,omitempty"`
	// Packages are Maven coordinates groupId:artifactId:version resolved with their
	// dependencies (--packages).
	// +optional
	Packages []string `json:"packages,omitempty"`
	// ExcludePackages are groupId:artifactId pairs left out when resolving packages
	// (--exclude-packages).
	// +optional
	ExcludePackages []string `json:"excludePackages,omitempty"`
	// Repositories are extra Maven repositories searched for packages (--repositories).
	// +optional
	Repositories []string `json:"repositories,omitempty"`
	// Archives are extracted into the working directory of each executor (--archives).
	// +optional
	Archives []string `json:"archives,omitempty"`
}

// SparkPodSpec is what the driver and the executors have in common.
type SparkPodSpec struct {
	// Template is a Pod template the Spark Pod starts from, for settings no other field covers
	// (Spark 3.0 or later). The fields of this spec win over the template.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
	// Cores is the number of cores of each Spark process (spark.driver.cores or
	// spark.executor.cores). Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Cores *int32 `json:"cores,omitempty"`
	// CoreLimit is the CPU limit of the Spark container, as a Kubernetes quantity such as "1"
	// or "1500m".
	// +optional
	CoreLimit *string `json:"coreLimit,omitempty"`
	// Memory is the JVM heap of the Spark process, as Spark reads it: a whole number with an
	// optional unit k, m, g or t ("512m", "2g"); without a unit it is MiB. Defaults to 1g.
	// +optional
	Memory *string `json:"memory,omitempty"`
	// MemoryLimit is the memory limit of the Spark container, as a Spark memory string ("4g")
	// or a Kubernetes quantity ("4Gi").
	// +optional
	MemoryLimit *string `json:"memoryLimit,omitempty"`
	// MemoryOverhead is the non-heap memory added to the container, as a Spark memory string
	// (MiB without a unit). It overrides memoryOverheadFactor.
	// +optional
	MemoryOverhead *string `json:"memoryOverhead,omitempty"`
	// GPU requests GPUs for the Spark container.
	// +optional
	GPU *GPUSpec `json:"gpu,omitempty"`
	// Image overrides spec.image for this role.
	// +optional
	Image *string `json:"image,omitempty"`
	// ConfigMaps are mounted read-only in the Spark container, each at its path.
	// +optional
	ConfigMaps []NamePath `json:"configMaps,omitempty"`
	// Secrets are mounted in the Spark container, each at its path; some types also set an
	// environment variable pointing at the mounted file.
	// +optional
	Secrets []SecretInfo `json:"secrets,omitempty"`
	// Env is added to the environment of the Spark container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// EnvVars is added to the environment of the Spark container.
	// Deprecated: use env.
	// +optional
	EnvVars map[string]string `json:"envVars,omitempty"`
	// EnvFrom adds environment variables from ConfigMaps and Secrets to the Spark container.
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// EnvSecretKeyRefs maps environment variable names to Secret keys.
	// Deprecated: use env with valueFrom.secretKeyRef.
	// +optional
	EnvSecretKeyRefs map[string]NameKey `json:"envSecretKeyRefs,omitempty"`
	// Labels are added to the Pod.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to the Pod.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// VolumeMounts mount volumes of spec.volumes in the Spark container. Volumes named
	// spark-local-dir-* become Spark's local (scratch) directories.
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// Affinity replaces the Pod's affinity.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Tolerations are added to the Pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// PodSecurityContext replaces the Pod's security context.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// SecurityContext replaces the Spark container's security context.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// SchedulerName is the scheduler of the Pod; spec.batchScheduler takes precedence.
	// +optional
	SchedulerName *string `json:"schedulerName,omitempty"`
	// Sidecars are added to the Pod next to the Spark container.
	// +optional
	Sidecars []corev1.Container `json:"sidecars,omitempty"`
	// InitContainers run to completion before the Spark container starts.
	// +optional
	InitContainers []corev1.Container `json:"initContainers,omitempty"`
	// HostNetwork runs the Pod in the node's network namespace.
	// +optional
	HostNetwork *bool `json:"hostNetwork,omitempty"`
	// NodeSelector is added to the Pod's node selector. It cannot be combined with
	// spec.nodeSelector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// DNSConfig replaces the Pod's DNS configuration.
	// +optional
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`
	// TerminationGracePeriodSeconds is the Pod's termination grace period.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// ServiceAccount is the ServiceAccount of the Pod. The driver's needs the right to manage
	// Pods, Services and ConfigMaps in the namespace.
	// +optional
	ServiceAccount *string `json:"serviceAccount,omitempty"`
	// HostAliases are added to the Pod's /etc/hosts.
	// +optional
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`
	// ShareProcessNamespace puts all containers of the Pod in one process namespace.
	// +optional
	ShareProcessNamespace *bool `json:"shareProcessNamespace,omitempty"`
}

// DriverSpec describes the driver Pod.
type DriverSpec struct {
	SparkPodSpec `json:",inline"`
	// PodName is the name of the driver Pod. Defaults to <application name>-driver.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	PodName *string `json:"podName,omitempty"`
	// CoreRequest is the CPU request of the driver container, as a Kubernetes quantity such as
	// "500m"; it overrides cores for the request only.
	// +optional
	CoreRequest *string `json:"coreRequest,omitempty"`
	// JavaOptions are extra JVM options of the driver (spark.driver.extraJavaOptions).
	// +optional
	JavaOptions *string `json:"javaOptions,omitempty"`
	// Lifecycle is the lifecycle (postStart, preStop) of the driver container.
	// +optional
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`
	// KubernetesMaster is the API server URL the driver uses to manage executors. Defaults to
	// https://kubernetes.default.svc.
	// +optional
	KubernetesMaster *string `json:"kubernetesMaster,omitempty"`
	// ServiceAnnotations are added to the headless driver Service the executors connect to.
	// +optional
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`
	// ServiceLabels are added to the headless driver Service the executors connect to.
	// +optional
	ServiceLabels map[string]string `json:"serviceLabels,omitempty"`
	// Ports are added to the driver container.
	// +optional
	Ports []Port `json:"ports,omitempty"`
	// PriorityClassName is the PriorityClass of the driver Pod.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
}

// ExecutorSpec describes the executor Pods. The driver creates them; this spec reaches them
// through Spark properties and the executor Pod template.
type ExecutorSpec struct {
	SparkPodSpec `json:",inline"`
	// Instances is the number of executors (spark.executor.instances). Defaults to 1 unless
	// dynamic allocation is on.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Instances *int32 `json:"instances,omitempty"`
	// CoreRequest is the CPU request of each executor container, as a Kubernetes quantity such
	// as "500m"; it overrides cores for the request only.
	// +optional
	CoreRequest *string `json:"coreRequest,omitempty"`
	// JavaOptions are extra JVM options of the executors (spark.executor.extraJavaOptions).
	// +optional
	JavaOptions *string `json:"javaOptions,omitempty"`
	// Lifecycle is the lifecycle (postStart, preStop) of the executor containers.
	// +optional
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`
	// DeleteOnTermination says whether the driver deletes executor Pods that have terminated
	// (spark.kubernetes.executor.deleteOnTermination, default true).
	// +optional
	DeleteOnTermination *bool `json:"deleteOnTermination,omitempty"`
	// Ports are added to the executor containers.
	// +optional
	Ports []Port `json:"ports,omitempty"`
	// PriorityClassName is the PriorityClass of the executor Pods.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
}

// NamePath names an object and the path it is mounted at.
type NamePath struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// SecretType says how a mounted Secret is used.
type SecretType string

// Secret types.
const (
	// SecretTypeGCPServiceAccount is a GCP service account key: GOOGLE_APPLICATION_CREDENTIALS
	// points at <path>/key.json.
	SecretTypeGCPServiceAccount SecretType = "GCPServiceAccount"
	// SecretTypeHadoopDelegationToken is a Hadoop delegation token: HADOOP_TOKEN_FILE_LOCATION
	// points at <path>/hadoop.token.
	SecretTypeHadoopDelegationToken SecretType = "HadoopDelegationToken"
	// SecretTypeGeneric is mounted and nothing more.
	SecretTypeGeneric SecretType = "Generic"
)

// SecretInfo is a Secret mounted in a Spark container.
type SecretInfo struct {
	Name string     `json:"name"`
	Path string     `json:"path"`
	Type SecretType `json:"secretType"`
}

// NameKey is a key of a named Secret.
type NameKey struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Port is a container port of a Spark container.
type Port struct {
	Name          string `json:"name"`
	Protocol      string `json:"protocol"`
	ContainerPort int32  `json:"containerPort"`
}

// GPUSpec requests GPUs of one resource name.
type GPUSpec struct {
	// Name is the extended resource name, for example nvidia.com/gpu.
	Name string `json:"name"`
	// Quantity is the number of GPUs per Pod.
	Quantity int64 `json:"quantity"`
}

// Requested reports whether g asks for anything: an empty gpu: {}, which both CRDs accept, asks
// for nothing and is ignored, as the Kubeflow operator ignores it.
func (g *GPUSpec) Requested() bool {
	return g != nil && (g.Name != "" || g.Quantity != 0)
}

// MonitoringSpec configures Spark metrics.
type MonitoringSpec struct {
	// ExposeDriverMetrics exports the driver's metrics through the Prometheus JMX exporter.
	ExposeDriverMetrics bool `json:"exposeDriverMetrics"`
	// ExposeExecutorMetrics exports the executors' metrics through the Prometheus JMX exporter.
	ExposeExecutorMetrics bool `json:"exposeExecutorMetrics"`
	// MetricsProperties is the content of Spark's metrics.properties. Defaults to a JMX sink
	// with the JVM source.
	// +optional
	MetricsProperties *string `json:"metricsProperties,omitempty"`
	// MetricsPropertiesFile is the path of metrics.properties in the image. Defaults to
	// /etc/metrics/conf/metrics.properties.
	// +optional
	MetricsPropertiesFile *string `json:"metricsPropertiesFile,omitempty"`
	// Prometheus configures the Prometheus JMX exporter Java agent.
	// +optional
	Prometheus *PrometheusSpec `json:"prometheus,omitempty"`
}

// PrometheusSpec configures the Prometheus JMX exporter Java agent.
type PrometheusSpec struct {
	// JmxExporterJar is the path of the JMX exporter jar in the image.
	JmxExporterJar string `json:"jmxExporterJar"`
	// Port is the port the exporter serves metrics on. Defaults to 8090.
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=49151
	// +optional
	Port *int32 `json:"port,omitempty"`
	// PortName is the name of the exporter's container port. Defaults to jmx-exporter.
	// +optional
	PortName *string `json:"portName,omitempty"`
	// ConfigFile is the path of the exporter configuration in the image; it wins over
	// configuration.
	// +optional
	ConfigFile *string `json:"configFile,omitempty"`
	// Configuration is the content of the exporter configuration (prometheus.yaml). Defaults to
	// rules for Spark's driver and executor metrics.
	// +optional
	Configuration *string `json:"configuration,omitempty"`
}

// DynamicAllocation lets Spark scale the number of executors with the workload.
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || !has(self.maxExecutors) || !has(self.minExecutors) || self.minExecutors <= self.maxExecutors",message="must be <= maxExecutors",fieldPath=".minExecutors"
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || !has(self.maxExecutors) || !has(self.initialExecutors) || self.initialExecutors <= self.maxExecutors",message="must be <= maxExecutors",fieldPath=".initialExecutors"
type DynamicAllocation struct {
	// Enabled turns dynamic allocation on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// InitialExecutors is the number of executors to start with.
	// +optional
	InitialExecutors *int32 `json:"initialExecutors,omitempty"`
	// MinExecutors is the lower bound of the number of executors.
	// +optional
	MinExecutors *int32 `json:"minExecutors,omitempty"`
	// MaxExecutors is the upper bound of the number of executors.
	// +optional
	MaxExecutors *int32 `json:"maxExecutors,omitempty"`
	// ShuffleTrackingEnabled keeps executors that hold shuffle data alive, which dynamic
	// allocation needs without an external shuffle service. Defaults to true.
	// +optional
	ShuffleTrackingEnabled *bool `json:"shuffleTrackingEnabled,omitempty"`
	// ShuffleTrackingTimeout is how long, in milliseconds, an executor holding shuffle data is
	// kept while idle.
	// +optional
	ShuffleTrackingTimeout *int64 `json:"shuffleTrackingTimeout,omitempty"`
}

// SparkApplicationStatus is what the operator observed and decided.
type SparkApplicationStatus struct {
	// SparkApplicationID is Spark's application id (spark.app.id) of the current attempt.
	// +optional
	SparkApplicationID string `json:"sparkApplicationId,omitempty"`
	// SubmissionID identifies the current attempt; the attempt's Pods carry it in the label
	// sparkoperator.k8s.io/submission-id.
	// +optional
	SubmissionID string `json:"submissionID,omitempty"`
	// LastSubmissionAttemptTime is when the current attempt was submitted.
	// +nullable
	// +optional
	LastSubmissionAttemptTime metav1.Time `json:"lastSubmissionAttemptTime,omitempty"`
	// TerminationTime is when the application, or its last attempt, terminated.
	// +nullable
	// +optional
	TerminationTime metav1.Time `json:"terminationTime,omitempty"`
	// HistoryURL is the current attempt's page on the operator's History Server, which shows
	// its Spark UI from the event log once the driver is gone. Set only when the attempt logs
	// to the operator's default event log dir and the operator knows its History Server. This
	// is a sparkhooks extension.
	// +optional
	HistoryURL string `json:"historyURL,omitempty"`
	// DriverInfo describes the driver Pod and the Spark UI.
	DriverInfo DriverInfo `json:"driverInfo"`
	// AppState is the state of the application and the error that caused it, if any.
	// +optional
	AppState ApplicationState `json:"applicationState,omitempty"`
	// ExecutorState is the state of each executor, keyed by Pod name.
	// +optional
	ExecutorState map[string]ExecutorState `json:"executorState,omitempty"`
	// ExecutionAttempts counts successful submissions; it is reset when the spec changes.
	// +optional
	ExecutionAttempts int32 `json:"executionAttempts,omitempty"`
	// SubmissionAttempts counts submission attempts; it is reset when the spec changes.
	// +optional
	SubmissionAttempts int32 `json:"submissionAttempts,omitempty"`

	// SubmittedSpecHash is a hash of the (defaulted) spec the current attempt was built from.
	// A spec whose hash differs invalidates the attempt and is submitted anew; changes to
	// fields that do not shape the run (suspend, timeToLiveSeconds, restartPolicy, timeouts,
	// resourceRetainPolicy) leave it alone. This is a sparkhooks extension.
	// +optional
	SubmittedSpecHash string `json:"submittedSpecHash,omitempty"`

	// ObservedGeneration is the metadata.generation of the spec this status describes. This
	// is a sparkhooks extension.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions detail the progress of the current attempt (driver started, driver ready,
	// executors running, timed out, ...) in the standard Kubernetes form, next to the coarser
	// applicationState. This is a sparkhooks extension.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DriverInfo describes the driver Pod and the Spark UI.
type DriverInfo struct {
	// WebUIServiceName is the name of the Spark UI Service.
	// +optional
	WebUIServiceName string `json:"webUIServiceName,omitempty"`
	// WebUIAddress is the in-cluster address (IP:port) of the Spark UI Service.
	// +optional
	WebUIAddress string `json:"webUIAddress,omitempty"`
	// WebUIPort is the port of the Spark UI Service.
	// +optional
	WebUIPort int32 `json:"webUIPort,omitempty"`
	// WebUIIngressName is the name of the Spark UI Ingress.
	// +optional
	WebUIIngressName string `json:"webUIIngressName,omitempty"`
	// WebUIIngressAddress is the URL of the Spark UI Ingress.
	// +optional
	WebUIIngressAddress string `json:"webUIIngressAddress,omitempty"`
	// WebUIHTTPRouteName is the name of the Spark UI HTTPRoute (Gateway API). A sparkhooks
	// extension.
	// +optional
	WebUIHTTPRouteName string `json:"webUIHTTPRouteName,omitempty"`
	// WebUIHTTPRouteAddress is the URL of the Spark UI through its HTTPRoute: the first
	// hostname and the path prefix, or the path alone when the route names no hostname (then
	// the UI is at that path on the Gateway's address). A sparkhooks extension.
	// +optional
	WebUIHTTPRouteAddress string `json:"webUIHTTPRouteAddress,omitempty"`
	// PodName is the name of the driver Pod.
	// +optional
	PodName string `json:"podName,omitempty"`
}

// ApplicationState is the state of an application and the error that caused it, if any.
type ApplicationState struct {
	State ApplicationStateType `json:"state"`
	// +optional
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// ApplicationStateType is the state of an application.
type ApplicationStateType string

// Application states, as the Kubeflow operator writes them.
const (
	ApplicationStateNew              ApplicationStateType = ""
	ApplicationStateSubmitted        ApplicationStateType = "SUBMITTED"
	ApplicationStateRunning          ApplicationStateType = "RUNNING"
	ApplicationStateCompleted        ApplicationStateType = "COMPLETED"
	ApplicationStateFailed           ApplicationStateType = "FAILED"
	ApplicationStateFailedSubmission ApplicationStateType = "SUBMISSION_FAILED"
	ApplicationStatePendingRerun     ApplicationStateType = "PENDING_RERUN"
	ApplicationStateInvalidating     ApplicationStateType = "INVALIDATING"
	ApplicationStateSucceeding       ApplicationStateType = "SUCCEEDING"
	ApplicationStateFailing          ApplicationStateType = "FAILING"
	ApplicationStateSuspending       ApplicationStateType = "SUSPENDING"
	ApplicationStateSuspended        ApplicationStateType = "SUSPENDED"
	ApplicationStateResuming         ApplicationStateType = "RESUMING"
	ApplicationStateUnknown          ApplicationStateType = "UNKNOWN"
)

// DriverState is the state of a driver Pod.
type DriverState string

// Driver states.
const (
	DriverStatePending   DriverState = "PENDING"
	DriverStateRunning   DriverState = "RUNNING"
	DriverStateCompleted DriverState = "COMPLETED"
	DriverStateFailed    DriverState = "FAILED"
	DriverStateUnknown   DriverState = "UNKNOWN"
)

// ExecutorState is the state of an executor Pod.
type ExecutorState string

// Executor states.
const (
	ExecutorStatePending   ExecutorState = "PENDING"
	ExecutorStateRunning   ExecutorState = "RUNNING"
	ExecutorStateCompleted ExecutorState = "COMPLETED"
	ExecutorStateFailed    ExecutorState = "FAILED"
	ExecutorStateUnknown   ExecutorState = "UNKNOWN"
)
