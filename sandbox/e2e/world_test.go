//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/mcstandin"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// The CompositeController registrations the contract controllers load, from metacontroller/.
const (
	appController       = "sparkapplication-controller.yaml"
	scheduledController = "scheduledsparkapplication-controller.yaml"
)

// waitTimeout bounds every wait for a state; the hooks answer in microseconds and the contract
// controller retries within 2s, so anything slower is a failure, not a slow machine.
const waitTimeout = 45 * time.Second

// metacontrollerSettle is how long a test waits for Metacontroller's syncs where the stand-in
// would let it count them: Metacontroller syncs on the watch event of a change, within
// milliseconds here, and again after the hook's resyncAfterSeconds.
const metacontrollerSettle = 3 * time.Second

// hooksURL is the chart's hook server: its Service, which shared.hookClient reaches.
const hooksURL = stack.HookBaseURL

// world is one test's slice of the cluster: its own namespace, a fake kubelet for it, and the
// contract controllers limited to it, all stopped when the test ends.
type world struct {
	t       *testing.T
	ns      string
	dyn     dynamic.Interface
	core    kubernetes.Interface
	kubelet *harness.Kubelet
	// controllers are the stand-in's, one per registration; none under Metacontroller.
	controllers map[string]*mcstandin.Controller
	// writes counts what reached the namespace's objects, under either controller.
	writes *apiWrites
	// stateLogs are the applications whose states the test watches (watchStates).
	stateLogs map[string]*stateLog
	// childErrorsExpected: the test makes the API server refuse a child (a driver Pod admission
	// refuses), so repeated sync failures are its subject, not a reason to stop waiting.
	childErrorsExpected bool
}

// newWorld starts a namespace with a kubelet and one contract controller per registration file
// (in metacontroller/, or an absolute path), with the hook URLs pointed at hookURL. Under
// Metacontroller the chart's registrations run it already, for every namespace: a test that needs
// another registration or hook is skipped, as Metacontroller would run it for every namespace and
// beside the chart's own.
func newWorld(t *testing.T, hookURL string, registrations ...string) *world {
	t.Helper()
	return newWorldIn(t, func(core kubernetes.Interface) string { return createTeamNamespace(t, core, "e2e") }, hookURL, registrations...)
}

// newJobWorld is newWorld in a job namespace of the chart's (spark.jobNamespaces): its
// ServiceAccount, Roles and webhooks are the chart's.
func newJobWorld(t *testing.T, hookURL string, registrations ...string) *world {
	t.Helper()
	return newWorldIn(t, func(kubernetes.Interface) string {
		name := "e2e-job-" + rand.String(5)
		require.NoError(t, shared.stack.AddJobNamespace(context.Background(), name, nil))
		return name
	}, hookURL, registrations...)
}

// newWorldIn is newWorld in the namespace namespace makes.
func newWorldIn(t *testing.T, namespace func(kubernetes.Interface) string, hookURL string, registrations ...string) *world {
	t.Helper()
	if shared.metacontroller && len(registrations) > 0 {
		if hookURL != hooksURL {
			skipUnderMetacontroller(t, "the test calls a hook of its own ("+hookURL+"), not the chart's")
		}
		for _, file := range registrations {
			if filepath.IsAbs(file) {
				skipUnderMetacontroller(t, "the test runs a registration of its own ("+filepath.Base(file)+"), not the chart's")
			}
		}
		registrations = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		running.Wait()
	})

	cfg := shared.stack.Admin
	// The test acts as a user's kubectl, with kubectl's client limits (50 a second, bursts of
	// 300), not client-go's 5 a second, which paced tests that create or delete many objects.
	user := restclient.CopyConfig(cfg)
	user.QPS, user.Burst = 50, 300
	w := &world{t: t, controllers: map[string]*mcstandin.Controller{}, stateLogs: map[string]*stateLog{}}
	var err error
	w.dyn, err = dynamic.NewForConfig(user)
	require.NoError(t, err)
	w.core, err = kubernetes.NewForConfig(user)
	require.NoError(t, err)
	w.ns = namespace(w.core)
	w.watchWrites(ctx)

	w.kubelet, err = harness.NewKubelet(cfg, w.ns)
	require.NoError(t, err)
	running.Add(1)
	go func() {
		defer running.Done()
		_ = w.kubelet.Run(ctx)
	}()

	for _, file := range registrations {
		path := file
		if !filepath.IsAbs(path) {
			path = filepath.Join(repoRoot, "metacontroller", file)
		}
		cc, err := mcstandin.LoadCompositeController(path, hookURL)
		require.NoError(t, err)
		ctl, err := mcstandin.New(cfg, cc, mcstandin.Options{Namespace: w.ns, Logf: t.Logf, HTTPClient: shared.hookClient})
		require.NoError(t, err, "the contract controller refuses the registration %s", file)
		w.controllers[cc.Metadata.Name] = ctl
		running.Add(1)
		go func() {
			defer running.Done()
			if err := ctl.Run(ctx); err != nil {
				t.Errorf("contract controller %s: %v", cc.Metadata.Name, err)
			}
		}()
	}
	return w
}

