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
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
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
		t.Fatalf("kubectl spark log spark-pi never showed %q within %s; last (%v):\n%s", uiBound, appTimeout, logErr, harness.Tail(string(log), 20))
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

// groupByTest is a Spark job of several stages from the examples jar: GroupByTest counts
// NUM_MAPPERS partitions of random pairs (job 0, one stage), then groups them by key into
// NUM_REDUCERS partitions and counts again (job 1: a shuffle map stage and a reduce stage).
// Many small tasks, so that its stages run for seconds on a busy machine.
const groupByTest = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: groupby
spec:
  type: Scala
  mode: cluster
  sparkVersion: 3.5.3
  image: apache/spark:3.5.3
  imagePullPolicy: IfNotPresent
  mainClass: org.apache.spark.examples.GroupByTest
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  # NUM_MAPPERS NUM_KVPAIRS VALUE_SIZE NUM_REDUCERS
  arguments: ["120", "200", "100", "60"]
  driver:
    cores: 1
    memory: 512m
    serviceAccount: spark
  executor:
    instances: 1
    cores: 2
    memory: 512m
`

// stageRunning is a line of kubectl spark watch's plain output while a stage runs: the state, the
// counts, the tasks' bar, and the stage by number and name.
var stageRunning = regexp.MustCompile(`^\d\d:\d\d:\d\d groupby RUNNING: jobs \d+/\d+; stages \d+/\d+; tasks \[[=> ]+\] +\d+% \d+/\d+, \d+ running, \d+ failed; stage (\d+) \d+/\d+: \S+ at GroupByTest\.(?:scala|java):\d+`)

// TestKubectlSparkWatch runs a job of several stages and watches it with kubectl spark watch, the
// way a user does: through the API server's service proxy to the driver's UI Service, reading
// Spark's REST API. In plain mode (a pipe) it prints a line per change, and shows the stages
// running with a bar before the final line; under a pseudo-terminal (script(1), when the machine
// has it) it redraws its block in place with ANSI cursor movement. kubectl spark status shows
// the same progress while the job runs.
func TestKubectlSparkWatch(t *testing.T) {
	parallelOnRealNode(t)
	n := newNamespace(t, "kubectl-spark-watch")
	k := newKubectlSpark(t, n)
	data, err := forNode([]byte(groupByTest))
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(t.TempDir(), "groupby.yaml")
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	k.run(t, "create", "-f", manifest)

	plain := k.command("watch", "groupby")
	stdout, err := plain.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var plainErr bytes.Buffer
	plain.Stderr = &plainErr
	if err := plain.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plain.Process.Kill() }()
	// script(1) gives the watch a pseudo-terminal, and writes what it drew to stdout.
	var tty *exec.Cmd
	var ttyOut bytes.Buffer
	if script, err := exec.LookPath("script"); err == nil {
		watch := k.command("watch", "groupby")
		tty = exec.Command(script, "--quiet", "--return", "--command", shellQuote(watch.Args), "/dev/null")
		tty.Env, tty.Stdout, tty.Stderr = watch.Env, &ttyOut, &ttyOut
		if err := tty.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tty.Process.Kill() }()
	} else {
		t.Log("no script(1) on this machine: the terminal mode is covered by the unit tests only")
	}

	var lines []string
	stages := map[string]bool{}
	statusChecked := false
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		line := scanner.Text()
		lines = append(lines, line)
		m := stageRunning.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		stages[m[1]] = true
		if !statusChecked {
			statusChecked = true
			status := k.run(t, "status", "groupby")
			for _, want := range []string{"Progress (from the driver's UI):", "  Tasks:", "  Executors:"} {
				if !strings.Contains(status, want) {
					t.Errorf("status of the running job lacks %q:\n%s", want, status)
				}
			}
		}
	}
	if err := plain.Wait(); err != nil {
		t.Fatalf("kubectl spark watch: %v\n%s\n%s", err, strings.Join(lines, "\n"), plainErr.String())
	}
	t.Logf("kubectl spark watch of GroupByTest (%s):\n%s", time.Since(begin).Round(100*time.Millisecond), strings.Join(lines, "\n"))
	if len(stages) == 0 {
		t.Errorf("watch never showed a running stage")
	}
	// The final line, then the History Server's page when the chart runs one.
	if end := lines[max(len(lines)-2, 0):]; !slices.ContainsFunc(end, func(l string) bool { return strings.HasPrefix(l, "groupby COMPLETED") }) {
		t.Errorf("watch did not end with the final line")
	}
	if tty != nil {
		if err := tty.Wait(); err != nil {
			t.Fatalf("kubectl spark watch under script: %v\n%q", err, ttyOut.String())
		}
		drawn := ttyOut.String()
		for _, want := range []string{"A\r\x1b[J", "  Tasks:", "  Stage ", "groupby COMPLETED"} {
			if !strings.Contains(drawn, want) {
				t.Errorf("watch on a terminal drew no %q:\n%q", want, drawn)
			}
		}
	}
}

// shellQuote is a command line for sh -c.
func shellQuote(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}
