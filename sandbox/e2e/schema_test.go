//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An invalid custom resource must be refused at `kubectl apply`, by the CRD schema, with a
// message that names the field: nothing invalid should ever reach the hooks.
func TestKubectlApplyRejectsInvalidResources(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "http://127.0.0.1:1")
	tests := []struct {
		name     string
		manifest string
		want     string
	}{
		{
			name:     "application type outside the enum",
			manifest: strings.Replace(tinyApp, "type: Scala", "type: Cobol", 1),
			want:     `spec.type: Unsupported value: "Cobol"`,
		},
		{
			name:     "restart policy outside the enum",
			manifest: tinyApp + "  restartPolicy:\n    type: Sometimes\n",
			want:     `spec.restartPolicy.type: Unsupported value: "Sometimes"`,
		},
		{
			name:     "required driver missing",
			manifest: tinyApp[:strings.Index(tinyApp, "  driver:")] + tinyApp[strings.Index(tinyApp, "  executor:"):],
			want:     "spec.driver: Required value",
		},
		{
			name:     "number where the schema wants an integer",
			manifest: strings.Replace(tinyApp, "instances: 1", "instances: many", 1),
			want:     "spec.executor.instances",
		},
		{
			name:     "field the schema does not know",
			manifest: strings.Replace(tinyApp, "  sparkVersion: 4.0.0", "  sparkVersion: 4.0.0\n  sparkVersio: 4.0.0", 1),
			want:     `unknown field "spec.sparkVersio"`,
		},
		{
			name: "scheduled application without a schedule",
			manifest: `
apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata:
  name: nightly
spec:
  template:
    type: Scala
    sparkVersion: 4.0.0
    driver: {cores: 1}
    executor: {instances: 1}
`,
			want: "spec.schedule: Required value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := w.apply(tt.manifest)
			require.Error(t, err, "kubectl apply accepted it:\n%s", out)
			assert.Contains(t, out, tt.want)
		})
	}

	// The same application without the mistake is accepted, so the refusals above are about
	// the mistakes and nothing else.
	out, err := w.apply(tinyApp)
	require.NoError(t, err, out)
	assert.Contains(t, out, "sparkapplication.sparkoperator.k8s.io/tiny created")
}
