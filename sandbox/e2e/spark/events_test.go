//go:build e2e

package spark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestEventsTellTheStory reads what a user reads, with kubectl: the Events sparkhooks records for
// a SparkPi that completes, one whose main class does not exist, and one whose driver no node can
// hold; `kubectl wait` on the Complete and Failed conditions; and `kubectl describe`.
func TestEventsTellTheStory(t *testing.T) {
	n := newNamespace(t, "events")

	t.Run("completed", func(t *testing.T) {
		n.applyExample("spark-pi-spark4.yaml")
		n.kubectlWait(t, "sparkapplications.sparkoperator.k8s.io/spark-pi-spark4", "condition=Complete", appTimeout+time.Minute)
		n.requireEvents(t, "spark-pi-spark4", []wantEvent{
			{corev1.EventTypeNormal, "SparkApplicationSubmitted", ""},
			{corev1.EventTypeNormal, "SparkDriverRunning", ""},
			{corev1.EventTypeNormal, "SparkApplicationCompleted", ""},
		})
		n.requireNoWarnings(t, "spark-pi-spark4")
		describe, err := n.kubectl("describe", "sparkapplications.sparkoperator.k8s.io", "spark-pi-spark4")
		if err != nil {
			t.Fatalf("kubectl describe: %v: %s", err, describe)
		}
		events := describe[strings.LastIndex(describe, "Events:"):]
		for _, reason := range []string{"SparkApplicationSubmitted", "SparkApplicationCompleted"} {
			if !strings.Contains(events, reason) {
				t.Errorf("kubectl describe does not show the Event %s:\n%s", reason, events)
			}
		}
		app, err := n.get(sparkApplications, "spark-pi-spark4")
		if err != nil {
			t.Fatal(err)
		}
		if status := conditionStatus(app.Object, "ExecutorsReady"); status == "True" {
			t.Errorf("ExecutorsReady is still True after the application completed")
		}
	})

	t.Run("failed", func(t *testing.T) {
		n.apply(fmt.Sprintf(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: no-such-class
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: %s
  mainClass: org.apache.spark.examples.NoSuchClass
  mainApplicationFile: %s
  restartPolicy: {type: Never}
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
  executor:
    instances: 1
    coreRequest: 200m
    memory: 1g
`, image401, jar401))
		n.kubectlWait(t, "sparkapplications.sparkoperator.k8s.io/no-such-class", "condition=Failed", appTimeout)
		n.requireEvents(t, "no-such-class", []wantEvent{
			{corev1.EventTypeNormal, "SparkApplicationSubmitted", ""},
			{corev1.EventTypeWarning, "SparkApplicationFailed", "NoSuchClass"},
		})
	})

	t.Run("unschedulable", func(t *testing.T) {
		// The node offers 32 CPUs: a driver asking for 64 stays Pending with the scheduler's
		// reason until its start timeout fails the attempt.
		n.apply(fmt.Sprintf(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: too-big
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: %s
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: %s
  restartPolicy: {type: Never}
  timeouts: {driverStartSeconds: 20}
  driver:
    coreRequest: "64"
    cores: 64
    memory: 1g
    serviceAccount: spark
  executor:
    instances: 1
    coreRequest: 200m
    memory: 1g
`, image401, jar401))
		n.kubectlWait(t, "sparkapplications.sparkoperator.k8s.io/too-big", "condition=Failed", 2*time.Minute)
		// The sync after the scheduler's verdict says why the driver does not start, before
		// the timeout fails the attempt. It used to come only with the timeout when that sync
		// read a stale status and Metacontroller dropped its answer (testdata/sync/
		// new-own-driver-observed-unscheduled: such an answer now asks for a sync in a second).
		seen := n.requireEvents(t, "too-big", []wantEvent{
			{corev1.EventTypeNormal, "SparkApplicationSubmitted", ""},
			{corev1.EventTypeWarning, "SparkDriverNotStarting", "Insufficient cpu"},
			{corev1.EventTypeWarning, "SparkApplicationFailed", "DriverStartTimedOut"},
		})
		for _, e := range seen {
			if e.Reason == "SparkApplicationFailed" && !strings.Contains(e.Note, "Insufficient cpu") {
				t.Errorf("the failure's Warning does not give the scheduler's reason: %s", e.Note)
			}
		}
	})
}

