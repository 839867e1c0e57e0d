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
	LabelSparkVersion = mutate.LabelSparkVersion
	LabelSparkAppName = mutate.LabelSparkAppName
	LabelAppName      = mutate.LabelAppName
	LabelLaunchedBy   = mutate.LabelLaunchedBy
	LabelSubmissionID = mutate.LabelSubmissionID
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
