//go:build linux

package podinit_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
)

func TestMain(m *testing.M) {
	podinit.Reexec()
	os.Exit(m.Run())
}

// start runs spec through a re-executed copy of the test binary, as the kubelet does.
func start(t *testing.T, spec podinit.Spec) (string, error) {
	t.Helper()
	dir := t.TempDir()
	if spec.Scratch == "" {
		spec.Scratch = filepath.Join(dir, "scratch")
		require.NoError(t, os.Mkdir(spec.Scratch, 0o700))
	}
	data, err := json.Marshal(spec)
	require.NoError(t, err)
	specPath := filepath.Join(dir, "spec.json")
	require.NoError(t, os.WriteFile(specPath, data, 0o600))
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = []string{podinit.EnvSpec + "=" + specPath}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("podinit needs root for mount namespaces")
	}
}

func TestContainerSeesImageVolumesAndItsUser(t *testing.T) {
	requireRoot(t)
	image := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(image, "opt", "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(image, "opt", "app", "hello"), []byte("from the image\n"), 0o644))
	volume := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(volume, "spark.properties"), []byte("spark.app.name=x\n"), 0o644))
	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("10.1.2.3 my-pod\n"), 0o644))

	out, err := start(t, podinit.Spec{
		Hostname:  "my-pod",
		ImageRoot: image,
		Mounts: []podinit.Mount{
			{Source: volume, Target: "/opt/spark/conf", ReadOnly: true},
			{Source: hosts, Target: "/etc/hosts", ReadOnly: true},
		},
		Argv:       []string{"sh", "-c", `hostname; cat /opt/app/hello /opt/spark/conf/spark.properties /etc/hosts; id -u; pwd; touch /opt/spark/conf/x 2>/dev/null || echo read-only`},
		Env:        []string{"PATH=/usr/bin:/bin"},
		WorkingDir: "/opt/work",
		UID:        185, GID: 185,
	})
	require.NoError(t, err, out)
	require.Equal(t, strings.Join([]string{"my-pod", "from the image", "spark.app.name=x", "10.1.2.3 my-pod", "185", "/opt/work", "read-only", ""}, "\n"), out)
	_, err = os.Stat("/opt/work")
	require.True(t, os.IsNotExist(err), "the container's writes stay in its own layer")
}

func TestFailureIsReportedWithExit127(t *testing.T) {
	requireRoot(t)
	out, err := start(t, podinit.Spec{Argv: []string{"no-such-program"}, Env: []string{"PATH=/usr/bin"}})
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, 127, exitErr.ExitCode())
	require.Contains(t, out, `executable "no-such-program" not found in $PATH (/usr/bin)`)
}
