//go:build e2e

package spark

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// kueueMode is one way of queueing SparkApplications with the real Kueue: the chart value that
// chooses it, and how Kueue runs for it.
type kueueMode struct {
	name string
	// value is the chart value helm upgrade turns on.
	value string
	// start runs Kueue for the applications of namespace n.
	start func(t *testing.T, n *namespace)
	// dynamicAllocation: a queued application may use it (else it is refused at apply).
	dynamicAllocation bool
	// serverFlag: the value changes the hook server's flags, which only a hook server the
	// cluster runs (the real node) picks up on helm upgrade; the process kubelet's runs on the
	// host with the flags it started with.
	serverFlag bool
	// podsReady: Kueue runs with waitForPodsReady, and a running application's Workload must
	// turn PodsReady, which Kueue learns from the job integration.
	podsReady bool
}

var kueueModes = []kueueMode{
	{
		// sparkhooks makes each application's Workload and holds the driver until it is admitted.
		name:              "sparkhooks-workload",
		value:             "metacontroller.kueue",
		dynamicAllocation: true,
		start:             func(t *testing.T, _ *namespace) { harness.StartKueue(t, shared.stack.Kubeconfig, shared.dir) },
	},
	{
		// Kueue's own integration makes the Workload and drives spec.suspend; its webhooks are
		// registered as its Deployment registers them, so that an application is created
		// suspended.
		name:       "kueue-integration",
		value:      "kueue.sparkApplicationIntegration",
		serverFlag: true,
		podsReady:  true,
		start: func(t *testing.T, n *namespace) {
			k := harness.StartKueueWith(t, shared.stack.Kubeconfig, shared.dir, harness.KueueOptions{
				FeatureGates: "SparkApplicationIntegration=true",
				Frameworks:   []string{"sparkoperator.k8s.io/sparkapplication"},
				Config:       "waitForPodsReady:\n  timeout: 10m\n",
			})
			registerKueueSparkWebhooks(t, k, n)
		},
	},
}

