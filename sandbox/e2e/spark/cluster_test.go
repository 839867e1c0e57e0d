//go:build e2e

package spark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

func kubernetesClient(cfg *restclient.Config) (kubernetes.Interface, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return client, nil
}

// namespace is one test's namespace, made one of the chart's job namespaces (helm upgrade), so
// drivers run as the chart's `spark` account with exactly the chart's Role. When the test ends its Spark resources and pods are deleted and
// waited for, so no JVM of one test competes with the next for the machine's two cores.
type namespace struct {
	t    *testing.T
	name string
	core kubernetes.Interface
	dyn  dynamic.Interface
}

func newNamespace(t *testing.T, prefix string) *namespace {
	t.Helper()
	return newNamespaceWithLabels(t, prefix, map[string]string{podSecurityEnforce: "baseline"})
}

// podSecurityEnforce is the namespace label the PodSecurity admission plugin enforces. Every
// test namespace enforces baseline, the level docs/install.md promises job namespaces can have.
const podSecurityEnforce = "pod-security.kubernetes.io/enforce"

// newNamespaceWithLabels is newNamespace for a namespace with labels (a Pod Security level, say).
func newNamespaceWithLabels(t *testing.T, prefix string, labels map[string]string) *namespace {
	t.Helper()
	return makeNamespace(t, prefix, func(ctx context.Context, name string) error {
		return shared.stack.AddJobNamespace(ctx, name, labels)
	})
}

// makeNamespace makes a test namespace with create, and tears it down when the test ends.
func makeNamespace(t *testing.T, prefix string, create func(ctx context.Context, name string) error) *namespace {
	t.Helper()
	ctx := context.Background()
	cfg := restclient.CopyConfig(shared.stack.Admin)
	cfg.QPS, cfg.Burst = -1, 0
	core, err := kubernetesClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name := prefix + "-" + rand.String(5)
	if err := create(ctx, name); err != nil {
		t.Fatal(err)
	}
	n := &namespace{t: t, name: name, core: core, dyn: dyn}
	started := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(n.dump())
		}
		if shared.stack.Kubelet != nil {
			t.Logf("%s: %s, %d containers started", t.Name(), time.Since(started).Round(100*time.Millisecond), shared.stack.Kubelet.ContainersStarted(n.name))
		} else {
			t.Logf("%s: %s", t.Name(), time.Since(started).Round(100*time.Millisecond))
		}
		n.tearDown()
	})
	return n
}

func (n *namespace) kubectl(args ...string) (string, error) {
	return kubectl.Run(context.Background(), shared.stack.Kubeconfig, append([]string{"--namespace", n.name}, args...)...)
}

// applyExample applies a file of examples/ exactly as a user would (on the real node, as a user
// with small nodes would: forNode).
func (n *namespace) applyExample(file string) {
	n.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", file))
	if err != nil {
		n.t.Fatal(err)
	}
	if out, err := n.applyManifest(data); err != nil {
		n.t.Fatalf("applying examples/%s: %v", file, err)
	} else {
		n.t.Logf("examples/%s: %s", file, strings.TrimSpace(out))
	}
}

// applyEditedExample applies a SparkApplication of examples/ with its spec changed by edit, as a
// user who copied the file would.
func (n *namespace) applyEditedExample(file string, edit func(spec map[string]any)) {
	n.t.Helper()
	n.applyEditedExampleObject(file, func(app *unstructured.Unstructured) { edit(app.Object["spec"].(map[string]any)) })
}

// applyEditedExampleObject is applyEditedExample for edits beyond the spec (name, labels).
func (n *namespace) applyEditedExampleObject(file string, edit func(app *unstructured.Unstructured)) {
	n.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", file))
	if err != nil {
		n.t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		n.t.Fatalf("examples/%s: %v", file, err)
	}
	edit(&unstructured.Unstructured{Object: obj})
	if data, err = yaml.Marshal(obj); err != nil {
		n.t.Fatal(err)
	}
	if _, err := n.applyManifest(data); err != nil {
		n.t.Fatalf("applying examples/%s changed: %v", file, err)
	}
}

