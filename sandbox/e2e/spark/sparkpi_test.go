//go:build e2e

package spark

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// appTimeout bounds one application's run on the 2-core CI machine: JVM start-up of a driver and
// two executors, the job, and shutdown. On the real node, where each pod is held to its CPU limit
// and the applications of tests that run side by side (parallelOnRealNode) share two cores, three
// times that (runMain).
var appTimeout = 90 * time.Second

// executorRecorder keeps the first running version of every executor pod of a namespace and the
// largest status.executorState seen, since both are gone once the application completes.
type executorRecorder struct {
	n         *namespace
	app       string
	mu        sync.Mutex
	executors map[string]*corev1.Pod
	states    map[string]any
	// policy is the application's executor NetworkPolicy (Spark 4.2+) as first seen.
	policy *networkingv1.NetworkPolicy
	// memoryLimits is, on the real node, what the container cgroup of each of the application's
	// pods allows next to the memory limit the pod asks for, by pod name.
	memoryLimits map[string][2]int64
}

func newExecutorRecorder(n *namespace, app string) *executorRecorder {
	return &executorRecorder{n: n, app: app, executors: map[string]*corev1.Pod{}, memoryLimits: map[string][2]int64{}}
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
	r.observeCgroups()
	if policy, err := r.n.core.NetworkingV1().NetworkPolicies(r.n.name).Get(context.Background(), r.app+"-policy", metav1.GetOptions{}); err == nil {
		r.mu.Lock()
		if r.policy == nil {
			r.policy = policy
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

// TestSparkPi runs the SparkPi examples of each major version. On the real node the executors
// find the driver through the cluster DNS, and each pod's container cgroup allows exactly the
// memory limit the pod asks for.
func TestSparkPi(t *testing.T) {
	parallelOnRealNode(t)
	for _, tc := range []struct {
		example, app, version string
		executor              executorWant
	}{
		{"spark-pi.yaml", "spark-pi", "3.5.3", executorWant{memory: "512m", request: "896Mi", labels: map[string]string{"version": "3.5.3"}}},
		{"spark-pi-spark4.yaml", "spark-pi-spark4", "4.0.1", executorWant{memory: "1024m", request: "1408Mi"}},
		{"spark-pi-spark43.yaml", "spark-pi-spark43", "4.3.0", executorWant{memory: "1024m", request: "1408Mi", noEscalation: true}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			parallelOnRealNode(t)
			n := newNamespace(t, "pi")
			executors := newExecutorRecorder(n, tc.app)
			n.applyExample(tc.example)
			app := n.waitCompleted(tc.app, appTimeout, executors.observe)

			driverName := harness.NestedString(app, "status", "driverInfo", "podName")
			log := n.logs(driverName, "")
			if !strings.Contains(log, "Pi is roughly 3.1") {
				t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driverName, harness.Tail(log, 30))
			}
			checkNoErrors(t, driverName, log)
			driver, err := n.pod(driverName)
			if err != nil {
				t.Fatal(err)
			}
			checkExecutors(t, executors, app, driver, tc.executor)
			checkCgroupLimits(t, executors, driverName)
			if tc.executor.noEscalation {
				checkSpark43(t, n, executors, app, driver)
			}
		})
	}
}

// checkSpark43 checks what sparkhooks does as spark-submit of Spark 4.2 and 4.3 would: the
// executor NetworkPolicy while the application ran, released with it, and a driver container
// that may not escalate privileges.
func checkSpark43(t *testing.T, n *namespace, r *executorRecorder, app *unstructured.Unstructured, driver *corev1.Pod) {
	t.Helper()
	appID := harness.NestedString(app, "status", "sparkApplicationId")
	r.mu.Lock()
	policy := r.policy
	r.mu.Unlock()
	if policy == nil {
		t.Errorf("NetworkPolicy %s-policy was never seen while the application ran", app.GetName())
	} else {
		want := map[string]string{"spark-role": "executor", "spark-app-selector": appID}
		if got := policy.Spec.PodSelector.MatchLabels; !maps.Equal(got, want) {
			t.Errorf("NetworkPolicy selects %v, want %v", got, want)
		}
		if len(policy.Spec.Ingress) != 1 || len(policy.Spec.Ingress[0].From) != 1 || policy.Spec.Ingress[0].From[0].PodSelector == nil ||
			!maps.Equal(policy.Spec.Ingress[0].From[0].PodSelector.MatchLabels, map[string]string{"spark-app-selector": appID}) {
			t.Errorf("NetworkPolicy ingress %+v, want only from pods labelled spark-app-selector=%s", policy.Spec.Ingress, appID)
		}
		if !ownerNamed(policy.OwnerReferences, "SparkApplication", app.GetName(), app.GetUID()) {
			t.Errorf("NetworkPolicy owners %+v do not name the SparkApplication", policy.OwnerReferences)
		}
	}
	// The completed attempt releases it (in the sync after the one that records COMPLETED).
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := n.core.NetworkingV1().NetworkPolicies(n.name).Get(context.Background(), app.GetName()+"-policy", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("NetworkPolicy %s-policy still there 30s after the application completed (%v)", app.GetName(), err)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if c := namedContainer(driver, "spark-kubernetes-driver"); c == nil || c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("driver container security context %+v, want allowPrivilegeEscalation false", c)
	}
}

// executorWant is what an example's executor spec makes of its executor pods.
type executorWant struct {
	memory  string // SPARK_EXECUTOR_MEMORY
	request string // the memory request: memory plus overhead (10%, at least 384Mi)
	labels  map[string]string
	// noEscalation: Spark 4.3 sets allowPrivilegeEscalation false on the executors itself.
	noEscalation bool
}

// checkExecutors checks the executor pods the real driver created from our pod template and
// properties, and that status.executorState tracked them.
func checkExecutors(t *testing.T, r *executorRecorder, app *unstructured.Unstructured, driver *corev1.Pod, want executorWant) {
	t.Helper()
	appID := harness.NestedString(app, "status", "sparkApplicationId")
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
		if got, want := c.Resources.Requests.Cpu().String(), exampleCoreRequest(); got != want {
			t.Errorf("executor %s: cpu request %s, want %s", name, got, want)
		}
		if want.noEscalation && (c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation) {
			t.Errorf("executor %s: security context %+v, want allowPrivilegeEscalation false", name, c.SecurityContext)
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
	return ownerNamed(pod.OwnerReferences, kind, name, uid)
}

func ownerNamed(refs []metav1.OwnerReference, kind, name string, uid types.UID) bool {
	for _, ref := range refs {
		if ref.Kind == kind && ref.Name == name && ref.UID == uid {
			return true
		}
	}
	return false
}

func executorContainer(pod *corev1.Pod) *corev1.Container {
	return namedContainer(pod, "spark-kubernetes-executor")
}

func namedContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
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
