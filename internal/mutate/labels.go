package mutate

import "strings"

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
)

// Key prefixes of the Kubeflow operator and of Metacontroller.
const (
	prefixSparkOperator  = "sparkoperator.k8s.io/"
	prefixMetacontroller = "metacontroller.k8s.io/"
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

// reservedKey reports the label and annotation keys a policy rule may not set: OwnedLabel's,
// and everything in the Kubeflow operator's and Metacontroller's namespaces, where the hooks
// keep their bookkeeping (the pod-customization annotation, Metacontroller's last-applied
// configuration). Application labels in the operator's namespace, such as a scheduled run's
// sparkoperator.k8s.io/scheduled-app-name, still reach the pods through the sync hook.
func reservedKey(key string) bool {
	return OwnedLabel(key) || strings.HasPrefix(key, prefixSparkOperator) || strings.HasPrefix(key, prefixMetacontroller)
}