// apply applies a manifest written by the test.
func (n *namespace) apply(manifest string) {
	n.t.Helper()
	if _, err := n.applyManifest([]byte(manifest)); err != nil {
		n.t.Fatal(err)
	}
}

func (n *namespace) applyManifest(manifest []byte) (string, error) {
	manifest, err := forNode(manifest)
	if err != nil {
		return "", err
	}
	path := filepath.Join(n.t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, manifest, 0o600); err != nil {
		return "", err
	}
	return n.kubectl("apply", "-f", path)
}

func (n *namespace) get(gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	return n.dyn.Resource(gvr).Namespace(n.name).Get(context.Background(), name, metav1.GetOptions{})
}

// waitFor polls the object until accept is true, and fails the test with the object's last
// status and the namespace's pods otherwise. Between polls it calls each observer, so a test can
// record what only exists while the application runs (executors, a UI).
func (n *namespace) waitFor(gvr schema.GroupVersionResource, name, want string, timeout time.Duration, accept func(*unstructured.Unstructured) bool, observers ...func()) *unstructured.Unstructured {
	n.t.Helper()
	obj, err := harness.WaitEvery(context.Background(), 250*time.Millisecond, timeout, want, func(context.Context) (*unstructured.Unstructured, error) {
		for _, observe := range observers {
			observe()
		}
		return n.get(gvr, name)
	}, accept, objectStatus)
	if err != nil {
		n.t.Fatalf("%s %s/%s: %v", gvr.Resource, n.name, name, err)
	}
	return obj
}

// objectStatus is an object's status in a line, for a wait's message.
func objectStatus(obj *unstructured.Unstructured) string {
	return "status " + fmt.Sprint(obj.Object["status"])
}

// waitAppState waits for a SparkApplication state and fails early on a terminal state that is
// not the one wanted, with the driver's log.
func (n *namespace) waitAppState(name, state string, timeout time.Duration, observers ...func()) *unstructured.Unstructured {
	n.t.Helper()
	return n.waitFor(sparkApplications, name, "state "+state, timeout, func(app *unstructured.Unstructured) bool {
		got := appState(app)
		if got != state && (got == "FAILED" || got == "COMPLETED") {
			n.t.Fatalf("SparkApplication %s/%s: want %s, ended %s: %s", n.name, name, state, got, harness.NestedString(app, "status", "applicationState", "errorMessage"))
		}
		return got == state
	}, observers...)
}

func appState(app *unstructured.Unstructured) string {
	return harness.NestedString(app, "status", "applicationState", "state")
}

func (n *namespace) pod(name string) (*corev1.Pod, error) {
	return n.core.CoreV1().Pods(n.name).Get(context.Background(), name, metav1.GetOptions{})
}

// logs returns `kubectl logs` of a pod's container (the first when container is empty).
func (n *namespace) logs(pod, container string, extra ...string) string {
	n.t.Helper()
	args := append([]string{"logs", pod}, extra...)
	if container != "" {
		args = append(args, "-c", container)
	}
	out, err := n.kubectl(args...)
	if err != nil {
		n.t.Fatalf("kubectl logs %s: %v", pod, err)
	}
	return out
}

