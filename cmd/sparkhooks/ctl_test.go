package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCtlRunsTheKubectlPluginsCommands: sparkhooks ctl is kubectl-spark under another name, and
// its exit codes reach the process.
func TestCtlRunsTheKubectlPluginsCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"ctl", "--help"}, &out, &errOut))
	assert.Contains(t, out.String(), "sparkhooks ctl [command]")
	assert.Contains(t, out.String(), "forward")

	dir := t.TempDir()
	app := filepath.Join(dir, "app.yaml")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.jar"), []byte("jar"), 0o644))
	require.NoError(t, os.WriteFile(app, []byte("apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a, namespace: x}\nspec: {mainApplicationFile: "+filepath.Join(dir, "app.jar")+"}\n"), 0o644))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ctl", "list", "--bogus"}, 2, "error: unknown flag: --bogus\n"},
		{[]string{"ctl", "list", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, 1, "error: loading the kubeconfig"},
		{[]string{"ctl", "create", "-f", "app.yaml", "--upload-to", "s3://b"}, 1, "error: reading app.yaml"},
		// Staging is kubectl-spark's alone: the object-store SDKs stay out of the server.
		{[]string{"ctl", "create", "-f", app, "--upload-to", "s3://b", "--kubeconfig", writeKubeconfig(t)}, 1, "this build cannot upload to s3:// (use kubectl-spark)"},
	} {
		out.Reset()
		errOut.Reset()
		err := run(t.Context(), tc.args, &out, &errOut)
		var exit *exitCode
		require.True(t, errors.As(err, &exit), "%v: %v", tc.args, err)
		assert.Equal(t, tc.code, exit.code, tc.args)
		assert.Contains(t, errOut.String(), tc.want)
	}
}

// writeKubeconfig is a kubeconfig for a server nobody needs to reach.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600))
	return path
}
