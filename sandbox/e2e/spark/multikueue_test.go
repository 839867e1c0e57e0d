//go:build e2e

package spark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

var workloadsGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// TestMultiKueueRunsOnTheWorker is MultiKueue with two clusters on this machine. The worker is
// this suite's cluster (the node, real Spark, the real Metacontroller), with the real Kueue and
// the chart's Workload child; the manager is a second control plane with the chart's hooks and
// the real Metacontroller on the host (no node: nothing runs there) and the real Kueue with
// MultiKueue for SparkApplication.v1beta2.sparkoperator.k8s.io as an external framework,
// dispatching to the worker through a MultiKueueCluster whose Secret holds the worker's
// kubeconfig. Applications applied on the manager with spec.managedBy kueue.x-k8s.io/multikueue:
// two SparkPis, of which the worker's quota fits one, run there one after the other, and the
// manager's objects show the worker's status up to COMPLETED; a failing one shows FAILED with its
// cause; one deleted on the manager goes on the worker. It logs the dispatch time (created on
// the manager → driver Running on the worker) and the delay of the status copies.
//
// It runs alone, never beside the parallel tests: the helm upgrade changes the registrations of
// every application, and Metacontroller restarts their controllers.
func TestMultiKueueRunsOnTheWorker(t *testing.T) {
	ctx := context.Background()
	if err := harness.InstallKueueCRDs(shared.stack.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	harness.StartKueue(t, shared.stack.Kubeconfig, shared.dir)
	if err := shared.stack.SetChartValues(ctx, "metacontroller.kueue=true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := shared.stack.SetChartValues(ctx, "metacontroller.kueue=null"); err != nil {
			t.Errorf("restoring the chart's values: %v", err)
		}
	})
	n := newNamespace(t, "multikueue")
	queue := "mk-" + n.name
	// The worker's quota: one SparkPi (a driver and two executors), not two.
	request := resource.MustParse(exampleCoreRequest())
	one := 3 * request.MilliValue()
	n.apply(clusterQueue(queue, fmt.Sprintf("%dm", one+one/2), ""))
	t.Cleanup(func() {
		_, _ = kubectl.Run(context.Background(), shared.stack.Kubeconfig, "delete", "clusterqueue/"+queue, "resourceflavor/"+queue, "--wait=false")
	})

	m := startManager(t, n.name, queue)

	// Two SparkPis: both fit the manager's queue and are dispatched; the worker admits one.
	apps := []string{"mk-pi-1", "mk-pi-2"}
	created := map[string]time.Time{}
	for _, name := range apps {
		m.applyApp(name, nil)
		created[name] = time.Now()
	}
	mirror := newMirrorWatch(t, n, m, apps)
	var first, second string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*appTimeout, true, func(context.Context) (bool, error) {
		mirror.observe()
		for i, name := range apps {
			if pod, err := n.pod(name + "-driver"); err == nil && pod.Status.Phase == corev1.PodRunning {
				first, second = name, apps[1-i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no driver of %v Running on the worker: %v", apps, err)
	}
	t.Logf("dispatch: %s created on the manager, its driver Running on the worker %s later", first, time.Since(created[first]).Round(10*time.Millisecond))
	if _, err := n.get(sparkApplications, second); !apierrors.IsNotFound(err) {
		t.Errorf("%s is on the worker while %s holds its quota (%v)", second, first, err)
	}
	// MultiKueue copies the second's Workload once the manager's Kueue reserves its quota,
	// which need not have happened when the first's driver runs.
	var wl *unstructured.Unstructured
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, appTimeout, true, func(context.Context) (bool, error) {
		wl, err = n.get(workloadsGVR, "sparkapplication-"+second)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the worker has no Workload for %s, which MultiKueue dispatches: %v", second, err)
	}
	t.Logf("the worker's Kueue on %s: %s", second, workloadMessage(wl))

	for _, name := range []string{first, second} {
		app := m.waitState(name, "COMPLETED", 3*appTimeout, mirror.observe)
		if got := harness.NestedString(app, "status", "driverInfo", "podName"); got != name+"-driver" {
			t.Errorf("the manager's %s names the driver %q, not the worker's %s-driver", name, got, name)
		}
		if name == second {
			t.Logf("dispatch: %s created on the manager, its driver Running on the worker %s later (after %s's quota was freed)",
				second, mirror.running[second].Sub(created[second]).Round(10*time.Millisecond), first)
		}
	}
	mirror.report()
	if procs, rss := residentMemory(m.dir); len(procs) > 0 {
		t.Logf("the manager cluster's processes that name its directory (%s) use %d MiB resident", strings.Join(procs, ", "), rss>>20)
	}
	// The final status releases the manager's Workload, and MultiKueue the worker's copy with it.
	for _, name := range apps {
		m.waitGone(workloadsGVR, "sparkapplication-"+name, appTimeout)
		n.waitGoneOnWorker(sparkApplications, name, appTimeout)
		if app := m.get(sparkApplications, name); appState(app) != "COMPLETED" {
			t.Errorf("%s on the manager: state %q once the worker's copy is gone, want COMPLETED kept", name, appState(app))
		}
	}

	// A failing application: FAILED with the driver's cause, on the manager.
	m.applyApp("mk-bad", func(spec map[string]any) { spec["arguments"] = []any{"not-a-number"} })
	app := m.waitState("mk-bad", "FAILED", 3*appTimeout)
	cause := harness.NestedString(app, "status", "applicationState", "errorMessage")
	if !strings.Contains(cause, "exit code 1") {
		t.Errorf("the manager's FAILED application says %q, not the driver's failure", cause)
	}
	t.Logf("the manager's mk-bad: FAILED, %s", cause)

	// Deleted on the manager while it runs on the worker: gone there too.
	m.applyApp("mk-deleted", func(spec map[string]any) { spec["arguments"] = []any{"100000"} })
	n.waitForPod("mk-deleted-driver", 2*appTimeout, corev1.PodRunning)
	if out, err := kubectl.Run(ctx, m.stack.Kubeconfig, "--namespace", n.name, "delete", "sparkapplications.sparkoperator.k8s.io/mk-deleted", "--wait=false"); err != nil {
		t.Fatalf("deleting on the manager: %v: %s", err, out)
	}
	deleted := time.Now()
	n.waitGoneOnWorker(sparkApplications, "mk-deleted", appTimeout)
	n.waitGoneOnWorker(pods, "mk-deleted-driver", appTimeout)
	t.Logf("deleted on the manager: the worker's copy and its driver gone %s later", time.Since(deleted).Round(10*time.Millisecond))
}

// clusterQueue is a ResourceFlavor, a ClusterQueue of cpu quota and a LocalQueue "team" for it,
// the ClusterQueue with the admission check check when one is named.
func clusterQueue(name, cpu, check string) string {
	checks := ""
	if check != "" {
		checks = fmt.Sprintf("  admissionChecksStrategy:\n    admissionChecks:\n      - name: %s\n", check)
	}
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: %[1]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: %[1]s
spec:
  namespaceSelector: {}
%[3]s  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: %[1]s
          resources:
            - {name: cpu, nominalQuota: "%[2]s"}
            - {name: memory, nominalQuota: 64Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team
spec:
  clusterQueue: %[1]s
`, name, cpu, checks)
}

// manager is the MultiKueue manager cluster.
type manager struct {
	t         *testing.T
	stack     *stack.Stack
	dir       string // its state, which the command lines of its processes name
	dyn       dynamic.Interface
	namespace string
}

// startManager starts the manager cluster: a control plane, the chart with its Workload child
// (hooks and the real Metacontroller on the host), Kueue's CRDs and the real Kueue with
// MultiKueue, the namespace the worker's test namespace mirrors, a LocalQueue "team" in it whose
// ClusterQueue (room for several applications) dispatches through MultiKueue to the worker.
func startManager(t *testing.T, namespace, queue string) *manager {
	t.Helper()
	crds, err := harness.KueueCRDDir()
	if err != nil {
		t.Fatal(err)
	}
	metacontroller := os.Getenv("METACONTROLLER_BIN")
	if metacontroller == "" {
		t.Skip("MultiKueue's manager runs the real Metacontroller: METACONTROLLER_BIN is not set")
	}
	dir := filepath.Join(shared.dir, "manager-"+rand.String(4))
	logFile, err := os.Create(dir + ".log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := stack.Start(ctx, stack.Options{
		Dir: dir, KubeBinDir: os.Getenv("KUBE_BIN_DIR"), Helm: os.Getenv("HELM"), APIServerMemoryLimit: "300MiB",
		Chart: filepath.Join(repoRoot, "chart"), ChartSet: []string{"metacontroller.kueue=true"}, Sparkhooks: shared.binary,
		CRDs:           []string{crds},
		Metacontroller: metacontroller, MetacontrollerChart: filepath.Join(filepath.Dir(metacontroller), "helm", "metacontroller"),
		MetacontrollerValues: filepath.Join(repoRoot, "chart", "metacontroller-values.yaml"),
		Simulated:            &stack.SimulatedNode{StartDelay: time.Second, RunTime: time.Second},
		NodeName:             "manager", Logf: func(format string, args ...any) { fmt.Fprintf(logFile, format+"\n", args...) },
	})
	if err != nil {
		t.Fatalf("starting the manager cluster: %v", err)
	}
	t.Cleanup(s.Stop)
	t.Logf("the manager cluster is up in %s (%s, %s)", time.Since(begin).Round(100*time.Millisecond), s.APIAddress, s.Controller)
	dyn, err := dynamic.NewForConfig(s.Admin)
	if err != nil {
		t.Fatal(err)
	}
	m := &manager{t: t, stack: s, dir: dir, dyn: dyn, namespace: namespace}
	if err := s.AddJobNamespace(ctx, namespace, nil); err != nil {
		t.Fatal(err)
	}
	worker, err := os.ReadFile(shared.stack.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "worker-kubeconfig", "namespace": "kueue-system"},
		"stringData": map[string]any{"kubeconfig": string(worker)}})
	if err != nil {
		t.Fatal(err)
	}
	// Kueue reads the Secret in its own namespace.
	m.applyIn("kueue-system", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kueue-system\n---\n"+string(secret))
	m.apply(`apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata:
  name: worker
spec:
  clusterSource:
    kubeConfig:
      locationType: Secret
      location: worker-kubeconfig
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata:
  name: workers
spec:
  clusters: [worker]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata:
  name: multikueue
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: MultiKueueConfig
    name: workers
---
` + clusterQueue(queue, "64", "multikueue"))
	harness.StartKueueWith(t, s.Kubeconfig, shared.dir, harness.KueueOptions{
		FeatureGates: "MultiKueue=true,MultiKueueAdaptersForCustomJobs=true",
		Config: `multiKueue:
  externalFrameworks:
    - name: SparkApplication.v1beta2.sparkoperator.k8s.io
`,
	})
	// The MultiKueueCluster connects and the AdmissionCheck turns Active before anything is queued.
	for _, obj := range []string{"multikueuecluster/worker", "admissioncheck/multikueue"} {
		if out, err := kubectl.Run(ctx, s.Kubeconfig, "wait", "--for=condition=Active", "--timeout=90s", obj); err != nil {
			out2, _ := kubectl.Run(ctx, s.Kubeconfig, "get", obj, "-o", "yaml")
			t.Fatalf("%s is not Active: %v: %s\n%s", obj, err, out, out2)
		}
	}
	return m
}

// apply applies a manifest on the manager, in the test namespace where it names none.
func (m *manager) apply(manifest string) {
	m.t.Helper()
	m.applyIn(m.namespace, manifest)
}

func (m *manager) applyIn(namespace, manifest string) {
	m.t.Helper()
	path := filepath.Join(m.t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		m.t.Fatal(err)
	}
	if out, err := kubectl.Run(context.Background(), m.stack.Kubeconfig, "--namespace", namespace, "apply", "-f", path); err != nil {
		m.t.Fatalf("applying on the manager: %v: %s", err, out)
	}
}

// applyApp applies examples/spark-pi.yaml on the manager under name, in LocalQueue team and
// left to MultiKueue, with its spec changed by edit.
func (m *manager) applyApp(name string, edit func(spec map[string]any)) {
	m.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "spark-pi.yaml"))
	if err != nil {
		m.t.Fatal(err)
	}
	if data, err = forNode(data); err != nil {
		m.t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		m.t.Fatal(err)
	}
	app := &unstructured.Unstructured{Object: obj}
	app.SetName(name)
	app.SetLabels(map[string]string{"kueue.x-k8s.io/queue-name": "team"})
	spec := obj["spec"].(map[string]any)
	spec["managedBy"] = "kueue.x-k8s.io/multikueue"
	if edit != nil {
		edit(spec)
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		m.t.Fatal(err)
	}
	m.apply(string(out))
}

func (m *manager) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	m.t.Helper()
	obj, err := m.dyn.Resource(gvr).Namespace(m.namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		m.t.Fatalf("%s %s on the manager: %v", gvr.Resource, name, err)
	}
	return obj
}

// waitState waits for the manager's application to show state, calling observe between polls.
func (m *manager) waitState(name, state string, timeout time.Duration, observers ...func()) *unstructured.Unstructured {
	m.t.Helper()
	// Every 100 ms: the observers time the status copies.
	app, err := harness.WaitEvery(context.Background(), 100*time.Millisecond, timeout, "state "+state, func(ctx context.Context) (*unstructured.Unstructured, error) {
		for _, observe := range observers {
			observe()
		}
		return m.dyn.Resource(sparkApplications).Namespace(m.namespace).Get(ctx, name, metav1.GetOptions{})
	}, func(app *unstructured.Unstructured) bool { return appState(app) == state }, objectStatus)
	if err != nil {
		wl, _ := m.dyn.Resource(workloadsGVR).Namespace(m.namespace).Get(context.Background(), "sparkapplication-"+name, metav1.GetOptions{})
		m.t.Fatalf("the manager's %s: %v; its Workload: %s", name, err, workloadMessage(wl))
	}
	return app
}

func (m *manager) waitGone(gvr schema.GroupVersionResource, name string, timeout time.Duration) {
	m.t.Helper()
	if err := waitGone(timeout, func(ctx context.Context) error {
		_, err := m.dyn.Resource(gvr).Namespace(m.namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	}); err != nil {
		m.t.Fatalf("%s %s on the manager: %v", gvr.Resource, name, err)
	}
}

func (n *namespace) waitGoneOnWorker(gvr schema.GroupVersionResource, name string, timeout time.Duration) {
	n.t.Helper()
	if err := waitGone(timeout, func(context.Context) error {
		_, err := n.get(gvr, name)
		return err
	}); err != nil {
		n.t.Fatalf("%s %s on the worker: %v", gvr.Resource, name, err)
	}
}

// waitGone waits until get finds nothing.
func waitGone(timeout time.Duration, get func(context.Context) error) error {
	_, err := harness.WaitFor(context.Background(), timeout, "it gone", func(ctx context.Context) (bool, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}, func(gone bool) bool { return gone }, func(bool) string { return "it still there" })
	return err
}

// workloadMessage is a Workload's conditions in a line.
func workloadMessage(wl *unstructured.Unstructured) string {
	if wl == nil {
		return "<none>"
	}
	conditions, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	var parts []string
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok {
			parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", c["type"], c["status"], c["reason"], c["message"]))
		}
	}
	checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	for _, c := range checks {
		if c, ok := c.(map[string]any); ok {
			parts = append(parts, fmt.Sprintf("check %v %v (%v)", c["name"], c["state"], c["message"]))
		}
	}
	return strings.Join(parts, "; ")
}

// mirrorWatch measures how long the manager takes to show each state the worker's copy reaches:
// polled on both clusters, so each figure is within a poll of the real delay.
type mirrorWatch struct {
	t       *testing.T
	n       *namespace
	m       *manager
	apps    []string
	seen    map[string]time.Time // app/state → first seen on the worker
	delays  []time.Duration
	lines   []string
	running map[string]time.Time // app → its driver first seen Running on the worker
	shown   map[string]bool      // app/state → shown on the manager already
	last    map[string]string    // app → the state the manager showed last
}

func newMirrorWatch(t *testing.T, n *namespace, m *manager, apps []string) *mirrorWatch {
	return &mirrorWatch{t: t, n: n, m: m, apps: apps, seen: map[string]time.Time{}, running: map[string]time.Time{}, shown: map[string]bool{}, last: map[string]string{}}
}

func (w *mirrorWatch) observe() {
	ctx := context.Background()
	for _, name := range w.apps {
		if _, ok := w.running[name]; !ok {
			if pod, err := w.n.pod(name + "-driver"); err == nil && pod.Status.Phase == corev1.PodRunning {
				w.running[name] = time.Now()
			}
		}
		if app, err := w.n.get(sparkApplications, name); err == nil {
			if key := name + "/" + appState(app); appState(app) != "" {
				if _, ok := w.seen[key]; !ok {
					w.seen[key] = time.Now()
				}
			}
		}
		app, err := w.m.dyn.Resource(sparkApplications).Namespace(w.m.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if last := w.last[name]; (last == "COMPLETED" || last == "FAILED") && appState(app) != last {
			w.t.Errorf("the manager's %s went back from %s to %q: a stale status was written over the copy", name, last, appState(app))
		}
		w.last[name] = appState(app)
		key := name + "/" + appState(app)
		if since, ok := w.seen[key]; ok && !w.shown[key] {
			w.shown[key] = true
			d := time.Since(since)
			w.delays = append(w.delays, d)
			w.lines = append(w.lines, fmt.Sprintf("%s %s", key, d.Round(10*time.Millisecond)))
		}
	}
}

func (w *mirrorWatch) report() {
	if len(w.delays) == 0 {
		w.t.Errorf("the manager showed none of the worker's states")
		return
	}
	var total, worst time.Duration
	for _, d := range w.delays {
		total += d
		worst = max(worst, d)
	}
	w.t.Logf("status mirroring (worker state first seen → shown on the manager, 100 ms polls): %d states, mean %s, max %s: %s",
		len(w.delays), (total / time.Duration(len(w.delays))).Round(10*time.Millisecond), worst.Round(10*time.Millisecond), strings.Join(w.lines, ", "))
}

// residentMemory names this machine's processes whose command line names dir, and sums their
// resident memory in bytes (VmRSS).
func residentMemory(dir string) (procs []string, rss uint64) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			var kb uint64
			if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
				comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
				procs = append(procs, fmt.Sprintf("%s %d MiB", strings.TrimSpace(string(comm)), kb>>10))
				rss += kb << 10
			}
		}
	}
	return procs, rss
}
