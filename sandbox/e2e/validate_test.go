//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
)

// The chart's validating webhook, called by kube-apiserver over HTTPS with the chart's
// certificate in a namespace of spark.jobNamespaces: an example the hooks would fail is refused
// at `kubectl apply` with the hooks' message, shaped as the API server's own for an invalid
// object (422, reason Invalid), after the CRD schema (which refuses first what it can); an object
// stored before its namespace was under the webhook can still be labelled, have its status
// written and be deleted, but not be edited into another invalid spec.
func TestValidatingWebhookRefusesAtApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, err := kubernetes.NewForConfig(shared.stack.Admin)
	require.NoError(t, err)
	ns := createNamespace(t, client, "validate")
	inNamespace := func(args ...string) (string, error) {
		return adminKubectl(append([]string{"--namespace", ns}, args...)...)
	}

	// Stored while the namespace is not a job namespace, where the webhook is not called: the CRD
	// schema admits it, so its refusals below are the webhook's. Under a name of its own: the dry
	// runs below create the example's.
	broken, err := os.ReadFile(filepath.Join(repoRoot, "examples/testdata/broken-memory-limit.yaml"))
	require.NoError(t, err)
	stored := filepath.Join(t.TempDir(), "stored.yaml")
	require.NoError(t, os.WriteFile(stored, []byte(strings.Replace(string(broken), "name: broken-memory-limit", "name: stored-invalid", 1)), 0o600))
	out, err := inNamespace("create", "-f", stored)
	require.NoError(t, err, "outside spark.jobNamespaces the webhook is not called: %s", out)
	require.NoError(t, shared.stack.AddJobNamespace(ctx, ns, nil))

	tests := []struct {
		file string
		// schema is what the API server refuses before any webhook; want is what the webhook
		// refuses, after kubectl's line for an invalid object. All empty: the object is valid.
		schema, want string
	}{
		{file: "examples/spark-pi.yaml"},
		{file: "examples/spark-pi-dynamic-allocation.yaml"},
		{file: "examples/scheduled-spark-pi-nightly.yaml"},
		{file: "examples/testdata/broken-type.yaml", schema: `spec.type: Unsupported value: "Cobol"`},
		{file: "examples/testdata/broken-instances.yaml", schema: "spec.executor.instances"},
		{file: "examples/testdata/broken-memory-limit.yaml", want: `The SparkApplication "broken-memory-limit" is invalid: spec.executor.memoryLimit: Invalid value: "2Gi": is below executor.memory (4g)`},
		{file: "examples/testdata/broken-schedule.yaml", want: `The ScheduledSparkApplication "broken-schedule" is invalid: spec.schedule: Invalid value: "61 * * * *"`},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			out, err := inNamespace("create", "--dry-run=server", "-o", "name", "-f", filepath.Join(repoRoot, tt.file))
			switch {
			case tt.schema != "":
				require.Error(t, err)
				assert.Contains(t, out, tt.schema)
			case tt.want != "":
				require.Error(t, err, "the webhook refuses it:\n%s", out)
				assert.Contains(t, out, tt.want)
			default:
				require.NoError(t, err, out)
			}
		})
	}

	t.Run("an invalid object stored before the webhook", func(t *testing.T) {
		out, err := inNamespace("label", "sparkapplications.sparkoperator.k8s.io", "stored-invalid", "team=e2e")
		require.NoError(t, err, "an update that leaves the spec alone: %s", out)
		out, err = inNamespace("patch", "sparkapplications.sparkoperator.k8s.io", "stored-invalid", "--subresource=status", "--type=merge",
			"-p", `{"status":{"applicationState":{"state":"FAILED","errorMessage":"invalid spec"},"driverInfo":{}}}`)
		require.NoError(t, err, "the status Metacontroller writes: %s", out)
		out, err = inNamespace("patch", "sparkapplications.sparkoperator.k8s.io", "stored-invalid", "--type=merge", "-p", `{"spec":{"arguments":["10"]}}`)
		require.Error(t, err, "an edit that leaves the spec invalid: %s", out)
		assert.Contains(t, out, `The SparkApplication "stored-invalid" is invalid: spec.executor.memoryLimit`)
		out, err = inNamespace("delete", "sparkapplications.sparkoperator.k8s.io", "stored-invalid", "--wait=false")
		require.NoError(t, err, out)
	})
}
