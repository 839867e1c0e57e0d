// Package sparkpod names what marks a Spark pod, for everyone who makes or reads one: the labels
// Spark, the sync hook and Metacontroller set, the roles and container names Spark gives, and the
// per-application customization the sync hook hands the pod-mutation webhook on an annotation.
package sparkpod

// Labels Spark, the sync hook and Metacontroller put on Spark pods. The spark-* ones are
// Spark's own; the sparkoperator.k8s.io ones are the Kubeflow operator's, which tools and
// dashboards select on.
const (
	LabelSparkRole               = "spark-role"
	LabelAppSelector             = "spark-app-selector"
	LabelSparkAppName            = "spark-app-name"
	LabelSparkVersion            = "spark-version"
	LabelExecutorID              = "spark-exec-id"
	LabelExecutorResourceProfile = "spark-exec-resourceprofile-id"
	LabelAppName                 = "sparkoperator.k8s.io/app-name"
	LabelLaunchedBy              = "sparkoperator.k8s.io/launched-by-spark-operator"
	LabelSubmissionID            = "sparkoperator.k8s.io/submission-id"
	// LabelControllerUID is the label Metacontroller puts, with the parent's uid, on the
	// children of a parent whose controller has generateSelector: true. A SparkApplication
	// created by a ScheduledSparkApplication carries the schedule's, which, copied onto its
	// driver Pod, would contradict the one Metacontroller sets there.
	LabelControllerUID = "controller-uid"
	// LabelCreatedBy marks the UI Services, Ingresses and ConfigMaps the hooks create, as the Kubeflow
	// operator marks its own.
	LabelCreatedBy = "sparkoperator.k8s.io/created-by-spark-operator"
)

// Roles a Spark pod can have (the value of LabelSparkRole).
const (
	RoleDriver   = "driver"
	RoleExecutor = "executor"
)

// Container names Spark gives the Spark container of each role.
const (
	DriverContainerName   = "spark-kubernetes-driver"
	ExecutorContainerName = "spark-kubernetes-executor"
)

// OwnedLabel reports the label keys that Spark, the sync hook or Metacontroller set on Spark
// pods themselves and read back: the sync hook finds its driver and executors by them, Spark
// refuses to start when a custom label reuses one of its keys, and Metacontroller refuses an
// answer whose selector label disagrees with the one it set. Labels copied from an application
// must not override them.
func OwnedLabel(key string) bool {
	switch key {
	case LabelSparkRole, LabelAppSelector, LabelSparkAppName, LabelSparkVersion, LabelExecutorID,
		LabelExecutorResourceProfile, LabelAppName, LabelLaunchedBy, LabelSubmissionID, LabelControllerUID:
		return true
	}
	return false
}