type wantEvent struct{ eventType, reason, inNote string }

// waitCompleted waits for an application to complete and checks that it told no Warning Event:
// a run that goes as planned, executors stopped by the driver included, gives an alert on
// Warnings nothing to page for.
func (n *namespace) waitCompleted(name string, timeout time.Duration, observers ...func()) *unstructured.Unstructured {
	n.t.Helper()
	app := n.waitAppState(name, "COMPLETED", timeout, observers...)
	n.requireNoWarnings(n.t, name)
	return app
}

// requireNoWarnings fails t when sparkhooks told a Warning about a completed application. It
// reads the Events once the completion's own is recorded: the recorder sends them in order.
func (n *namespace) requireNoWarnings(t *testing.T, app string) {
	t.Helper()
	for _, e := range n.requireEvents(t, app, []wantEvent{{corev1.EventTypeNormal, "SparkApplicationCompleted", ""}}) {
		if e.Type == corev1.EventTypeWarning {
			t.Errorf("%s completed, yet sparkhooks told a Warning: %s: %s", app, e.Reason, e.Note)
		}
	}
}

// kubectlWait runs `kubectl wait --for=<for>` on obj, as a user or a pipeline waits.
func (n *namespace) kubectlWait(t *testing.T, obj, waitFor string, timeout time.Duration) {
	t.Helper()
	if out, err := n.kubectl("wait", "--for="+waitFor, obj, "--timeout="+timeout.String()); err != nil {
		app, _ := n.get(sparkApplications, strings.TrimPrefix(obj, "sparkapplications.sparkoperator.k8s.io/"))
		status := "<none>"
		if app != nil {
			status = fmt.Sprint(app.Object["status"])
		}
		t.Fatalf("kubectl wait --for=%s %s: %v: %s\nstatus: %s", waitFor, obj, err, out, status)
	}
}

// requireEvents waits until the Events sparkhooks recorded about the application include want, in
// that order, each once, and returns them all.
func (n *namespace) requireEvents(t *testing.T, app string, want []wantEvent) []eventsv1.Event {
	t.Helper()
	var seen []eventsv1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := n.core.EventsV1().Events(n.name).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + app})
		if err != nil {
			return false, nil
		}
		seen = slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool { return e.ReportingController != "sparkhooks" })
		slices.SortStableFunc(seen, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
		return eventsMatch(seen, want) == "", nil
	})
	var b strings.Builder
	for _, e := range seen {
		fmt.Fprintf(&b, "\n  %s %s %s: %s (series: %v)", e.EventTime.Format(time.RFC3339Nano), e.Type, e.Reason, e.Note, e.Series != nil)
	}
	if err != nil {
		t.Fatalf("Events of %s: %s; recorded by sparkhooks:%s", app, eventsMatch(seen, want), b.String())
	}
	t.Logf("Events of %s:%s", app, b.String())
	return seen
}

// eventsMatch says what of want is missing from seen, in order; "" when nothing is. An Event
// sparkhooks recorded twice under the same reason (not folded into a series) is a mismatch too.
func eventsMatch(seen []eventsv1.Event, want []wantEvent) string {
	reasons := map[string]int{}
	for _, e := range seen {
		reasons[e.Reason]++
	}
	next := 0
	for _, e := range seen {
		if next < len(want) && e.Type == want[next].eventType && e.Reason == want[next].reason && strings.Contains(e.Note, want[next].inNote) {
			next++
		}
	}
	if next < len(want) {
		return fmt.Sprintf("want %s %s (note containing %q) after %d of %d", want[next].eventType, want[next].reason, want[next].inNote, next, len(want))
	}
	for _, w := range want {
		if reasons[w.reason] > 1 {
			return fmt.Sprintf("%s recorded %d times, not once with a series", w.reason, reasons[w.reason])
		}
	}
	return ""
}

// conditionStatus is the status of the condition of type kind in obj's status, "" when absent.
func conditionStatus(obj map[string]any, kind string) string {
	conditions, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == kind {
			status, _ := m["status"].(string)
			return status
		}
	}
	return ""
}
