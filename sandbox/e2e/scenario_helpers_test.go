//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/mcstandin"
)

// Helpers of the scenario tests (scenarios_test.go), which drive the real hook server.

// appControllerName is the SparkApplication contract controller's name, from its registration
// in metacontroller/.
const appControllerName = "sparkhooks-sparkapplication"

// What sparkhooks puts on the objects it asks for: Spark's own labels and the Kubeflow
// operator's, which users and tools select on. The tests spell them out rather than import
// them, so that a renamed label fails here.
const (
	labelSubmissionID       = "sparkoperator.k8s.io/submission-id"
	labelAppName            = "sparkoperator.k8s.io/app-name"
	labelAppSelector        = "spark-app-selector"
	labelSparkRole          = "spark-role"
	labelScheduledAppName   = "sparkoperator.k8s.io/scheduled-app-name"
	annotationScheduledTime = "sparkoperator.k8s.io/scheduled-time"
)

// attempt is what a SparkApplication's status says about its current submission.
type attempt struct {
	submissionID       string
	appID              string // status.sparkApplicationId
	driverPod          string // status.driverInfo.podName
	submissionAttempts int64
	executionAttempts  int64
}

func attemptOf(app *unstructured.Unstructured) attempt {
	var a attempt
	a.submissionID, _, _ = unstructured.NestedString(app.Object, "status", "submissionID")
	a.appID, _, _ = unstructured.NestedString(app.Object, "status", "sparkApplicationId")
	a.driverPod, _, _ = unstructured.NestedString(app.Object, "status", "driverInfo", "podName")
	a.submissionAttempts, _, _ = unstructured.NestedInt64(app.Object, "status", "submissionAttempts")
	a.executionAttempts, _, _ = unstructured.NestedInt64(app.Object, "status", "executionAttempts")
	return a
}

func observedCurrent(app *unstructured.Unstructured) bool {
	observed, _, _ := unstructured.NestedInt64(app.Object, "status", "observedGeneration")
	return observed == app.GetGeneration()
}

// waitSubmitted waits for the application to be SUBMITTED, for its current generation, with a
// submission other than previous ("" for the first), and returns that attempt.
func (w *world) waitSubmitted(name, previous string) (attempt, error) {
	var got attempt
	want := "state SUBMITTED with a submissionID, sparkApplicationId and driverInfo.podName"
	if previous != "" {
		want += fmt.Sprintf(" for a new submission (not %s)", previous)
	}
	err := w.waitApp(name, want, func(app *unstructured.Unstructured) bool {
		a := attemptOf(app)
		if appState(app) != "SUBMITTED" || !observedCurrent(app) || a.submissionID == "" || a.submissionID == previous ||
			a.appID == "" || a.driverPod == "" {
			return false
		}
		got = a
		return true
	})
	return got, err
}

// appSummary is the application's status, its events and the controllers' errors, for the
// failure messages of waits that are not about the application itself.
func (w *world) appSummary(name string) string {
	app, err := w.app(name)
	if err != nil {
		return fmt.Sprintf("SparkApplication %s: %v%s", name, err, w.controllerDiagnosis(name))
	}
	return "SparkApplication " + name + ": " + describeApp(app) + w.events(name) + w.controllerDiagnosis(name)
}

// waitDriver waits until the driver Pod of attempt a exists for that submission, is not being
// deleted and the scheduler has bound it to the fake node, and returns it.
func (w *world) waitDriver(appName string, a attempt) (*corev1.Pod, error) {
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		pod, err := w.pod(a.driverPod)
		if err != nil {
			pod = nil
		}
		last = pod
		return pod != nil && pod.Labels[labelSubmissionID] == a.submissionID && pod.DeletionTimestamp == nil && pod.Spec.NodeName == harness.NodeName, nil
	})
	if err == nil {
		return last, nil
	}
	seen := "no such pod"
	if last != nil {
		seen = fmt.Sprintf("submission %q, phase %s, node %q, deleting %v", last.Labels[labelSubmissionID], last.Status.Phase,
			last.Spec.NodeName, last.DeletionTimestamp != nil)
	}
	return nil, fmt.Errorf("driver Pod %s/%s: want it created for submission %s and bound to node %s within %s; saw %s%s\n  %s",
		w.ns, a.driverPod, a.submissionID, harness.NodeName, waitTimeout, seen, w.events(a.driverPod), w.appSummary(appName))
}

