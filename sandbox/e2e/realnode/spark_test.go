//go:build e2e

package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var sparkApplications = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}

// createExample creates an example SparkApplication in ns, changed by edit.
func createExample(t *testing.T, ns, file string, edit func(spec map[string]any)) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	app := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &app.Object); err != nil {
		t.Fatal(err)
	}
	edit(app.Object["spec"].(map[string]any))
	client, err := dynamic.NewForConfig(shared.stack.Admin)
	if err != nil {
		t.Fatal(err)
	}
	created, err := client.Resource(sparkApplications).Namespace(ns).Create(context.Background(), app, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// smallCores asks for a quarter core per pod: the node is this 2-core machine, and the examples
// ask for a core per pod, as on a cluster's nodes. Limits stay as the example has them.
func smallCores(spec map[string]any) {
	for _, role := range []string{"driver", "executor"} {
		spec[role].(map[string]any)["coreRequest"] = "250m"
	}
}

// sparkRun follows one application to an end, reading the cgroups of its pods while they run.
type sparkRun struct {
	ns, app string
	// memoryLimits are what each pod's container cgroup allows, by pod name, next to the limit the
	// pod asks for.
	memoryLimits map[string][2]int64
}

func (r *sparkRun) waitForState(t *testing.T, timeout time.Duration, states ...string) *unstructured.Unstructured {
	t.Helper()
	client, err := dynamic.NewForConfig(shared.stack.Admin)
	if err != nil {
		t.Fatal(err)
	}
	var app *unstructured.Unstructured
	waitUntil(t, timeout, r.app+" to be "+strings.Join(states, " or "), func() error {
		r.observePods(t)
		var err error
		if app, err = client.Resource(sparkApplications).Namespace(r.ns).Get(context.Background(), r.app, metav1.GetOptions{}); err != nil {
			return err
		}
		state, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state")
		for _, s := range states {
			if state == s {
				return nil
			}
		}
		return &stateError{state}
	})
	return app
}

type stateError struct{ state string }

func (e *stateError) Error() string { return "state " + strconv.Quote(e.state) }

func (r *sparkRun) observePods(t *testing.T) {
	pods, err := shared.client.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "sparkoperator.k8s.io/app-name=" + r.app})
	if err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if _, seen := r.memoryLimits[pod.Name]; seen || pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Running == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(containerCgroup(t, pod, "memory"), "memory.limit_in_bytes"))
		if err != nil {
			continue // the container ended in between
		}
		got, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		r.memoryLimits[pod.Name] = [2]int64{got, pod.Spec.Containers[0].Resources.Limits.Memory().Value()}
	}
}

// TestSparkPi runs examples/spark-pi.yaml through the chart on the real node: the driver's
// executors reach it at its Service's DNS name, every pod runs under the memory limit it asks for
// (read from its container's cgroup), and the driver computes Pi.
func TestSparkPi(t *testing.T) {
	ns := "spark-pi"
	if err := shared.stack.AddJobNamespace(context.Background(), ns, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(dumpNamespace(ns))
		}
		_ = shared.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	begin := time.Now()
	createExample(t, ns, "spark-pi.yaml", smallCores)
	run := &sparkRun{ns: ns, app: "spark-pi", memoryLimits: map[string][2]int64{}}
	app := run.waitForState(t, 5*time.Minute, "COMPLETED", "FAILED")
	t.Logf("spark-pi ended in %s", time.Since(begin).Round(100*time.Millisecond))
	if state, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state"); state != "COMPLETED" {
		msg, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage")
		t.Fatalf("spark-pi %s: %s", state, msg)
	}
	if log := podLog(ns, "spark-pi-driver"); !strings.Contains(log, "Pi is roughly 3.1") {
		t.Errorf("the driver's log has no Pi:\n%s", log)
	}
	executors := 0
	for pod, limits := range run.memoryLimits {
		if strings.Contains(pod, "-exec-") {
			executors++
		}
		if limits[1] == 0 || limits[0] != limits[1] {
			t.Errorf("pod %s: its cgroup allows %d bytes, the pod asks for a limit of %d", pod, limits[0], limits[1])
		}
	}
	if _, ok := run.memoryLimits["spark-pi-driver"]; !ok || executors == 0 {
		t.Errorf("cgroups read of %v: want the driver's and an executor's", run.memoryLimits)
	}
}

// TestExecutorOOMKilled: an executor whose memory overhead is too small for what its JVM uses
// outside the heap is killed by the kernel at its container's limit, and the application says so:
// the ExecutorFailed condition names the pod, OOMKilled, the limit and what to raise. The JVM
// touches its whole heap at start (-XX:+AlwaysPreTouch, with the entrypoint's -Xms equal to
// -Xmx), so the heap alone fills the limit that 16 MiB of overhead leaves.
func TestExecutorOOMKilled(t *testing.T) {
	ns := "executor-oom"
	if err := shared.stack.AddJobNamespace(context.Background(), ns, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(dumpNamespace(ns))
		}
		_ = shared.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	createExample(t, ns, "spark-pi.yaml", func(spec map[string]any) {
		smallCores(spec)
		executor := spec["executor"].(map[string]any)
		executor["instances"] = int64(1)
		executor["memoryOverhead"] = "16m"
		executor["javaOptions"] = "-XX:+AlwaysPreTouch"
	})
	run := &sparkRun{ns: ns, app: "spark-pi", memoryLimits: map[string][2]int64{}}
	// The driver deletes a failed executor's pod: look for the kernel's verdict while it exists.
	killed := ""
	var message string
	waitUntil(t, 4*time.Minute, "an OOMKilled executor and the ExecutorFailed condition", func() error {
		pods, err := shared.client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=executor"})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.ContainerStatuses {
				if c.State.Terminated != nil && c.State.Terminated.Reason == "OOMKilled" {
					killed = p.Name
				}
			}
		}
		app := run.waitForState(t, time.Minute, "SUBMITTED", "RUNNING", "FAILING", "FAILED", "COMPLETED")
		conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
		for _, c := range conditions {
			c := c.(map[string]any)
			if c["type"] == "ExecutorFailed" && c["status"] == "True" {
				if c["reason"] != "ExecutorOOMKilled" {
					t.Fatalf("ExecutorFailed: %v: %v, want ExecutorOOMKilled", c["reason"], c["message"])
				}
				if message, _ = c["message"].(string); killed == "" {
					return errors.New("the condition is there, no OOMKilled pod seen yet")
				}
				return nil
			}
		}
		return errors.New("no ExecutorFailed condition yet")
	})
	for _, want := range []string{"OOMKilled, exit code 137", "its memory limit of 528Mi", "raise spec.executor.memoryOverhead"} {
		if !strings.Contains(message, want) {
			t.Errorf("the condition's message has no %q: %s", want, message)
		}
	}
	t.Logf("%s was OOMKilled: %s", killed, message)
	// What `kubectl get events` and `kubectl describe` show of it: a Warning from sparkhooks.
	waitUntil(t, 30*time.Second, "the SparkExecutorFailed Event", func() error {
		events, err := shared.client.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "regarding.name=spark-pi"})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.ReportingController == "sparkhooks" && e.Reason == "SparkExecutorFailed" && e.Type == "Warning" && strings.Contains(e.Note, "OOMKilled") {
				return nil
			}
		}
		return fmt.Errorf("%d Events, none a Warning SparkExecutorFailed naming OOMKilled", len(events.Items))
	})
}
