package children

import (
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// ExecutorSelector selects the executor Pods of every attempt of app: the driver creates them
// with the labels the executor label properties ask for.
func ExecutorSelector(app *v1beta2.SparkApplication) map[string]string {
	return map[string]string{
		sparkpod.LabelSparkRole: sparkpod.RoleExecutor,
		sparkpod.LabelAppName:   app.Name,
	}
}
