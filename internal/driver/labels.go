package driver

import (
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
)

// Labels on the Pods and Services of an application. The spark-* ones are Spark's own; the
// sparkoperator.k8s.io ones are the Kubeflow operator's, which tools and dashboards select on.
const (
	LabelAppSelector  = mutate.LabelAppSelector
	LabelSparkRole    = mutate.LabelSparkRole
	LabelSparkVersion = "spark-version"
	LabelSparkAppName = "spark-app-name"
	LabelAppName      = mutate.LabelAppName
	LabelLaunchedBy   = "sparkoperator.k8s.io/launched-by-spark-operator"
	LabelSubmissionID = "sparkoperator.k8s.io/submission-id"
	LabelCreatedBy    = "sparkoperator.k8s.io/created-by-spark-operator"
)

// Roles, the values of LabelSparkRole.
const (
	RoleDriver   = mutate.RoleDriver
	RoleExecutor = mutate.RoleExecutor
)

// Container names Spark gives the Spark container of each role.
const (
	DriverContainerName   = "spark-kubernetes-driver"
	ExecutorContainerName = "spark-kubernetes-executor"
)

// ExecutorSelector selects the executor Pods of every attempt of app: the driver creates them
// with the labels the executor label properties ask for.
func ExecutorSelector(app *v1beta2.SparkApplication) map[string]string {
	return map[string]string{
		LabelSparkRole: RoleExecutor,
		LabelAppName:   app.Name,
	}
}

// metacontrollerSelectorLabel is the label Metacontroller puts on the children of a parent
// whose controller has generateSelector: true, with the parent's uid. A SparkApplication created
// by a ScheduledSparkApplication carries the schedule's; copied onto the driver Pod it would
// contradict the one Metacontroller sets for the SparkApplication, and Metacontroller refuses
// the whole answer.
const metacontrollerSelectorLabel = "controller-uid"

// reservedLabel reports labels the operator, Spark or Metacontroller sets itself, which labels
// copied from the application must not override: Spark refuses to start when a custom label
// reuses one of its keys, and Metacontroller when the selector label disagrees.
func reservedLabel(key string) bool {
	switch key {
	case LabelAppSelector, LabelSparkRole, LabelSparkVersion, LabelSparkAppName,
		LabelAppName, LabelLaunchedBy, LabelSubmissionID, "spark-exec-id", "spark-exec-resourceprofile-id",
		metacontrollerSelectorLabel:
		return true
	}
	return false
}