// skipUnderMetacontroller skips a test that needs a stand-in controller of its own, before it
// sets anything up.
func skipUnderMetacontroller(t *testing.T, why string) {
	t.Helper()
	if shared.metacontroller {
		t.Skip("under Metacontroller: " + why)
	}
}

// sparkServiceAccount is the account the examples' drivers name (spec.driver.serviceAccount) and
// the chart's hook server gives the drivers that name none (--default-service-account).
const sparkServiceAccount = "spark"

// createNamespace creates a namespace with a random suffix and returns its name.
func createNamespace(t *testing.T, client kubernetes.Interface, prefix string) string {
	t.Helper()
	return createLabelledNamespace(t, client, prefix, nil)
}

// createLabelledNamespace creates a namespace with labels and a random suffix and returns its name.
func createLabelledNamespace(t *testing.T, client kubernetes.Interface, prefix string, labels map[string]string) string {
	t.Helper()
	name := prefix + "-" + rand.String(5)
	_, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	require.NoError(t, err, "creating namespace %s", name)
	return name
}

// createTeamNamespace creates a namespace for workloads as an administrator onboards a team
// outside the chart's spark.jobNamespaces: it gets the spark ServiceAccount the chart would have
// given it (the ServiceAccount admission plugin refuses a Pod that names an account that does not
// exist), and is not under the chart's validating webhook, so that whatever the CRD schema admits
// reaches the hooks. It returns once the service-account controller has made the namespace's
// default account, which admission needs for Pods that name none.
func createTeamNamespace(t *testing.T, client kubernetes.Interface, prefix string) string {
	t.Helper()
	return createLabelledTeamNamespace(t, client, prefix, nil)
}

// createLabelledTeamNamespace is createTeamNamespace with labels on the namespace from its creation.
func createLabelledTeamNamespace(t *testing.T, client kubernetes.Interface, prefix string, labels map[string]string) string {
	t.Helper()
	ctx := context.Background()
	name := createLabelledNamespace(t, client, prefix, labels)
	_, err := client.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sparkServiceAccount}}, metav1.CreateOptions{})
	require.NoError(t, err, "creating the ServiceAccount %s/%s", name, sparkServiceAccount)
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}), "the default ServiceAccount of namespace %s", name)
	return name
}

// kubectl runs kubectl in the world's namespace.
func (w *world) kubectl(args ...string) (string, error) {
	return adminKubectl(append([]string{"--namespace", w.ns}, args...)...)
}

// adminKubectl runs kubectl as the cluster's administrator.
func adminKubectl(args ...string) (string, error) {
	return kubectl.Run(context.Background(), shared.stack.Kubeconfig, args...)
}

// apply writes manifest to a file and applies it with kubectl.
func (w *world) apply(manifest string) (string, error) {
	path := filepath.Join(w.t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		return "", err
	}
	return w.kubectl("apply", "-f", path)
}

func (w *world) app(name string) (*unstructured.Unstructured, error) {
	return w.dyn.Resource(sparkApplications).Namespace(w.ns).Get(context.Background(), name, metav1.GetOptions{})
}

func (w *world) pod(name string) (*corev1.Pod, error) {
	return w.core.CoreV1().Pods(w.ns).Get(context.Background(), name, metav1.GetOptions{})
}

// appState returns status.applicationState.state.
func appState(app *unstructured.Unstructured) string {
	state, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state")
	return state
}

// waitApp waits until pred accepts the SparkApplication. Its error says what was expected, what
// the application looked like last, and what the contract controllers last failed at, so a
// broken hook reads as the reason, not as a timeout. A sync that keeps failing the same way ends
// the wait early.
func (w *world) waitApp(name, want string, pred func(*unstructured.Unstructured) bool) error {
	var last *unstructured.Unstructured
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		last, lastErr = w.app(name)
		if lastErr == nil && pred(last) {
			return true, nil
		}
		if !w.childErrorsExpected && w.stuck(name) {
			return false, errStuck
		}
		return false, nil
	})
	if err == nil {
		return nil
	}
	var seen string
	switch {
	case lastErr != nil:
		seen = lastErr.Error()
	default:
		seen = describeApp(last)
	}
	if stale := w.staleParent(name, 0, true); stale != nil {
		// What was waited for may never come after that: report the bug, not the wait.
		return fmt.Errorf("SparkApplication %s/%s: want %s within %s; saw %s\n  %w", w.ns, name, want, waitTimeout, seen, stale)
	}
	limit := "within " + waitTimeout.String()
	if errors.Is(err, errStuck) {
		limit = "but its sync keeps failing"
	}
	return fmt.Errorf("SparkApplication %s/%s: want %s %s; saw %s%s%s", w.ns, name, want, limit, seen, w.events(name), w.controllerDiagnosis(name))
}

