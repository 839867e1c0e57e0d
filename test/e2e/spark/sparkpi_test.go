//go:build e2e

package spark

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// appTimeout bounds one application's run on the 2-core CI machine: JVM start-up of a driver and
// two executors, the job, and shutdown.
const appTimeout = 90 * time.Second

// executorRecorder keeps the first running version of every executor pod of a namespace and the
// largest status.executorState seen, since both are gone once the application completes.
type executorRecorder struct {
	n         *namespace
	app       string
	mu        sync.Mutex
	executors map[string]*corev1.Pod
	states    map[string]any
}

func newExecutorRecorder(n *namespace, app string) *executorRecorder {
	return &executorRecorder{n: n, app: app, executors: map[string]*corev1.Pod{}}
}

func (r *executorRecorder) observe() {
	pods, err := r.n.core.CoreV1().Pods(r.n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=executor"})
	if err == nil {
		r.mu.Lock()
		for i := range pods.Items {
			pod := pods.Items[i]
			if _, seen := r.executors[pod.Name]; !seen && pod.Status.Phase == corev1.PodRunning {
				r.executors[pod.Name] = &pod
			}
		}
		r.mu.Unlock()
	}
	app, err := r.n.get(sparkApplications, r.app)
	if err != nil {
		return
	}
	states, _, _ := unstructured.NestedMap(app.Object, "status", "executorState")
	r.mu.Lock()
	if len(states) > len(r.states) {
		r.states = states
	}
	r.mu.Unlock()
}

func TestSparkPi(t *testing.T) {
	for _, tc := range []struct {
		example, app, version string
		executor              executorWant
	}{
		{"spark-pi.yaml", "spark-pi", "3.5.3", executorWant{memory: "512m", request: "896Mi", labels: map[string]string{"version": "3.5.3"}}},
		{"spark-pi-spark4.yaml", "spark-pi-spark4", "4.0.1", executorWant{memory: "1024m", request: "1408Mi"}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			n := newNamespace(t, "pi")
			executors := newExecutorRecorder(n, tc.app)
			n.applyExample(tc.example)
			app := n.waitAppState(tc.app, "COMPLETED", appTimeout, executors.observe)

			driverName := nestedString(app, "status", "driverInfo", "podName")
			log := n.logs(driverName, "")
			if !strings.Contains(log, "Pi is roughly 3.1") {
				t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driverName, tail(log, 30))
			}
			checkNoErrors(t, driverName, log)
			driver, err := n.pod(driverName)
			if err != nil {
				t.Fatal(err)
			}
			checkExecutors(t, executors, app, driver, tc.executor)
		})
	}
}

// executorWant is what an example's executor spec makes of its executor pods.
type executorWant struct {
	memory  string // SPARK_EXECUTOR_MEMORY
	request string // the memory request: memory plus overhead (10%, at least 384Mi)
	labels  map[string]string
}

// checkExecutors checks the executor pods the real driver created from our pod template and
// properties, and that status.executorState tracked them.
func checkExecutors(t *testing.T, r *executorRecorder, app *unstructured.Unstructured, driver *corev1.Pod, want executorWant) {
	t.Helper()
	appID := nestedString(app, "status", "sparkApplicationId")
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.executors) == 0 {
		t.Fatal("no executor pod was seen running")
	}
	for name, pod := range r.executors {
		wantLabels := map[string]string{
			"spark-role":                         "executor",
			"spark-app-selector":                 appID,
			"sparkoperator.k8s.io/app-name":      driver.Labels["sparkoperator.k8s.io/app-name"],
			"sparkoperator.k8s.io/submission-id": driver.Labels["sparkoperator.k8s.io/submission-id"],
		}
		for k, v := range want.labels {
			wantLabels[k] = v
		}
		for k, v := range wantLabels {
			if pod.Labels[k] != v {
				t.Errorf("executor %s: label %s=%q, want %q", name, k, pod.Labels[k], v)
			}
		}
		// Spark makes the driver each executor's controller; our template adds the application
		// as a plain owner (for Kueue and the garbage collector).
		controller := metav1.GetControllerOf(pod)
		if controller == nil || controller.Kind != "Pod" || controller.Name != driver.Name || controller.UID != driver.UID {
			t.Errorf("executor %s: controller %+v, want the driver pod %s (%s)", name, controller, driver.Name, driver.UID)
		}
		if !ownedBy(pod, "SparkApplication", app.GetName(), app.GetUID()) {
			t.Errorf("executor %s: owner references %+v do not name the SparkApplication", name, pod.OwnerReferences)
		}
		if pod.Spec.ServiceAccountName == "" {
			t.Errorf("executor %s: no service account", name)
		}
		c := executorContainer(pod)
		if c == nil {
			t.Errorf("executor %s: no spark-kubernetes-executor container: %+v", name, pod.Spec.Containers)
			continue
		}
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		for k, v := range map[string]string{"SPARK_EXECUTOR_MEMORY": want.memory, "SPARK_EXECUTOR_CORES": "1", "SPARK_APPLICATION_ID": appID} {
			if env[k] != v {
				t.Errorf("executor %s: env %s=%q, want %q", name, k, env[k], v)
			}
		}
		if got := c.Resources.Requests.Memory().String(); got != want.request {
			t.Errorf("executor %s: memory request %s, want %s", name, got, want.request)
		}
		if got := c.Resources.Requests.Cpu().String(); got != "1" {
			t.Errorf("executor %s: cpu request %s, want 1", name, got)
		}
	}
	if len(r.states) == 0 {
		t.Errorf("status.executorState never listed an executor (executors seen: %d)", len(r.executors))
	}
	for name := range r.executors {
		if _, ok := r.states[name]; !ok {
			t.Errorf("status.executorState %v does not list executor %s", r.states, name)
		}
	}
}

func ownedBy(pod *corev1.Pod, kind, name string, uid types.UID) bool {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == kind && ref.Name == name && ref.UID == uid {
			return true
		}
	}
	return false
}

func executorContainer(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "spark-kubernetes-executor" {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// checkNoErrors fails on ERROR lines in a Spark log until the context stops: a driver that completes while its calls to
// the API server fail (a resource the cluster lacks, a permission) would work by luck.
func checkNoErrors(t *testing.T, pod, log string) {
	t.Helper()
	var errors []string
	lines := strings.Split(log, "\n")
	for i, line := range lines {
		// Spark 4 can log a race of its own RPC dispatcher while the context stops; what
		// matters happened before.
		if strings.Contains(line, "SparkContext is stopping") {
			break
		}
		if strings.Contains(line, " ERROR ") {
			// The exception and the first frames say what failed.
			errors = append(errors, lines[i:min(i+8, len(lines))]...)
		}
	}
	if len(errors) > 0 {
		t.Errorf("%s logged errors:\n%s", pod, strings.Join(errors, "\n"))
	}
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
