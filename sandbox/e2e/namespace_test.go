//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// jobNamespaceLabel is the label TestNamespaceSelector selects job namespaces by.
const jobNamespaceLabel = "sparkhooks.e2e/jobs"

// With the chart's spark.jobNamespaceSelector (Kubeflow 2.5's), set with helm upgrade as an
// administrator would: an application in a namespace without the label is left alone (no
// children, the NamespaceSelected condition and one Event saying why), and labelling the
// namespace runs it to COMPLETED. The controller learns of the label from the Namespace, a
// related object of the application's, whose change makes it sync the application again.
//
// It runs alone, never beside the parallel tests: the upgrade rolls the hook server's Pod, and
// while the selector is set it would leave the other tests' applications alone too.
func TestNamespaceSelector(t *testing.T) {
	ctx := context.Background()
	selectorArg := "--namespace-selector=" + jobNamespaceLabel
	started := time.Now()
	require.NoError(t, shared.stack.SetChartValues(ctx, fmt.Sprintf("spark.jobNamespaceSelector=%q", jobNamespaceLabel)))
	waitHookServerArgs(t, selectorArg, true)
	t.Logf("helm upgrade with spark.jobNamespaceSelector=%s, the hook server's Pod replaced: %s", jobNamespaceLabel, time.Since(started).Round(100*time.Millisecond))
	t.Cleanup(func() {
		if err := shared.stack.SetChartValues(ctx, "spark.jobNamespaceSelector=null"); err != nil {
			t.Errorf("restoring the chart's values: %v", err)
			return
		}
		waitHookServerArgs(t, selectorArg, false)
	})

	w := newWorld(t, hooksURL, appController)
	out, err := w.apply(scenarioApp("waits", "10", ""))
	require.NoError(t, err, out)
	w.check(t, w.waitApp("waits", "the NamespaceSelected condition False for the current generation", func(app *unstructured.Unstructured) bool {
		return observedCurrent(app) && conditionStatus(app, "NamespaceSelected") == "False"
	}))
	var events []corev1.Event
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		events = w.eventsWithReason(t, "waits", "SparkApplicationNamespaceNotSelected")
		return len(events) > 0, nil
	}), "an Event SparkApplicationNamespaceNotSelected on the application: %s", w.appSummary("waits"))
	// Whatever syncs come meanwhile (the Event's own write, resyncs) leave it so.
	time.Sleep(metacontrollerSettle)

	app, err := w.app("waits")
	require.NoError(t, err)
	summary := describeApp(app)
	assert.Equal(t, "", appState(app), "no attempt starts: %s", summary)
	// The message names the chart's jobNamespaces too (--namespaces), which the other tests'
	// AddJobNamespace calls extend: only its start and the selector are this test's to know.
	message := conditionMessage(app, "NamespaceSelected")
	assert.Contains(t, message, "namespace "+w.ns+" is not selected by --namespaces ", summary)
	assert.Contains(t, message, " or --namespace-selector \""+jobNamespaceLabel+"\"", summary)
	assert.Empty(t, w.children(t), "no children in the unselected namespace")
	events = w.eventsWithReason(t, "waits", "SparkApplicationNamespaceNotSelected")
	require.Len(t, events, 1, "one Event: %s", w.events("waits"))
	assert.LessOrEqual(t, events[0].Count, int32(1), "told once, not repeated by each sync: %+v", events[0])
	assert.Equal(t, corev1.EventTypeNormal, events[0].Type, "a namespace not selected is the administrator's choice, not trouble")

	out, err = adminKubectl("label", "namespace", w.ns, jobNamespaceLabel+"=true")
	require.NoError(t, err, out)
	_, pod := w.runAttempt(t, "waits", "")
	require.NoError(t, w.kubelet.Succeed(ctx, pod.Name))
	w.check(t, w.waitState("waits", "COMPLETED"))
	app, err = w.app("waits")
	require.NoError(t, err)
	assert.Equal(t, "", conditionStatus(app, "NamespaceSelected"), "no condition once the namespace is selected: %s", describeApp(app))
}

// waitHookServerArgs waits until every Pod of the chart's hook server has arg among its
// container's arguments (or, with want false, none has), and no Pod of the old ones is left:
// after helm upgrade --wait the replaced Pod may still be answering while it terminates.
func waitHookServerArgs(t *testing.T, arg string, want bool) {
	t.Helper()
	client, err := kubernetes.NewForConfig(shared.stack.Admin)
	require.NoError(t, err)
	var seen []string
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 2*waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(stack.SparkhooksNamespace).List(ctx, metav1.ListOptions{LabelSelector: hookServerSelector})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		done := len(pods.Items) > 0
		for _, pod := range pods.Items {
			has := slices.Contains(pod.Spec.Containers[0].Args, arg)
			seen = append(seen, fmt.Sprintf("%s (%s, %s: %v, deleting %v)", pod.Name, pod.Status.Phase, arg, has, pod.DeletionTimestamp != nil))
			done = done && has == want && pod.DeletionTimestamp == nil
		}
		return done, nil
	})
	require.NoError(t, err, "the hook server's Pods with %s: %v; saw %s", arg, want, strings.Join(seen, ", "))
}

// eventsWithReason are the Events on the object name in the world's namespace with reason.
func (w *world) eventsWithReason(t *testing.T, name, reason string) []corev1.Event {
	t.Helper()
	list, err := w.core.CoreV1().Events(w.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
	require.NoError(t, err)
	return list.Items
}

// children are the Pods, Services and ConfigMaps in the world's namespace, but for the
// ConfigMap every namespace gets (kube-root-ca.crt).
func (w *world) children(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	pods, err := w.core.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range pods.Items {
		names = append(names, "Pod "+p.Name)
	}
	services, err := w.core.CoreV1().Services(w.ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, s := range services.Items {
		names = append(names, "Service "+s.Name)
	}
	configMaps, err := w.core.CoreV1().ConfigMaps(w.ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, c := range configMaps.Items {
		if c.Name != "kube-root-ca.crt" {
			names = append(names, "ConfigMap "+c.Name)
		}
	}
	return names
}

// conditionMessage is the message of the condition typ in the application's status.
func conditionMessage(app *unstructured.Unstructured, typ string) string {
	conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}
