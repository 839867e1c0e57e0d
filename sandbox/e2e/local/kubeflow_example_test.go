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

// TestKubeflowSparkPiExample applies Kubeflow's own examples/spark-pi.yaml (v2.5.2) unchanged to
// `make run`: it names docker.io/apache/spark:4.0.4, a Spark the sandbox does not pin, so the
// first run prepares it from the sdist the package index serves, checked against the sha256 the
// index lists (one download of about 400 MB, then the download cache). Kubeflow's chart creates the
// service account the example names; here the user creates it, bound to the chart's driver Role.
func TestKubeflowSparkPiExample(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the sandbox runs pods in namespaces: this test needs root")
	}
	dir := os.Getenv("KUBEFLOW_SPARK_OPERATOR")
	if dir == "" {
		t.Skip("KUBEFLOW_SPARK_OPERATOR names no Kubeflow Spark Operator release (make sets it when ../shared/kubeflow-spark-operator/v2.5.2 exists)")
	}
	example := filepath.Join(dir, "examples", "spark-pi.yaml")
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatalf("Kubeflow's example: %v", err)
	}
	if !strings.Contains(string(data), "image: docker.io/apache/spark:4.0.4") {
		t.Fatalf("%s no longer names docker.io/apache/spark:4.0.4:\n%s", example, data)
	}
	sandbox, hooks := build(t)
	s := start(t, sandbox, "--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--images", imagesDir())
	t.Logf("up after %s:\n%s", s.upAfter.Round(100*time.Millisecond), s.output)

	role, err := s.kubectl("get", "roles", "-n", "default", "-o", "name")
	if err != nil {
		t.Fatalf("kubectl get roles: %v\n%s", err, role)
	}
	var driverRole string
	for _, r := range strings.Fields(role) {
		if strings.HasSuffix(r, "-spark-driver") {
			driverRole = strings.TrimPrefix(r, "role.rbac.authorization.k8s.io/")
		}
	}
	for _, args := range [][]string{
		{"create", "serviceaccount", "spark-operator-spark", "-n", "default"},
		{"create", "rolebinding", "spark-operator-spark", "-n", "default", "--role", driverRole, "--serviceaccount", "default:spark-operator-spark"},
		{"apply", "-f", example},
	} {
		if out, err := s.kubectl(args...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	applied := time.Now()
	state := ""
	for deadline := applied.Add(12 * time.Minute); time.Now().Before(deadline) && state != "COMPLETED" && state != "FAILED"; {
		time.Sleep(2 * time.Second)
		state, _ = s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "jsonpath={.status.applicationState.state}")
	}
	if state != "COMPLETED" {
		out, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "yaml")
		t.Fatalf("spark-pi is %q, want COMPLETED:\n%s\n%s", state, out, harness.Tail(s.output.String(), 30))
	}
	logs, err := s.kubectl("logs", "spark-pi-driver")
	if err != nil || !strings.Contains(logs, "Pi is roughly 3.1") {
		t.Fatalf("kubectl logs spark-pi-driver: %v: no Pi line in\n%s", err, harness.Tail(logs, 20))
	}
	t.Logf("from kubectl apply to COMPLETED: %s (with the image prepared on first use)", time.Since(applied).Round(time.Second))
	s.stopAndCheckNothingIsLeft(t)
}