// describeApp summarises a SparkApplication's status for failure messages: the state and its
// message, the attempt, the driver, the conditions and the executors.
func describeApp(app *unstructured.Unstructured) string {
	var b strings.Builder
	msg, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage")
	fmt.Fprintf(&b, "state %q", appState(app))
	if msg != "" {
		fmt.Fprintf(&b, " (%s)", msg)
	}
	fmt.Fprintf(&b, ", generation %d, status.observedGeneration %v", app.GetGeneration(), nestedValue(app, "status", "observedGeneration"))
	for _, f := range [][]string{
		{"submissionID"}, {"sparkApplicationId"}, {"submissionAttempts"}, {"executionAttempts"},
		{"driverInfo", "podName"}, {"terminationTime"}, {"executorState"},
	} {
		if v := nestedValue(app, append([]string{"status"}, f...)...); v != "<none>" {
			fmt.Fprintf(&b, ", %s %v", strings.Join(f, "."), v)
		}
	}
	if app.GetDeletionTimestamp() != nil {
		fmt.Fprintf(&b, ", being deleted (finalizers %v)", app.GetFinalizers())
	}
	conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok {
			fmt.Fprintf(&b, "\n    condition %v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"])
		}
	}
	return b.String()
}

// events lists the events recorded on the object name in the world's namespace, for failure
// messages. sparkhooks records none itself (its hooks do not call the API); the contract
// controller records SyncError events as Metacontroller does, the scheduler why it cannot place
// a Pod.
func (w *world) events(name string) string {
	list, err := w.core.CoreV1().Events(w.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return "\n  events: " + err.Error()
	}
	if len(list.Items) == 0 {
		return "\n  events: none"
	}
	var b strings.Builder
	for _, e := range list.Items {
		fmt.Fprintf(&b, "\n  event %s %s: %s", e.Type, e.Reason, e.Message)
	}
	return b.String()
}

// stuckAfter is how many identical sync failures in a row make a wait give up: with back-off
// that is a couple of seconds of the same answer.
const stuckAfter = 8

var errStuck = errors.New("sync keeps failing")

func (w *world) stuck(name string) bool {
	for _, ctl := range w.controllers {
		if ctl.Stats(w.ns, name).ConsecutiveErrors >= stuckAfter {
			return true
		}
	}
	return false
}

// waitState waits for an application state with a status written for the current generation.
func (w *world) waitState(name, state string) error {
	return w.waitApp(name, "state "+state, func(app *unstructured.Unstructured) bool {
		observed, _, _ := unstructured.NestedInt64(app.Object, "status", "observedGeneration")
		return appState(app) == state && observed == app.GetGeneration()
	})
}

// standIn is the stand-in controller of the registration named name, whose counts go beyond what
// the API server sees (syncs, answers that would have changed a child, stale reads); nil under
// Metacontroller.
func (w *world) standIn(name string) *mcstandin.Controller {
	return w.controllers[name]
}

func (w *world) controllerDiagnosis(name string) string {
	var b strings.Builder
	for ccName, ctl := range w.controllers {
		stats := ctl.Stats(w.ns, name)
		if stats.Errors == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  contract controller %s: %d of %d syncs failed; last error: %s", ccName, stats.Errors, stats.Syncs, stats.LastError)
	}
	return b.String()
}

// waitPod waits until pred accepts the pod (nil when it does not exist).
func (w *world) waitPod(name, want string, pred func(*corev1.Pod) bool) error {
	// A pod that does not exist is nil to pred, which may be waiting for exactly that.
	get := func(context.Context) (*corev1.Pod, error) {
		pod, err := w.pod(name)
		if err != nil {
			return nil, nil
		}
		return pod, nil
	}
	describe := func(pod *corev1.Pod) string {
		if pod == nil {
			return "no such pod"
		}
		return fmt.Sprintf("phase %s, deleting %v", pod.Status.Phase, pod.DeletionTimestamp != nil)
	}
	_, err := harness.WaitFor(context.Background(), waitTimeout, want, get, pred, describe)
	if err != nil {
		return fmt.Errorf("pod %s/%s: %w", w.ns, name, err)
	}
	return nil
}

func podGone(pod *corev1.Pod) bool { return pod == nil }

func nestedValue(obj *unstructured.Unstructured, path ...string) any {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !found {
		return "<none>"
	}
	return v
}
