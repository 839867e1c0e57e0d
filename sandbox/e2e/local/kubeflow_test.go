//go:build e2e

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestMakeRunWithKubeflowOperator is make run OPERATOR=kubeflow: the same sandbox with the
// Kubeflow Spark Operator's own chart installed in place of ours (its controller and webhook as
// Pods on the process kubelet, from the image the sandbox prepares from the release), neither
// our chart nor a CompositeController there, and examples/spark-pi.yaml run by Kubeflow's
// spark-submit to COMPLETED. Its webhook's own certificate works: an application without
// spec.mode is defaulted by it, on a server-side dry run.
func TestMakeRunWithKubeflowOperator(t *testing.T) {
	requireRealSpark(t)
	release := os.Getenv("KUBEFLOW_SPARK_OPERATOR")
	if release == "" {
		t.Skip("KUBEFLOW_SPARK_OPERATOR names no Kubeflow Spark Operator release (make sets it when ../shared/kubeflow-spark-operator/v2.5.2 exists)")
	}
	sandbox, hooks := build(t)
	s := start(t, sandbox, append(realArgs(hooks), "--operator", "kubeflow", "--kubeflow-operator", release)...)
	stopped := false
	defer func() {
		if !stopped {
			s.stopAndCheckNothingIsLeft(t)
		}
	}()
	t.Logf("up after %s:\n%s", s.upAfter.Round(100*time.Millisecond), s.output)
	for _, want := range []string{"Installed with Helm in place of sparkhooks", "the Kubeflow Spark Operator 2.5.2", "ghcr.io/kubeflow/spark-operator/controller:2.5.2"} {
		if !strings.Contains(s.output.String(), want) {
			t.Fatalf("the banner does not say %q:\n%s", want, s.output)
		}
	}
	if out, err := s.kubectl("get", "deployments", "--namespace", "spark-operator", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.readyReplicas} {end}"); err != nil || out != "spark-operator-controller=1 spark-operator-webhook=1 " {
		t.Errorf("Kubeflow's Deployments: %v: %q, want its controller and webhook ready", err, out)
	}
	if out, err := s.kubectl("get", "crds", "-o", "name"); err != nil || !strings.Contains(out, "sparkconnects.sparkoperator.k8s.io") || strings.Contains(out, "compositecontrollers") || strings.Contains(out, "sparkhooks") {
		t.Errorf("CRDs: %v: want Kubeflow's, neither Metacontroller's nor ours:\n%s", err, out)
	}

	example, err := os.ReadFile("examples/spark-pi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	noMode := filepath.Join(t.TempDir(), "no-mode.yaml")
	if err := os.WriteFile(noMode, []byte(strings.Replace(string(example), "  mode: cluster\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := s.kubectl("apply", "--dry-run=server", "-f", noMode, "-o", "jsonpath={.spec.mode}"); err != nil || out != "cluster" {
		t.Errorf("a dry run of an application without spec.mode: %v: mode %q, want Kubeflow's webhook to default it to cluster", err, out)
	}

	if out, err := s.kubectl("apply", "-f", "examples/spark-pi.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	state := sparkPiEnd(s, 4*time.Minute)
	if state != "COMPLETED" {
		out, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "yaml")
		logs, _ := s.kubectl("logs", "--namespace", "spark-operator", "deployment/spark-operator-controller", "--tail", "40")
		t.Fatalf("spark-pi is %q, want COMPLETED:\n%s\nthe controller's log:\n%s", state, out, logs)
	}
	// Kubeflow's spark-submit made the driver: its submission id is on the Pod.
	if out, _ := s.kubectl("get", "pod", "spark-pi-driver", "-o", "jsonpath={.metadata.labels.sparkoperator\\.k8s\\.io/submission-id}"); out == "" {
		t.Errorf("the driver Pod has no sparkoperator.k8s.io/submission-id label: not Kubeflow's")
	}
	if logs, err := s.kubectl("logs", "spark-pi-driver"); err != nil || !strings.Contains(logs, "Pi is roughly 3.1") {
		t.Fatalf("kubectl logs spark-pi-driver: %v: no Pi line in\n%s", err, harness.Tail(logs, 20))
	}
	stopped = true
	s.stopAndCheckNothingIsLeft(t)
}

// TestMakeRunWithKubeflowOperatorSimulated is make run OPERATOR=kubeflow RUNFLAGS=--simulate:
// Kubeflow's chart on the simulated node, where no pod runs anything, so its controller and
// webhook run as processes of this machine and the controller's spark-submit with the Spark of
// the sandbox's apache/spark:4.0.1 layer. Kubeflow's spark-submit makes the driver Pod, the
// simulated kubelet plays it to its end, and Kubeflow's controller marks SparkPi COMPLETED.
func TestMakeRunWithKubeflowOperatorSimulated(t *testing.T) {
	release := os.Getenv("KUBEFLOW_SPARK_OPERATOR")
	if release == "" {
		t.Skip("KUBEFLOW_SPARK_OPERATOR names no Kubeflow Spark Operator release (make sets it when ../shared/kubeflow-spark-operator/v2.5.2 exists)")
	}
	sandbox, hooks := build(t)
	s := start(t, sandbox, append(realArgs(hooks), "--simulate", "--operator", "kubeflow", "--kubeflow-operator", release)...)
	stopped := false
	defer func() {
		if !stopped {
			s.stopAndCheckNothingIsLeft(t)
		}
	}()
	t.Logf("up after %s:\n%s", s.upAfter.Round(100*time.Millisecond), s.output)
	for _, want := range []string{"Mode: SIMULATED", "Installed with Helm in place of sparkhooks", "the Kubeflow Spark Operator 2.5.2", "run as processes of this machine"} {
		if !strings.Contains(s.output.String(), want) {
			t.Fatalf("the banner does not say %q:\n%s", want, s.output)
		}
	}
	if out, err := s.kubectl("apply", "-f", "examples/spark-pi.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	state := sparkPiEnd(s, 2*time.Minute)
	if state != "COMPLETED" {
		out, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "yaml")
		t.Fatalf("spark-pi is %q, want COMPLETED:\n%s", state, out)
	}
	if out, _ := s.kubectl("get", "pod", "spark-pi-driver", "-o", "jsonpath={.metadata.labels.sparkoperator\\.k8s\\.io/submission-id}"); out == "" {
		t.Errorf("the driver Pod has no sparkoperator.k8s.io/submission-id label: not Kubeflow's")
	}
	stopped = true
	s.stopAndCheckNothingIsLeft(t)
}

// sparkPiEnd polls examples/spark-pi.yaml's state until it is COMPLETED or FAILED, or within
// has passed, and returns the last state read.
func sparkPiEnd(s *started, within time.Duration) string {
	state := ""
	for deadline := time.Now().Add(within); time.Now().Before(deadline) && state != "COMPLETED" && state != "FAILED"; {
		time.Sleep(time.Second)
		state, _ = s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "jsonpath={.status.applicationState.state}")
	}
	return state
}
