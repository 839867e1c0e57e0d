//go:build e2e

package spark

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// kubectlSpark runs kubectl with the suite's kubeconfig and the kubectl-spark plugin on PATH, so
// that `kubectl spark ...` finds the plugin as a user's kubectl does.
type kubectlSpark struct {
	n      *namespace
	binDir string
}

func newKubectlSpark(t *testing.T, n *namespace) *kubectlSpark {
	t.Helper()
	binDir := t.TempDir()
	if out, err := exec.Command("go", "build", "-C", repoRoot, "-o", filepath.Join(binDir, "kubectl-spark"), "./cmd/kubectl-spark").CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-spark: %v\n%s", err, out)
	}
	return &kubectlSpark{n: n, binDir: binDir}
}

// command is `kubectl spark args...` in the test's namespace, to start and stop by hand.
func (k *kubectlSpark) command(args ...string) *exec.Cmd {
	cmd := exec.Command("kubectl", append(append([]string{"spark"}, args...), "--namespace", k.n.name)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+shared.stack.Kubeconfig, "PATH="+k.binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECACHEDIR="+filepath.Join(k.binDir, "kubectl-cache"))
	return cmd
}

// run runs `kubectl spark args...` and returns its standard output, failing the test unless it
// exits 0.
func (k *kubectlSpark) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := k.command(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl spark %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestKubectlSpark: examples/spark-pi.yaml run with kubectl spark, the plugin, as a user runs it.
// create --follow prints the driver's own log through the API server, Pi line included, and exits
// 0 once COMPLETED; while it runs, log prints the driver's log and forward reaches the driver's
// Spark UI through the API server's pods/portforward (on the real node: the kubelet's streaming
// server and containerd, into the pod's network namespace).
func TestKubectlSpark(t *testing.T) {
	parallelOnRealNode(t)
	n := newNamespace(t, "kubectl-spark")
	k := newKubectlSpark(t, n)
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "spark-pi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err = forNode(data); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(t.TempDir(), "spark-pi.yaml")
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	follow := k.command("create", "-f", manifest, "--follow")
	var followOut, followErr bytes.Buffer
	follow.Stdout, follow.Stderr = &followOut, &followErr
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	go func() { followed <- follow.Wait() }()
	defer func() { _ = follow.Process.Kill() }() // if the test ends before it does

	// Like kubectl port-forward, forward ends at the first connection the pod refuses: wait
	// until the driver says its UI listens (read with kubectl spark log itself). Spark logs
	// "Start Jetty 0.0.0.0:4040 for SparkUI" before it binds the port, and this line after.
	const uiBound = "Successfully started service 'SparkUI'"
	var log []byte
	var logErr error
	err = wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, appTimeout, true, func(context.Context) (bool, error) {
		log, logErr = k.command("log", "spark-pi").CombinedOutput()
		return logErr == nil && bytes.Contains(log, []byte(uiBound)), nil
	})
	if err != nil {
		t.Fatalf("kubectl spark log spark-pi never showed %q within %s; last (%v):\n%s", uiBound, appTimeout, logErr, tail(string(log), 20))
	}
	checkForward(t, k)

	select {
	case err := <-followed:
		t.Logf("create --follow of SparkPi: %s", time.Since(begin).Round(100*time.Millisecond))
		if err != nil || !strings.Contains(followOut.String(), "Pi is roughly 3.1") || !strings.Contains(followErr.String(), "spark-pi: COMPLETED") {
			t.Fatalf("create --follow: %v\nstdout:\n%s\nstderr:\n%s", err, followOut.String(), followErr.String())
		}
	case <-time.After(appTimeout):
		_ = follow.Process.Kill()
		<-followed
		t.Fatalf("create --follow did not end within %s:\n%s\n%s", appTimeout, followOut.String(), followErr.String())
	}
	if log := k.run(t, "log", "spark-pi"); !strings.Contains(log, "Pi is roughly 3.1") {
		t.Errorf("log spark-pi has no Pi line:\n%s", log)
	}
	status := k.run(t, "status", "spark-pi")
	// The Pod's phase may still say Running: a real kubelet reports Succeeded only once it has
	// stopped the Pod's sandbox.
	for _, want := range []string{"COMPLETED", "spark-pi-driver (", "spark-kubernetes-driver: exit 0", "Spark app ID:"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
}

var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 4040`)

// checkForward runs `kubectl spark forward spark-pi 0:4040` and asks the Spark UI's REST API
// for the application through it, then stops it with Ctrl-C.
func checkForward(t *testing.T, k *kubectlSpark) {
	t.Helper()
	fw := k.command("forward", "spark-pi", "0:4040")
	stdout, err := fw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// A file, which the test may read while forward writes to it.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "forward.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	fw.Stderr = stderr
	stderrText := func() string {
		data, _ := os.ReadFile(stderr.Name())
		return string(data)
	}
	if err := fw.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	port := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if m := forwarding.FindStringSubmatch(scanner.Text()); m != nil {
				port <- m[1]
			}
		}
		exitErr = fw.Wait()
		close(exited)
	}()
	defer func() {
		_ = fw.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
			if err := exitErr; err != nil {
				t.Errorf("forward did not exit cleanly on Ctrl-C: %v\n%s", err, stderrText())
			}
		case <-time.After(30 * time.Second):
			_ = fw.Process.Kill()
			t.Errorf("forward did not stop within 30 s of Ctrl-C")
		}
	}()
	var local string
	select {
	case local = <-port:
	case <-exited:
		t.Fatalf("forward exited: %v\n%s", exitErr, stderrText())
	case <-time.After(30 * time.Second):
		t.Fatalf("forward printed no Forwarding line:\n%s", stderrText())
	}
	var body string
	err = wait.PollUntilContextTimeout(context.Background(), 300*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := http.Get("http://127.0.0.1:" + local + "/api/v1/applications")
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		body = string(data)
		return resp.StatusCode == http.StatusOK && strings.Contains(body, "Spark Pi"), nil
	})
	if err != nil {
		t.Fatalf("the Spark UI through the forwarded port %s: %v; last answer: %s\n%s", local, err, body, stderrText())
	}
	t.Logf("the Spark UI through kubectl spark forward: %.120s", strings.Join(strings.Fields(body), " "))
}