// runAttempt takes the application's next attempt to RUNNING: it waits for the submission that
// follows previous and for its driver Pod, has the kubelet start the Pod, and waits for RUNNING.
func (w *world) runAttempt(t *testing.T, name, previous string) (attempt, *corev1.Pod) {
	t.Helper()
	a, err := w.waitSubmitted(name, previous)
	w.check(t, err)
	pod, err := w.waitDriver(name, a)
	require.NoError(t, err)
	require.NoError(t, w.kubelet.Start(context.Background(), pod.Name))
	w.check(t, w.waitState(name, "RUNNING"))
	app, err := w.app(name)
	require.NoError(t, err)
	require.Equal(t, a.submissionID, attemptOf(app).submissionID,
		"RUNNING is the state of the submission whose driver started; %s", describeApp(app))
	return a, pod
}

// checkAttemptChildren checks the objects of a running attempt: the driver Pod is the
// application's and the submission's, exactly one ConfigMap (the one the driver mounts, with
// the attempt's Spark properties) and the headless driver Service (selecting that driver) exist,
// and so does the UI Service the status names.
func (w *world) checkAttemptChildren(t *testing.T, name string, a attempt, pod *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	app, err := w.app(name)
	require.NoError(t, err)
	summary := describeApp(app)

	ref := metav1.GetControllerOf(pod)
	require.NotNil(t, ref, "driver Pod %s has a controller owner reference; %s", pod.Name, summary)
	require.Equal(t, app.GetUID(), ref.UID, "driver Pod %s is controlled by the SparkApplication; %s", pod.Name, summary)
	require.Equal(t, "driver", pod.Labels[labelSparkRole], "label %s of the driver Pod", labelSparkRole)
	require.Equal(t, a.appID, pod.Labels[labelAppSelector], "label %s of the driver Pod is status.sparkApplicationId", labelAppSelector)
	require.Equal(t, name, pod.Labels[labelAppName], "label %s of the driver Pod", labelAppName)

	// The attempt's ConfigMap (spark.properties) carries its submission id; an application may
	// own others (the Prometheus configuration, say).
	cms, err := w.core.CoreV1().ConfigMaps(w.ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var owned []string
	var attemptCMs []corev1.ConfigMap
	for _, cm := range cms.Items {
		if ref := metav1.GetControllerOf(&cm); ref != nil && ref.UID == app.GetUID() {
			owned = append(owned, cm.Name)
			if cm.Labels[labelSubmissionID] == a.submissionID {
				attemptCMs = append(attemptCMs, cm)
			}
		}
	}
	require.Equal(t, 1, len(attemptCMs), "one ConfigMap labelled with the attempt's submission id %s, owned by the SparkApplication; it owns %v; %s",
		a.submissionID, owned, summary)
	cm := attemptCMs[0]
	mounted := false
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			mounted = true
		}
	}
	require.True(t, mounted, "the driver Pod mounts ConfigMap %s; its volumes: %v", cm.Name, volumeNames(pod))
	props := cm.Data["spark.properties"]
	require.Contains(t, props, "spark.app.id="+a.appID+"\n", "ConfigMap %s carries the attempt's Spark application id", cm.Name)

	// The driver Service is <name>-<attempt id>-driver-svc, the attempt id the first 8 hex
	// digits of its Spark application id (every name in these tests is short enough).
	svcName := name + "-" + strings.TrimPrefix(a.appID, "spark-")[:8] + "-driver-svc"
	svc, err := w.core.CoreV1().Services(w.ns).Get(ctx, svcName, metav1.GetOptions{})
	require.NoError(t, err, "the driver Service %s; %s", svcName, summary)
	ref = metav1.GetControllerOf(svc)
	require.True(t, ref != nil && ref.UID == app.GetUID(), "Service %s is controlled by the SparkApplication", svcName)
	require.Equal(t, corev1.ClusterIPNone, svc.Spec.ClusterIP, "the driver Service is headless")
	require.NotEmpty(t, svc.Spec.Selector, "the driver Service selects the driver")
	require.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)),
		"the driver Service's selector %v matches the driver Pod's labels %v", svc.Spec.Selector, pod.Labels)
	require.Contains(t, props, "spark.driver.host="+svcName+"."+w.ns+".svc\n",
		"executors reach the driver through its Service (ConfigMap %s)", cm.Name)

	if ui, _, _ := unstructured.NestedString(app.Object, "status", "driverInfo", "webUIServiceName"); ui != "" {
		_, err := w.core.CoreV1().Services(w.ns).Get(ctx, ui, metav1.GetOptions{})
		require.NoError(t, err, "the UI Service status.driverInfo.webUIServiceName names; %s", summary)
	}
}

func volumeNames(pod *corev1.Pod) []string {
	var names []string
	for _, v := range pod.Spec.Volumes {
		names = append(names, v.Name)
	}
	return names
}

