package v1beta2

import "strings"

// Defaults the Kubeflow operator applies, which users of this API expect.
const (
	DefaultCores                  int32 = 1
	DefaultMemory                       = "1g"
	DefaultExecutorInstances      int32 = 1
	DefaultRetryIntervalSeconds   int64 = 5
	DefaultRunHistoryLimit        int32 = 1
	DefaultResourceRetainPolicy         = ResourceRetainPolicyAlways
	DefaultConcurrencyPolicy            = ConcurrencyAllow
	DefaultShuffleTrackingEnabled       = true
)

// Spark properties that, when present in sparkConf, stand in for a typed field, so the typed
// default must not be applied over them.
const (
	confDriverCores              = "spark.driver.cores"
	confDriverMemory             = "spark.driver.memory"
	confExecutorCores            = "spark.executor.cores"
	confExecutorMemory           = "spark.executor.memory"
	confExecutorInstances        = "spark.executor.instances"
	confDynamicAllocationEnabled = "spark.dynamicAllocation.enabled"
	confDriverPodName            = "spark.kubernetes.driver.pod.name"
	confKubernetesNamespace      = "spark.kubernetes.namespace"
)

// SetSparkApplicationDefaults fills the fields the Kubeflow operator defaults, in place, plus the
// defaults of our extensions. It is idempotent. The hooks apply it in memory before deciding;
// the stored object keeps what the user wrote.
func SetSparkApplicationDefaults(app *SparkApplication) {
	if app == nil {
		return
	}
	SetSparkApplicationSpecDefaults(&app.Spec)
}

// SetSparkApplicationSpecDefaults is SetSparkApplicationDefaults for a bare spec, such as the
// template of a ScheduledSparkApplication.
func SetSparkApplicationSpecDefaults(spec *SparkApplicationSpec) {
	if spec.Mode == "" {
		spec.Mode = DeployModeCluster
	}
	setRestartPolicyDefaults(&spec.RestartPolicy)

	// A typed default would override the user's sparkConf entry, because typed fields win.
	if spec.Driver.Cores == nil && !hasConf(spec, confDriverCores) {
		spec.Driver.Cores = ptrTo(DefaultCores)
	}
	if spec.Driver.Memory == nil && !hasConf(spec, confDriverMemory) {
		spec.Driver.Memory = ptrTo(DefaultMemory)
	}
	if spec.Executor.Cores == nil && !hasConf(spec, confExecutorCores) {
		spec.Executor.Cores = ptrTo(DefaultCores)
	}
	if spec.Executor.Memory == nil && !hasConf(spec, confExecutorMemory) {
		spec.Executor.Memory = ptrTo(DefaultMemory)
	}
	if spec.Executor.Instances == nil && !hasConf(spec, confExecutorInstances) && !DynamicAllocationEnabled(spec) {
		spec.Executor.Instances = ptrTo(DefaultExecutorInstances)
	}
	if da := spec.DynamicAllocation; da != nil && da.Enabled && da.ShuffleTrackingEnabled == nil {
		da.ShuffleTrackingEnabled = ptrTo(DefaultShuffleTrackingEnabled)
	}
	if spec.ResourceRetainPolicy == nil {
		spec.ResourceRetainPolicy = ptrTo(DefaultResourceRetainPolicy)
	}
}

func setRestartPolicyDefaults(rp *RestartPolicy) {
	if rp.Type == "" {
		rp.Type = RestartPolicyNever
	}
	if rp.Type == RestartPolicyNever {
		return
	}
	if rp.OnSubmissionFailureRetryInterval == nil {
		rp.OnSubmissionFailureRetryInterval = ptrTo(DefaultRetryIntervalSeconds)
	}
	if rp.OnFailureRetryInterval == nil {
		rp.OnFailureRetryInterval = ptrTo(DefaultRetryIntervalSeconds)
	}
}

// SetScheduledSparkApplicationDefaults fills the defaults of a ScheduledSparkApplication and of
// its template, in place. Unlike the Kubeflow operator, an empty concurrencyPolicy becomes Allow
// (as for a Kubernetes CronJob): Kubeflow treats it as "never start another run once one
// exists", which nobody asks for on purpose.
func SetScheduledSparkApplicationDefaults(ssa *ScheduledSparkApplication) {
	if ssa == nil {
		return
	}
	spec := &ssa.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = DefaultConcurrencyPolicy
	}
	if spec.SuccessfulRunHistoryLimit == nil {
		spec.SuccessfulRunHistoryLimit = ptrTo(DefaultRunHistoryLimit)
	}
	if spec.FailedRunHistoryLimit == nil {
		spec.FailedRunHistoryLimit = ptrTo(DefaultRunHistoryLimit)
	}
	SetSparkApplicationSpecDefaults(&spec.Template)
}

// DynamicAllocationEnabled reports whether Spark will run with dynamic allocation, through
// spec.dynamicAllocation or through the property in sparkConf.
func DynamicAllocationEnabled(spec *SparkApplicationSpec) bool {
	if spec.DynamicAllocation != nil && spec.DynamicAllocation.Enabled {
		return true
	}
	v, ok := spec.SparkConf[confDynamicAllocationEnabled]
	return ok && strings.EqualFold(strings.TrimSpace(v), "true")
}

func hasConf(spec *SparkApplicationSpec, key string) bool {
	_, ok := spec.SparkConf[key]
	return ok
}

func ptrTo[T any](v T) *T { return &v }