// TestKueueAdmitsOneAtATime is Kueue admission with real Spark, in both Kueue modes: the real
// Kueue controller, the chart value of the mode turned on with helm upgrade as an administrator
// would, and a ClusterQueue whose CPU quota fits one SparkPi (examples/spark-pi.yaml) of two,
// on a flavor with node labels and a toleration. One runs on the flavor while the other waits
// SUSPENDED with Kueue's message and no driver; deactivating the running one's Workload evicts it
// (its driver goes, it waits again) and lets Kueue admit the other; reactivated, the evicted one
// is requeued, and is admitted and completes once the other has completed, its eviction not
// counted as a failed attempt. Under Kueue's integration, Kueue also waits for the pods to be
// ready (waitForPodsReady), which it learns from the application's status.
//
// It runs alone, never beside the parallel tests (no parallelOnRealNode): the helm upgrade
// changes the registrations of every application, and Metacontroller restarts their controllers.
func TestKueueAdmitsOneAtATime(t *testing.T) {
	if err := harness.InstallKueueCRDs(shared.stack.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	for _, mode := range kueueModes {
		t.Run(mode.name, func(t *testing.T) { queueTwoEvictRequeue(t, mode) })
	}
}

func queueTwoEvictRequeue(t *testing.T, mode kueueMode) {
	if mode.serverFlag && shared.stack.Node == nil {
		t.Skipf("%s sets a flag of the hook server, which runs on the host here with the flags it started with; the real node runs it", mode.value)
	}
	ctx := context.Background()
	n := newNamespace(t, "kueue")
	mode.start(t, n)
	if err := shared.stack.SetChartValues(ctx, mode.value+"=true"); err != nil {
		t.Fatal(err)
	}
	n.waitHookServerRolledOut()
	t.Cleanup(func() {
		if err := shared.stack.SetChartValues(ctx, mode.value+"=null"); err != nil {
			t.Errorf("restoring the chart's values: %v", err)
		}
		n.waitHookServerRolledOut()
	})

	queue := "pi-" + n.name
	// Each SparkPi asks for a driver and two executors of realNodeCoreRequest (100m) on the real
	// node, exampleCoreRequest elsewhere: the quota holds one application and not two.
	request := resource.MustParse(exampleCoreRequest())
	one := 3 * request.MilliValue()
	n.apply(fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: %[1]s
spec:
  nodeLabels: {kubernetes.io/os: linux}
  tolerations: [{key: %[3]s, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: %[1]s
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: %[1]s
          resources:
            - {name: cpu, nominalQuota: "%[2]dm"}
            - {name: memory, nominalQuota: 64Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team
spec:
  clusterQueue: %[1]s
`, queue, one+one/2, flavorToleration))
	t.Cleanup(func() {
		_, _ = kubectl.Run(context.Background(), shared.stack.Kubeconfig, "delete", "clusterqueue/"+queue, "resourceflavor/"+queue, "--wait=false")
	})

	apps := []string{"queued-pi-1", "queued-pi-2"}
	applied := time.Now()
	for _, name := range apps {
		n.applyEditedExampleObject("spark-pi.yaml", func(app *unstructured.Unstructured) {
			app.SetName(name)
			app.SetLabels(map[string]string{"kueue.x-k8s.io/queue-name": "team"})
			// Short runs, and an evicted driver that goes without the default 30 s of grace
			// (the JVM does not end on SIGTERM at once): three runs fit in a CI minute or two.
			_ = unstructured.SetNestedStringSlice(app.Object, []string{"10"}, "spec", "arguments")
			_ = unstructured.SetNestedField(app.Object, int64(5), "spec", "driver", "terminationGracePeriodSeconds")
		})
	}
	// Kueue admits one, whichever its queue orders first, and the other waits with Kueue's
	// message in its Workload.
	running, waiting := n.oneRunsOneWaits(apps)
	t.Logf("%s: %s admitted and submitted %s after kubectl apply", mode.name, running, time.Since(applied).Round(10*time.Millisecond))
	if _, err := n.pod(waiting + "-driver"); !apierrors.IsNotFound(err) {
		t.Errorf("%s has a driver Pod before Kueue admitted it (%v)", waiting, err)
	}
	n.requireOnFlavor(running)

	// Deactivating a Workload is how a cluster admin evicts it (Kueue sets Evicted, reason
	// Deactivated): the running application stops, and the other one gets the quota.
	evictedService, evictedAppID := n.driverService(running)
	evictedAt := time.Now()
	n.setWorkloadsActive(running, false)
	var stopped, admitted time.Duration // since the deactivation: the attempt ended, the other submitted
	n.waitFor(sparkApplications, running, "SUSPENDED, Queued, no driver, and the other admitted", appTimeout, func(app *unstructured.Unstructured) bool {
		if st := appState(app); stopped == 0 && (st == "SUSPENDING" || st == "SUSPENDED") {
			stopped = time.Since(evictedAt)
		}
		if other, err := n.get(sparkApplications, waiting); err == nil && admitted == 0 && appState(other) != "SUSPENDED" && appState(other) != "" {
			admitted = time.Since(evictedAt)
		}
		status, _ := queuedCondition(app)
		_, err := n.pod(running + "-driver")
		return appState(app) == "SUSPENDED" && status == "True" && apierrors.IsNotFound(err) && admitted != 0
	})
	t.Logf("%s: after %s's Workload was deactivated: its attempt stopped in %s, its driver Pod gone in %s, %s admitted and submitted in %s",
		mode.name, running, stopped.Round(10*time.Millisecond), time.Since(evictedAt).Round(10*time.Millisecond), waiting, admitted.Round(10*time.Millisecond))
	// Requeued: it waits for the quota the other one holds now.
	n.setWorkloadsActive(running, true)

	podsReady := false
	n.waitAppState(waiting, "COMPLETED", 2*appTimeout, func() {
		podsReady = podsReady || n.workloadCondition(waiting, "PodsReady") == "True"
	})
	if mode.podsReady && !podsReady {
		t.Errorf("%s: its Workload never turned PodsReady while it ran", waiting)
	}
	doneAt := time.Now()
	n.waitFor(sparkApplications, running, "admitted again", 2*appTimeout, func(app *unstructured.Unstructured) bool {
		st := appState(app)
		return st != "SUSPENDED" && st != ""
	})
	t.Logf("%s: %s readmitted and submitted %s after %s completed", mode.name, running, time.Since(doneAt).Round(10*time.Millisecond), waiting)
	// The evicted attempt's executors may outlive their driver (they belong to the application
	// too) and look its Service up after it went; cluster DNS caches that the name does not
	// exist, so the requeued attempt must not reuse it.
	if requeued, _ := n.driverService(running); requeued == evictedService {
		t.Errorf("%s: the requeued attempt reuses the evicted attempt's driver Service %s", mode.name, requeued)
	}
	t.Logf("%s: the evicted attempt's driver Service %s, the requeued one's its own; %d executor Pods of the evicted attempt left", mode.name, evictedService, n.executorPodsOf(evictedAppID))
	n.requireOnFlavor(running)
	app := n.waitAppState(running, "COMPLETED", 2*appTimeout)
	if got, _, _ := unstructured.NestedInt64(app.Object, "status", "executionAttempts"); got != 1 {
		t.Errorf("%s: executionAttempts %d after an eviction and a complete run, want 1 (an eviction is no failed attempt)", running, got)
	}
	for _, name := range apps {
		app, err := n.get(sparkApplications, name)
		if err != nil {
			t.Fatal(err)
		}
		driver := harness.NestedString(app, "status", "driverInfo", "podName")
		if log := n.logs(driver, ""); !strings.Contains(log, "Pi is roughly 3.1") {
			t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driver, harness.Tail(log, 30))
		}
	}
	n.dynamicAllocation(mode)
}

// dynamicAllocation applies examples/spark-pi-dynamic-allocation.yaml (up to 10 executors, at
// least 1) to the queue, whose quota fits a driver and fewer than 10 executors. sparkhooks
// queues it with minExecutors as the executor pod set's minCount, and Kueue's partial admission
// admits fewer executors; Kueue's integration refuses it at apply.
func (n *namespace) dynamicAllocation(mode kueueMode) {
	n.t.Helper()
	const name = "queued-dynamic"
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "spark-pi-dynamic-allocation.yaml"))
	if err != nil {
		n.t.Fatal(err)
	}
	app := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &app.Object); err != nil {
		n.t.Fatal(err)
	}
	app.SetName(name)
	app.SetLabels(map[string]string{"kueue.x-k8s.io/queue-name": "team"})
	// Kueue's webhook wants the mode written out, which sparkhooks defaults; with it, dynamic
	// allocation is the one refusal left.
	_ = unstructured.SetNestedField(app.Object, "cluster", "spec", "mode")
	if data, err = yaml.Marshal(app.Object); err != nil {
		n.t.Fatal(err)
	}
	out, err := n.applyManifest(data)
	if !mode.dynamicAllocation {
		if err == nil || !strings.Contains(out, "dynamicAllocation") || strings.Contains(out, "spec.mode") {
			n.t.Errorf("%s: a queued application with dynamic allocation was not refused at apply (%v): %s", mode.name, err, out)
		}
		n.t.Logf("%s: dynamic allocation refused: %s", mode.name, strings.TrimSpace(out))
		return
	}
	if err != nil {
		n.t.Fatalf("%s: applying a queued application with dynamic allocation: %v: %s", mode.name, err, out)
	}
	defer func() { _, _ = n.kubectl("delete", "sparkapplications.sparkoperator.k8s.io", name, "--wait=false") }()
	var minCount, admitted int64
	err = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, appTimeout, true, func(context.Context) (bool, error) {
		for _, wl := range n.workloadsOf(name) {
			podSets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
			assignments, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
			for i, ps := range podSets {
				if m, ok := ps.(map[string]any); ok && m["name"] == "executor" {
					minCount, _, _ = unstructured.NestedInt64(m, "minCount")
					if i < len(assignments) {
						admitted, _, _ = unstructured.NestedInt64(assignments[i].(map[string]any), "count")
						return true, nil
					}
				}
			}
		}
		return false, nil
	})
	if err != nil || minCount != 1 || admitted < 1 || admitted >= 10 {
		n.t.Errorf("%s: want the executor pod set's minCount 1 and a partial admission of fewer than 10 executors, got minCount %d, %d admitted (%v)", mode.name, minCount, admitted, err)
	}
	n.t.Logf("%s: dynamic allocation queued with minCount %d; Kueue admitted %d of 10 executors", mode.name, minCount, admitted)
}

var kueueWorkloads = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// waitHookServerRolledOut waits until every hook server Pod runs the release's current template:
// a value that changes the server's flags (kueue.sparkApplicationIntegration) rolls it, and the
// old Pod answers hooks for a while after the upgrade (its preStop sleep), without the flag.
func (n *namespace) waitHookServerRolledOut() {
	n.t.Helper()
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		dep, err := n.core.AppsV1().Deployments(stack.SparkhooksNamespace).Get(ctx, "sparkhooks", metav1.GetOptions{})
		if err != nil || dep.Status.ObservedGeneration < dep.Generation || dep.Status.UpdatedReplicas != dep.Status.Replicas ||
			dep.Status.ReadyReplicas != dep.Status.Replicas {
			return false, nil
		}
		pods, err := n.core.CoreV1().Pods(stack.SparkhooksNamespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(dep.Spec.Selector)})
		if err != nil {
			return false, nil
		}
		servers := 0
		for _, p := range pods.Items {
			if len(p.OwnerReferences) == 0 || p.OwnerReferences[0].Kind != "ReplicaSet" {
				continue // the gc Job's
			}
			if p.DeletionTimestamp != nil {
				return false, nil
			}
			servers++
		}
		return servers == int(dep.Status.Replicas), nil
	})
	if err != nil {
		n.t.Fatalf("the hook server did not roll out: %v", err)
	}
}

// flavorToleration is the key of the toleration the test's ResourceFlavor adds to the pods it
// admits; no node is tainted with it.
const flavorToleration = "sparkhooks.example.com/kueue-flavor"

// oneRunsOneWaits waits until one application of two is admitted and submitted and the other
// waits SUSPENDED, with no driver and Kueue's message in its Workload, and names them.
func (n *namespace) oneRunsOneWaits(apps []string) (running, waiting string) {
	n.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, appTimeout, true, func(context.Context) (bool, error) {
		running, waiting = "", ""
		for _, name := range apps {
			app, err := n.get(sparkApplications, name)
			if err != nil {
				return false, nil
			}
			status, _ := queuedCondition(app)
			switch {
			case appState(app) == "SUSPENDED" && status == "True" && strings.Contains(n.workloadMessage(name), "insufficient unused quota"):
				waiting = name
			case appState(app) != "SUSPENDED" && appState(app) != "":
				running = name
			}
		}
		return running != "" && waiting != "", nil
	})
	if err != nil {
		n.t.Fatalf("want one application admitted and running, the other SUSPENDED with Kueue's message (running %q, waiting %q): %v", running, waiting, err)
	}
	n.t.Logf("%s runs; Kueue's message for %s: %s", running, waiting, n.workloadMessage(waiting))
	return running, waiting
}

// driverService returns the name of the application's driver Service, which its current
// attempt's properties name, and the attempt's Spark application id.
func (n *namespace) driverService(app string) (name, appID string) {
	n.t.Helper()
	obj, err := n.get(sparkApplications, app)
	if err != nil {
		n.t.Fatal(err)
	}
	appID = harness.NestedString(obj, "status", "sparkApplicationId")
	svcs, err := n.core.CoreV1().Services(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-app-selector=" + appID})
	if err != nil {
		n.t.Fatalf("listing the Services of %s: %v", app, err)
	}
	for _, svc := range svcs.Items {
		if strings.HasSuffix(svc.Name, "-driver-svc") {
			return svc.Name, appID
		}
	}
	n.t.Fatalf("%s has no driver Service labelled spark-app-selector=%s", app, appID)
	return "", ""
}

// executorPodsOf counts the executor Pods of the attempt whose Spark application id is appID.
func (n *namespace) executorPodsOf(appID string) int {
	n.t.Helper()
	pods, err := n.core.CoreV1().Pods(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=executor,spark-app-selector=" + appID})
	if err != nil {
		n.t.Fatalf("listing executor Pods: %v", err)
	}
	return len(pods.Items)
}

// workloadsOf are the Workloads the application owns: the one sparkhooks makes, or the one
// Kueue's integration makes.
func (n *namespace) workloadsOf(app string) []unstructured.Unstructured {
	n.t.Helper()
	list, err := n.dyn.Resource(kueueWorkloads).Namespace(n.name).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		n.t.Fatalf("listing Workloads: %v", err)
	}
	return slices.DeleteFunc(list.Items, func(wl unstructured.Unstructured) bool {
		return !slices.ContainsFunc(wl.GetOwnerReferences(), func(o metav1.OwnerReference) bool {
			return o.Kind == "SparkApplication" && o.Name == app
		})
	})
}

// workloadMessage is the message of the QuotaReserved condition of the application's Workload.
func (n *namespace) workloadMessage(app string) string {
	_, msg := n.workloadConditionOf(app, "QuotaReserved")
	return msg
}

// workloadCondition is the status of condition typ of the application's Workload.
func (n *namespace) workloadCondition(app, typ string) string {
	status, _ := n.workloadConditionOf(app, typ)
	return status
}

func (n *namespace) workloadConditionOf(app, typ string) (status, message string) {
	for _, wl := range n.workloadsOf(app) {
		conditions, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		for _, c := range conditions {
			if m, ok := c.(map[string]any); ok && m["type"] == typ {
				return fmt.Sprint(m["status"]), fmt.Sprint(m["message"])
			}
		}
	}
	return "", ""
}

// setWorkloadsActive sets spec.active of every Workload the application owns.
func (n *namespace) setWorkloadsActive(app string, active bool) {
	n.t.Helper()
	wls := n.workloadsOf(app)
	if len(wls) == 0 && !active {
		n.t.Fatalf("%s has no Workload", app)
	}
	for _, wl := range wls {
		patch := fmt.Sprintf(`{"spec":{"active":%t}}`, active)
		if out, err := n.kubectl("patch", "workloads.kueue.x-k8s.io", wl.GetName(), "--type=merge", "-p", patch); err != nil && !strings.Contains(out, "NotFound") {
			n.t.Fatalf("patching Workload %s: %v: %s", wl.GetName(), err, out)
		}
	}
}

// requireOnFlavor checks that the application's driver Pod carries the flavor's node label and
// toleration, as admitted.
func (n *namespace) requireOnFlavor(app string) {
	n.t.Helper()
	var pod []byte
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, appTimeout, true, func(context.Context) (bool, error) {
		p, err := n.pod(app + "-driver")
		if err != nil {
			return false, nil
		}
		pod, _ = json.Marshal(p.Spec)
		return true, nil
	})
	if err != nil {
		n.t.Fatalf("%s: no driver Pod: %v", app, err)
	}
	if !strings.Contains(string(pod), `"nodeSelector":{"kubernetes.io/os":"linux"}`) || !strings.Contains(string(pod), flavorToleration) {
		n.t.Errorf("%s: the driver Pod lacks the flavor's node label or toleration: %s", app, pod)
	}
}

// registerKueueSparkWebhooks registers Kueue's SparkApplication webhooks, as its own Deployment
// does, for namespace ns alone: the mutating one creates a labelled application suspended, the
// validating one refuses what Kueue cannot queue. They go before Kueue stops (cleanups run last
// first), or every create there would fail.
func registerKueueSparkWebhooks(t *testing.T, k *harness.Kueue, n *namespace) {
	t.Helper()
	name := "kueue-spark-" + n.name
	hook := func(kind, path, operations string) string {
		return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %[1]sWebhookConfiguration
metadata:
  name: %[2]s
webhooks:
  - name: %[3]s.sparkapplication.kueue.x-k8s.io
    clientConfig:
      url: %[4]s%[5]s
      caBundle: %[6]s
    rules:
      - {apiGroups: [sparkoperator.k8s.io], apiVersions: [v1beta2], resources: [sparkapplications], operations: [%[7]s]}
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: %[8]s}
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
`, kind, name, strings.ToLower(kind), k.WebhookURL, path, base64.StdEncoding.EncodeToString(k.CACert), operations, n.name)
	}
	manifest := hook("Mutating", "/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication", "CREATE") + "---\n" +
		hook("Validating", "/validate-sparkoperator-k8s-io-v1beta2-sparkapplication", "CREATE, UPDATE")
	n.apply(manifest)
	t.Cleanup(func() {
		_, _ = kubectl.Run(context.Background(), shared.stack.Kubeconfig, "delete", "mutatingwebhookconfiguration/"+name, "validatingwebhookconfiguration/"+name)
	})
}

// queuedCondition is the status and message of the application's Queued condition.
func queuedCondition(app *unstructured.Unstructured) (status, message string) {
	conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Queued" {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["message"])
		}
	}
	return "", ""
}