// settleWindow is how long a finished application's status must stay put.
const settleWindow = 2 * time.Second

// checkStatusSettled checks that a sync with nothing new to say writes no status: it touches the
// application with an annotation (no spec change, so no new generation), which brings a sync,
// and expects no status write and no change of resourceVersion for settleWindow. That the sync
// came is checked under the stand-in, which counts them; Metacontroller syncs on the watch event
// of the annotation.
func (w *world) checkStatusSettled(t *testing.T, name string) {
	t.Helper()
	ctl := w.standIn(appControllerName)
	var before mcstandin.ParentStats
	if ctl != nil {
		before = ctl.Stats(w.ns, name)
	}
	writesBefore := w.writes.statusWrites(t, sparkApplications, name)
	staleBefore := w.staleWriteCount(name)
	out, err := w.kubectl("annotate", "--overwrite", "sparkapplications.sparkoperator.k8s.io", name, "e2e.sparkhooks.io/touched="+time.Now().Format(time.RFC3339Nano))
	require.NoError(t, err, out)
	touched, err := w.app(name)
	require.NoError(t, err)

	deadline := time.Now().Add(settleWindow)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		now, err := w.app(name)
		require.NoError(t, err)
		if now.GetResourceVersion() != touched.GetResourceVersion() {
			// The controller records a stale write once the write has returned.
			_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Second, true, func(context.Context) (bool, error) {
				return w.staleParent(name, staleBefore, false) != nil, nil
			})
			w.check(t, w.staleParent(name, staleBefore, false))
			t.Fatalf("SparkApplication %s/%s: want its status left alone by a sync with nothing new (resourceVersion %s for %s after an annotation); it changed to %s: %s\n  before: %s\n  after:  %s%s",
				w.ns, name, touched.GetResourceVersion(), settleWindow, now.GetResourceVersion(),
				changedFields(touched, now), describeApp(touched), describeApp(now), w.statusHistory(name, appState(touched)))
		}
	}
	if ctl != nil {
		require.Greater(t, ctl.Stats(w.ns, name).Syncs, before.Syncs, "the annotation brought a sync of %s", name)
	}
	if written := w.writes.statusWrites(t, sparkApplications, name) - writesBefore; written != 0 {
		w.check(t, w.staleParent(name, staleBefore, false))
		t.Fatalf("SparkApplication %s/%s: want no status write from syncs with nothing new once %s; %d were written\n  now: %s%s",
			w.ns, name, appState(touched), written, w.appSummary(name), w.statusHistory(name, appState(touched)))
	}
}

// checkChildrenWrittenOnce checks that no child of the application was rewritten after its
// creation, and under the stand-in that none would have been under another update strategy: the
// hook answers each child byte for byte as at its creation. It logs the API writes the
// application cost.
func (w *world) checkChildrenWrittenOnce(t *testing.T, name string) {
	t.Helper()
	w.checkChildrenUnchanged(t, appControllerName, sparkApplications, "SparkApplication", name)
}

// checkChildrenUnchanged is checkChildrenWrittenOnce for the parent name of any registration.
func (w *world) checkChildrenUnchanged(t *testing.T, registration string, parents schema.GroupVersionResource, kind, name string) {
	t.Helper()
	created, updated := w.writes.children(t, kind, name)
	t.Logf("%s: %d status writes, children: %d created, %d updated %v", name, w.writes.statusWrites(t, parents, name), created, len(updated), updated)
	require.Empty(t, updated, "children of %s rewritten after creation", name)
	require.Positive(t, created)
	if ctl := w.standIn(registration); ctl != nil {
		stats := ctl.Stats(w.ns, name)
		t.Logf("%s, as the stand-in counts: %d syncs, %d drifted, %d deleted", name, stats.Syncs, stats.Children.Drifts, stats.Children.Deletes)
		require.Zero(t, stats.Children.Drifts, "children of %s answered differently from their creation: %v", name, stats.Children.Changed)
	}
}

// checkStatusWritesPerState checks that the application's status was written once per state
// it went through, and no more: conditions and driver details that change within a state ride
// along with the state's own write.
func (w *world) checkStatusWritesPerState(t *testing.T, name string, states ...string) {
	t.Helper()
	w.requireStates(t, name, strings.Join(states, " "))
	writes := w.writes.statusWrites(t, sparkApplications, name)
	require.Equal(t, len(states), writes, "status writes of %s: one per state %v%s", name, states, w.statusHistory(name, states[0]))
}

