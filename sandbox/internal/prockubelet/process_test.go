package prockubelet

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
)

func TestMain(m *testing.M) {
	// The containers the tests start begin as a copy of the test binary.
	podinit.Reexec()
	os.Exit(m.Run())
}

// TestContainerOutputIsLogged starts real container processes and reads back what the kubelet
// recorded of them: the exit, and each stream's lines in the log.
func TestContainerOutputIsLogged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("containers need root for their namespaces")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		script   string
		stop     bool
		exit     int32
		signal   syscall.Signal
		stdout   string
		stderr   string
		fallback string
	}{
		{
			name: "both streams and a last line without newline", script: `echo out; sleep 0.2; echo err >&2; printf 'no newline'; exit 3`,
			exit: 3, stdout: "out\nno newline\n", stderr: "err\n", fallback: "out\nerr\nno newline",
		},
		// The container's first process is the init of its PID namespace, which ignores a
		// SIGTERM it has no handler for, as in a container: the grace period ends in SIGKILL.
		{name: "stopped", script: `echo started; exec sleep 60`, stop: true, exit: 137, signal: syscall.SIGKILL, stdout: "started\n", fallback: "started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := testKubelet(t, nil, nil)
			k.cfg.InitBinary = self
			dir := t.TempDir()
			spec := podinit.Spec{
				Scratch: filepath.Join(dir, "scratch"), ImageRoot: t.TempDir(),
				Argv: []string{"sh", "-c", tc.script}, Env: []string{"PATH=/usr/bin:/bin"},
			}
			if err := os.Mkdir(spec.Scratch, 0o700); err != nil {
				t.Fatal(err)
			}
			logPath := filepath.Join(dir, "logs", "main", "0.log")
			p, err := k.startProcess(spec, filepath.Join(dir, "spec.json"), logPath)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stop {
				time.Sleep(500 * time.Millisecond)
				p.stop(time.Second)
			}
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				t.Fatal("the container did not end")
			}
			if exit, _ := p.result(); exit != tc.exit || p.signal != tc.signal {
				t.Errorf("exit %d signal %v, want %d %v", exit, p.signal, tc.exit, tc.signal)
			}
			for stream, want := range map[string]string{"stdout": tc.stdout, "stderr": tc.stderr} {
				f, err := os.Open(logPath)
				if err != nil {
					t.Fatal(err)
				}
				var got strings.Builder
				err = (&containerLogs{f: f, stream: stream, limit: -1}).WriteTo(t.Context(), &got)
				f.Close()
				if err != nil || got.String() != want {
					t.Errorf("%s: %q, %v; want %q", stream, got.String(), err, want)
				}
			}
			container := corev1.Container{Name: "main", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
			p.terminationPath = filepath.Join(dir, "no-message")
			if got := terminationMessage(container, p, tc.exit); got != tc.fallback {
				t.Errorf("termination message from the log %q, want %q", got, tc.fallback)
			}
		})
	}
}
