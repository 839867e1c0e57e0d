//go:build e2e

// Package sparkctl runs kubectl-spark as a user would, as a kubectl plugin (kubectl spark ...),
// against the sandbox `make run` starts (sandbox/cmd/sparkhooks-local): the real control plane with
// the chart installed by Helm, and simulated pods (simulated mode), or real Spark on the process
// kubelet for the tests that need the driver's own output.
package sparkctl

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

const repoRoot = "../../.."

// bin holds the binaries built once for the package.
var bin string

func TestMain(m *testing.M) {
	// go test runs in the package directory; the sandbox's defaults are relative to the root.
	if err := os.Chdir(repoRoot); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "sparkctl-e2e-")
	if err != nil {
		panic(err)
	}
	bin = dir
	code := func() int {
		defer os.RemoveAll(dir)
		for _, b := range []struct{ module, name string }{{".", "sparkhooks"}, {"sandbox", "sparkhooks-local"}, {".", "kubectl-spark"}} {
			out, err := exec.Command("go", "build", "-C", b.module, "-o", filepath.Join(dir, b.name), "./cmd/"+b.name).CombinedOutput()
			if err != nil {
				fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b.name, err, out)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// sandbox is a running sparkhooks-local.
type sandbox struct {
	cmd        *exec.Cmd
	kubeconfig string
	output     *harness.LockedBuffer
	exited     chan error
}

// startSandbox starts sparkhooks-local with args and stops it when the test ends.
func startSandbox(t *testing.T, args ...string) *sandbox {
	t.Helper()
	readyFile := filepath.Join(t.TempDir(), "ready")
	args = append([]string{"--api-addr", "127.0.0.1:0", "--sparkhooks", filepath.Join(bin, "sparkhooks"), "--ready-file", readyFile}, args...)
	cmd := exec.Command(filepath.Join(bin, "sparkhooks-local"), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &sandbox{cmd: cmd, output: &harness.LockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = s.output
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		for {
			if data, err := os.ReadFile(readyFile); err == nil {
				ready <- strings.TrimSpace(string(data))
				return
			}
			if len(s.exited) > 0 {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			fmt.Fprintln(s.output, line)
		}
		s.exited <- cmd.Wait()
	}()
	select {
	case s.kubeconfig = <-ready:
	case err := <-s.exited:
		t.Fatalf("sparkhooks-local exited before it was up: %v\n%s", err, s.output)
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("sparkhooks-local printed no kubeconfig within 2 minutes:\n%s", s.output)
	}
	t.Logf("sandbox up in %s", time.Since(begin).Round(100*time.Millisecond))
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Errorf("sparkhooks-local did not stop within a minute of SIGINT")
		}
	})
	return s
}

// result is what one command printed and how it ended.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// command is kubectl with the environment kubectl runs in, to start and stop it by hand.
func (s *sandbox) command(args ...string) *exec.Cmd {
	cmd := exec.Command("kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECACHEDIR="+filepath.Join(filepath.Dir(s.kubeconfig), "kubectl-cache"))
	return cmd
}

// kubectl runs kubectl with KUBECONFIG pointing at the sandbox and kubectl-spark on PATH, so
// `kubectl spark ...` finds the plugin as a user's kubectl does.
func (s *sandbox) kubectl(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECACHEDIR="+filepath.Join(filepath.Dir(s.kubeconfig), "kubectl-cache"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// spark runs `kubectl spark args...` and fails the test unless it exits 0.
func (s *sandbox) spark(t *testing.T, args ...string) result {
	t.Helper()
	r := s.kubectl(t, nil, append([]string{"spark"}, args...)...)
	if r.code != 0 {
		t.Fatalf("kubectl spark %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// jsonpath reads one field with kubectl get.
func (s *sandbox) jsonpath(t *testing.T, resource, path string) string {
	t.Helper()
	r := s.kubectl(t, nil, "get", resource, "-o", "jsonpath="+path)
	if r.code != 0 {
		return ""
	}
	return r.stdout
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