// changedFields describes the top-level status fields that differ between two versions, with
// their values before and after.
func changedFields(a, b *unstructured.Unstructured) string {
	sa, _, _ := unstructured.NestedMap(a.Object, "status")
	sb, _, _ := unstructured.NestedMap(b.Object, "status")
	keys := map[string]bool{}
	for k := range sa {
		keys[k] = true
	}
	for k := range sb {
		keys[k] = true
	}
	var changed []string
	for k := range keys {
		if !equality.Semantic.DeepEqual(sa[k], sb[k]) {
			changed = append(changed, fmt.Sprintf("%s %s -> %s", k, mcstandin.CompactJSON(sa[k]), mcstandin.CompactJSON(sb[k])))
		}
	}
	sort.Strings(changed)
	if len(changed) == 0 {
		return "none (metadata only)"
	}
	return strings.Join(changed, "; ")
}

// stateLog records every applicationState.state a SparkApplication passes through, from a
// watch, so that a state held for less than a poll interval is still seen.
type stateLog struct {
	mu      sync.Mutex
	entries []stateEntry // consecutive duplicates and "" left out
	msgs    map[string]string
	// statuses are the distinct statuses seen, in order, for failure messages.
	statuses []*unstructured.Unstructured
}

type stateEntry struct {
	state, submissionID string
	driverMissing       bool // the DriverMissing condition is set
}

func (l *stateLog) add(app *unstructured.Unstructured) {
	e := stateEntry{state: appState(app), submissionID: attemptOf(app).submissionID, driverMissing: conditionStatus(app, "DriverMissing") == "True"}
	if e.state == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.statuses); n == 0 || !equality.Semantic.DeepEqual(l.statuses[n-1].Object["status"], app.Object["status"]) {
		l.statuses = append(l.statuses, app.DeepCopy())
	}
	if n := len(l.entries); n == 0 || l.entries[n-1] != e {
		l.entries = append(l.entries, e)
	}
	if msg, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage"); msg != "" {
		l.msgs[e.state] = msg
	}
}

// String is the states seen, in order, separated by spaces.
func (l *stateLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var states []string
	for _, e := range l.entries {
		if n := len(states); n == 0 || states[n-1] != e.state {
			states = append(states, e.state)
		}
	}
	return strings.Join(states, " ")
}

// changesSince describes the status changes the watch saw after the first status in state.
func (l *stateLog) changesSince(state string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	from := -1
	for i, app := range l.statuses {
		if from < 0 && appState(app) == state {
			from = i
			continue
		}
		if from >= 0 {
			fmt.Fprintf(&b, "\n    resourceVersion %s: %s", app.GetResourceVersion(), changedFields(l.statuses[i-1], app))
		}
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}

// statusHistory is what the watch saw of the status once it was in state, for failure messages.
func (w *world) statusHistory(name, state string) string {
	log := w.stateLogs[name]
	if log == nil {
		return ""
	}
	// Give the watch a moment to catch up with the last change.
	time.Sleep(200 * time.Millisecond)
	return fmt.Sprintf("\n  states watched: %s\n  status changes watched since %s:%s", log.entriesString(), state, log.changesSince(state))
}

func (l *stateLog) entriesString() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.entriesLocked()
}

// first is the first version of the application seen in state, nil when there is none yet.
func (l *stateLog) first(state string) *unstructured.Unstructured {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, app := range l.statuses {
		if appState(app) == state {
			return app
		}
	}
	return nil
}

// firstStatus is the application as its status was first written in state, from the watch:
// what the hook decided on reaching the state, whatever later syncs made of it.
func (w *world) firstStatus(t *testing.T, name, state string) *unstructured.Unstructured {
	t.Helper()
	log := w.stateLogs[name]
	require.NotNil(t, log, "watchStates(%s) was not called", name)
	var app *unstructured.Unstructured
	_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 2*time.Second, true, func(context.Context) (bool, error) {
		app = log.first(state)
		return app != nil, nil
	})
	require.NotNil(t, app, "the watch saw %s in state %s; states %s", name, state, log)
	return app
}

// message is the last errorMessage seen with state.
func (l *stateLog) message(state string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msgs[state]
}