// dump describes the namespace for a failed test: every Spark resource's status, every pod's
// phase and containers, and the end of each container's log.
func (n *namespace) dump() string {
	ctx := context.Background()
	var b strings.Builder
	fmt.Fprintf(&b, "namespace %s:\n", n.name)
	for _, gvr := range []schema.GroupVersionResource{sparkApplications, sparkConnects, sparkClusters, apacheApplications} {
		list, err := n.dyn.Resource(gvr).Namespace(n.name).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, obj := range list.Items {
			fmt.Fprintf(&b, "%s %s: status %v\n", gvr.Resource, obj.GetName(), obj.Object["status"])
		}
	}
	if events, err := n.core.CoreV1().Events(n.name).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"}); err == nil {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "event %s %s/%s: %s\n", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
		}
	}
	// What the controllers said about this namespace: a refused or failed sync leaves no trace in
	// the status, and Metacontroller backs off from it for longer each time.
	for _, c := range []struct{ namespace, selector string }{
		{stack.SparkhooksNamespace, "app.kubernetes.io/name=sparkhooks"},
		{stack.MetacontrollerNamespace, "app.kubernetes.io/name=metacontroller-helm"},
	} {
		out, err := kubectl.Run(ctx, shared.stack.Kubeconfig, "logs", "--namespace", c.namespace, "--selector", c.selector, "--tail", "-1", "--prefix")
		if err != nil {
			continue
		}
		var lines []string
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, n.name) {
				lines = append(lines, line)
			}
		}
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		for _, line := range lines {
			fmt.Fprintf(&b, "log %s\n", line)
		}
	}
	pods, err := n.core.CoreV1().Pods(n.name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return b.String() + err.Error()
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	for _, pod := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s %s ip %s\n", pod.Name, pod.Status.Phase, pod.Status.Reason, pod.Status.PodIP)
		for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "  container %s: restarts %d, state %s\n", cs.Name, cs.RestartCount, describeContainerState(cs.State))
			if cs.RestartCount > 0 {
				// The previous run's exceptions, wherever they are in its log.
				out, _ := n.kubectl("logs", pod.Name, "-c", cs.Name, "--previous")
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					if strings.Contains(line, "Exception") || strings.Contains(line, " ERROR ") || strings.HasPrefix(line, "Caused by") {
						fmt.Fprintf(&b, "    previous | %s\n", line)
					}
				}
			}
			out, _ := n.kubectl("logs", pod.Name, "-c", cs.Name, "--tail", "40")
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				fmt.Fprintf(&b, "    | %s\n", line)
			}
		}
	}
	return b.String()
}

func describeContainerState(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running since " + s.Running.StartedAt.Format(time.TimeOnly)
	case s.Terminated != nil:
		return fmt.Sprintf("terminated exit %d %s %q", s.Terminated.ExitCode, s.Terminated.Reason, s.Terminated.Message)
	case s.Waiting != nil:
		return fmt.Sprintf("waiting %s %q", s.Waiting.Reason, s.Waiting.Message)
	}
	return "unknown"
}

// tearDown deletes the namespace's Spark resources (their children go with them through the
// garbage collector) and the pods the test made itself, and waits until the kubelet has stopped
// them all.
func (n *namespace) tearDown() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, gvr := range []schema.GroupVersionResource{sparkApplications, sparkConnects, sparkClusters, apacheApplications} {
		_ = n.dyn.Resource(gvr).Namespace(n.name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := n.core.CoreV1().Pods(n.name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, pod := range pods.Items {
			// Owned pods go with their owners, through the garbage collector; deleting a
			// StatefulSet's pod would only have it made again.
			if pod.DeletionTimestamp == nil && len(pod.OwnerReferences) == 0 {
				if err := n.core.CoreV1().Pods(n.name).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return false, nil
				}
			}
		}
		return len(pods.Items) == 0, nil
	})
	if err != nil {
		var left []string
		if pods, err := n.core.CoreV1().Pods(n.name).List(context.Background(), metav1.ListOptions{}); err == nil {
			for _, pod := range pods.Items {
				left = append(left, fmt.Sprintf("%s (%s, deleting %v, owners %v)", pod.Name, pod.Status.Phase, pod.DeletionTimestamp != nil, pod.OwnerReferences))
			}
		}
		n.t.Errorf("namespace %s: pods still there after tear-down: %v: %s", n.name, err, strings.Join(left, "; "))
	}
}
