//go:build e2e

package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// connectQuery runs on the server's executors: 8 partitions, a shuffle, and a sum whose answer
// the test knows.
const connectQuery = `
import sys
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
df = spark.range(0, 100000, 1, 8).withColumn("bucket", F.col("id") % 10)
total = df.groupBy("bucket").agg(F.sum("id").alias("s")).agg(F.sum("s")).collect()[0][0]
print("version", spark.version)
print("total", total)
spark.stop()
`

// TestSparkConnect runs examples/spark-connect.yaml and a real Spark Connect client of the same
// version (pyspark-client 4.0.1) against it through the server's Service (on the real node, its
// cluster IP, which kube-proxy routes): Ready only once the server accepts connections, the
// query's answer right, and its tasks run by the server's executors, as the server's UI tells
// through the same Service.
func TestSparkConnect(t *testing.T) {
	parallelOnRealNode(t)
	n := newNamespace(t, "connect")
	n.applyExample("spark-connect.yaml")
	var readyAt time.Time
	sc := n.waitFor(sparkConnects, "spark-connect", "state Ready", appTimeout, func(sc *unstructured.Unstructured) bool {
		if harness.NestedString(sc, "status", "state") != "Ready" {
			return false
		}
		readyAt = time.Now()
		// Ready must mean the gRPC port answers: a client that connects at once must not fail.
		ip := harness.NestedString(sc, "status", "server", "podIp")
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, "15002"), 2*time.Second)
		if err != nil {
			t.Fatalf("SparkConnect is Ready but its server %s does not accept connections: %v", ip, err)
		}
		conn.Close()
		return true
	})
	service := harness.NestedString(sc, "status", "server", "serviceName")
	base, err := n.serviceURL(service, 15002)
	if err != nil {
		t.Fatal(err)
	}
	remote := "sc://" + strings.TrimPrefix(base, "http://")
	out := runPython(t, filepath.Join(shared.imagesDir, "pyclient-4.0.1"), connectQuery, remote)
	if !strings.Contains(out, "total 4999950000") || !strings.Contains(out, "version 4.0.1") {
		t.Fatalf("the Spark Connect query through %s (service %s) answered:\n%s", remote, service, out)
	}
	t.Logf("query answered %s after Ready", time.Since(readyAt).Round(time.Second))

	// The tasks ran on executors the server started through the API server, not in the server.
	ui, err := n.serviceURL(service, 4040)
	if err != nil {
		t.Fatal(err)
	}
	apps, err := httpGetPatiently(ui + "/api/v1/applications")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(apps), &list); err != nil || len(list) != 1 {
		t.Fatalf("the server's UI lists %s (%v)", apps, err)
	}
	executorsJSON, err := httpGetPatiently(ui + "/api/v1/applications/" + list[0].ID + "/executors")
	if err != nil {
		t.Fatal(err)
	}
	var executors []struct {
		ID         string
		TotalTasks int
	}
	if err := json.Unmarshal([]byte(executorsJSON), &executors); err != nil {
		t.Fatal(err)
	}
	tasks := 0
	for _, e := range executors {
		if e.ID != "driver" {
			tasks += e.TotalTasks
		}
	}
	if tasks == 0 {
		t.Errorf("no task ran on an executor: %s", executorsJSON)
	}
	sc, err = n.get(sparkConnects, "spark-connect")
	if err != nil {
		t.Fatal(err)
	}
	if running, _, _ := unstructured.NestedInt64(sc.Object, "status", "executors", "running"); running != 2 {
		t.Errorf("status.executors.running = %d, want 2: %v", running, sc.Object["status"])
	}

	// server.cores and executor.cores are the Pods' CPU requests (Kubeflow #3112: they did
	// nothing there); the executors' come from the real server's executor builder.
	pods, err := n.core.CoreV1().Pods(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "sparkoperator.k8s.io/connect-name=spark-connect"})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]int{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		role := pod.Labels["spark-role"]
		c := namedContainer(pod, map[string]string{"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}[role])
		if c == nil {
			t.Errorf("pod %s (role %q) has no Spark container", pod.Name, role)
			continue
		}
		roles[role]++
		if got, want := c.Resources.Requests.Cpu().String(), exampleCoreRequest(); got != want {
			t.Errorf("%s %s: cpu request %s, want %s (the example's cores)", role, pod.Name, got, want)
		}
	}
	if roles["driver"] != 1 || roles["executor"] < 2 {
		t.Errorf("pods of the SparkConnect by role: %v, want the server and its 2 executors", roles)
	}
}

// httpGetPatiently is httpGet retried for a minute: a Spark UI answers slowly while its JVM is
// busy on a loaded machine.
func httpGetPatiently(url string) (string, error) {
	var body string
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(context.Context) (bool, error) {
		body, last = httpGet(url)
		return last == nil, nil
	})
	if err != nil {
		return "", fmt.Errorf("%w; last: %w", err, last)
	}
	return body, nil
}

// runPython runs script with a virtual environment's Python and returns its combined output.
func runPython(t *testing.T, venv, script string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), append([]string{path}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(venv), path, err, out)
	}
	return string(out)
}