// A stale parent: Metacontroller syncs from its informer cache and writes the hook's status
// over a fresh read of the parent (AtomicStatusUpdate), so a sync that starts before the
// previous sync's status write reached the cache answers from an older status, and that answer
// wins. It happens right after a sync that deletes children and writes a new status: the
// deletions' events start the next sync at once. The hooks must answer such a sync so that the
// outcome does not change (the sync that ends an attempt keeps its children for one more sync);
// the checks below fail with the contract controller's record of the stale writes when it did.
func (l *stateLog) entriesLocked() string {
	var parts []string
	for _, e := range l.entries {
		p := e.state
		if e.driverMissing {
			p += "+DriverMissing"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

var errStaleParent = errors.New("a status computed from a stale parent replaced a newer one")

// staleParent reports, as an error wrapping errStaleParent, the status writes for the
// application that the contract controller computed from a stale parent over a newer status
// (see above), from the skip-th on; with backward, only those that took a
// submission back to an earlier state (finished or failing RUNNING again, RUNNING back to
// SUBMITTED). It is nil when there are none.
func (w *world) staleParent(name string, skip int, backward bool) error {
	var found []string
	for _, ctl := range w.controllers {
		writes := ctl.Stats(w.ns, name).StaleWrites
		for i := skip; i < len(writes); i++ {
			if !backward || wentBack(writes[i].Over, writes[i].Written) {
				found = append(found, writes[i].Description)
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	if len(found) > 4 {
		found = append(found[:4], fmt.Sprintf("and %d more", len(found)-4))
	}
	states := ""
	if log := w.stateLogs[name]; log != nil {
		states = "\n  states watched: " + log.entriesString()
	}
	return fmt.Errorf("%w:\n  %s%s", errStaleParent, strings.Join(found, "\n  "), states)
}

// wentBack reports a status that took the same submission back to an earlier state.
func wentBack(over, written map[string]any) bool {
	subOver, _, _ := unstructured.NestedString(over, "submissionID")
	subWritten, _, _ := unstructured.NestedString(written, "submissionID")
	return subOver == subWritten && stateRank(written) < stateRank(over)
}

// stateRank orders the states of one attempt: submitted, running, then ended (finished,
// failing, waiting for a rerun, given up for a new spec).
func stateRank(status map[string]any) int {
	state, _, _ := unstructured.NestedString(status, "applicationState", "state")
	switch state {
	case "":
		return 0
	case "SUBMITTED":
		return 1
	case "RUNNING", "UNKNOWN":
		return 2
	}
	return 3
}

func (w *world) staleWriteCount(name string) int {
	n := 0
	for _, ctl := range w.controllers {
		n += len(ctl.Stats(w.ns, name).StaleWrites)
	}
	return n
}

// check fails the test on err, saying so when a status computed from a stale parent changed
// the outcome.
func (w *world) check(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, errStaleParent) {
		t.Fatalf("a sync that read a stale parent changed the outcome:\n%v", err)
	}
	require.NoError(t, err)
}

// watchStates starts recording the states of the SparkApplication name; start it before the
// application is created.
// It stops when the test ends.
func (w *world) watchStates(t *testing.T, name string) *stateLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	watcher, err := w.dyn.Resource(sparkApplications).Namespace(w.ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	log := &stateLog{msgs: map[string]string{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range watcher.ResultChan() {
			if app, ok := ev.Object.(*unstructured.Unstructured); ok {
				log.add(app)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		watcher.Stop()
		<-done
	})
	w.stateLogs[name] = log
	return log
}

// requireStates checks the states seen against pattern, a regular expression over the
// space-separated states, with the whole sequence anchored.
func (w *world) requireStates(t *testing.T, name, pattern string) {
	t.Helper()
	log := w.stateLogs[name]
	require.NotNil(t, log, "watchStates(%s) was not called", name)
	// The watch may lag the poll that ended the last wait by a moment.
	re := regexp.MustCompile("^" + pattern + "$")
	_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 2*time.Second, true, func(context.Context) (bool, error) {
		return re.MatchString(log.String()), nil
	})
	if !re.MatchString(log.String()) {
		w.check(t, w.staleParent(name, 0, true))
	}
	require.Regexp(t, re, log.String(), "the application's states in order, as watched; %s", w.appSummary(name))
}

// requirePod waits until pred accepts the pod (nil when it does not exist) and otherwise fails
// the test with the application's status.
func (w *world) requirePod(t *testing.T, appName, pod, want string, pred func(*corev1.Pod) bool) {
	t.Helper()
	if err := w.waitPod(pod, want, pred); err != nil {
		t.Fatalf("%v\n  %s", err, w.appSummary(appName))
	}
}

// waitPodsGone waits until no Pod in the world's namespace matches selector.
func (w *world) waitPodsGone(appName string, selector labels.Selector) error {
	var left []string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := w.core.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			return false, nil
		}
		left = left[:0]
		for _, p := range pods.Items {
			left = append(left, fmt.Sprintf("%s (%s, deleting %v)", p.Name, p.Status.Phase, p.DeletionTimestamp != nil))
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("pods %s in %s: want none within %s; saw %v\n  %s", selector, w.ns, waitTimeout, left, w.appSummary(appName))
	}
	return nil
}
