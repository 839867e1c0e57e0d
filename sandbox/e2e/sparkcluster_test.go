//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

const clusterController = "sparkcluster-controller.yaml"

var (
	sparkClusters = schema.GroupVersionResource{Group: "spark.apache.org", Version: "v1", Resource: "sparkclusters"}
	statefulSets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}

	horizontalPodAutoscalers = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
)

// A SparkCluster applied with kubectl is RunningHealthy only once its master and minWorkers
// workers are ready; an edit (more workers, a new conf) reaches the StatefulSets; deleting it
// releases every child.
func TestSparkClusterRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, clusterController)
	ctx := context.Background()
	out, err := w.kubectl("apply", "-f", filepath.Join(repoRoot, "examples", "spark-cluster.yaml"))
	require.NoError(t, err, out)
	const name = "spark-cluster"
	state := func(c *unstructured.Unstructured) string {
		return harness.NestedString(c, "status", "currentState", "currentStateSummary")
	}

	w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "Submitted" })
	master := w.waitStatefulSet(t, name+"-master", func(*unstructured.Unstructured) bool { return true })
	assert.Equal(t, "1", harness.NestedString(master, "spec", "replicas"))
	w.waitStatefulSet(t, name+"-worker", func(s *unstructured.Unstructured) bool { return harness.NestedString(s, "spec", "replicas") == "3" })
	for _, svc := range []string{name + "-master-svc", name + "-worker-svc"} {
		_, err := w.core.CoreV1().Services(w.ns).Get(ctx, svc, metav1.GetOptions{})
		require.NoError(t, err, "Service %s", svc)
	}
	_, err = w.core.PolicyV1().PodDisruptionBudgets(w.ns).Get(ctx, name+"-worker-pdb", metav1.GetOptions{})
	require.NoError(t, err, "the workers' PodDisruptionBudget (minWorkers >= 1)")
	_, err = w.core.NetworkingV1().NetworkPolicies(w.ns).Get(ctx, name+"-worker", metav1.GetOptions{})
	require.NoError(t, err, "the workers' NetworkPolicy")

	// Ready step by step: the kubelet starts the Pods, the StatefulSet controller counts them.
	w.readyStatefulSet(t, name+"-master", 1)
	w.readyStatefulSet(t, name+"-worker", 2)
	c := w.waitCluster(t, name, func(c *unstructured.Unstructured) bool {
		return strings.Contains(harness.NestedString(c, "status", "currentState", "message"), "(2 ready)")
	})
	assert.Equal(t, "Submitted", state(c), "2 of minWorkers 3 ready is not healthy")
	w.readyStatefulSet(t, name+"-worker", 3)
	w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "RunningHealthy" })
	out, err = w.kubectl("wait", "--for=condition=Ready", "sparkcluster/"+name, "--timeout=10s")
	require.NoError(t, err, "kubectl wait --for=condition=Ready on a RunningHealthy cluster: %s", out)

	// An edit reaches the StatefulSets.
	patch := `{"spec":{"clusterTolerations":{"instanceConfig":{"initWorkers":4,"minWorkers":4,"maxWorkers":4}},"sparkConf":{"spark.worker.cleanup.enabled":"true"}}}`
	_, err = w.dyn.Resource(sparkClusters).Namespace(w.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
	worker := w.waitStatefulSet(t, name+"-worker", func(s *unstructured.Unstructured) bool { return harness.NestedString(s, "spec", "replicas") == "4" })
	containers, _, _ := unstructured.NestedSlice(worker.Object, "spec", "template", "spec", "containers")
	require.NotEmpty(t, containers)
	assert.Contains(t, harness.NestedString(&unstructured.Unstructured{Object: map[string]any{"c": containers[0]}}, "c", "env"), "spark.worker.cleanup.enabled=true")
	w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "Submitted" })
	// The new conf rolls the master and the workers, one Pod at a time, each replaced by one that
	// is not ready at once: the cluster may go below minWorkers, and back to Submitted, at each
	// step.
	w.readyStatefulSet(t, name+"-master", 1)
	w.readyStatefulSet(t, name+"-worker", 4)
	c = w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "RunningHealthy" })
	history := stateHistory(c)
	require.GreaterOrEqual(t, len(history), 4, "history %v", history)
	assert.Equal(t, []string{"Submitted", "RunningHealthy", "Submitted"}, history[:3], "the first run, then the edit")
	assert.Equal(t, "RunningHealthy", history[len(history)-1])
	for i := 1; i < len(history); i++ {
		assert.NotEqual(t, history[i-1], history[i], "one entry per change: %v", history)
		assert.Contains(t, []string{"Submitted", "RunningHealthy"}, history[i], "history %v", history)
	}

	out, err = w.kubectl("delete", "sparkcluster", name, "--wait=true", "--timeout="+waitTimeout.String())
	require.NoError(t, err, out)
	_, err = w.dyn.Resource(statefulSets).Namespace(w.ns).Get(ctx, name+"-master", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the master StatefulSet is deleted: %v", err)
	_, err = w.core.CoreV1().Services(w.ns).Get(ctx, name+"-master-svc", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the master Service is deleted: %v", err)
	if ctl := w.standIn("sparkhooks-sparkcluster"); ctl != nil {
		stats := ctl.Stats(w.ns, name)
		t.Logf("%s: %d syncs, %d status writes, children: %d created, %d updated, %d drifted, %d deleted",
			name, stats.Syncs, stats.StatusWrites, stats.Children.Creates, stats.Children.Updates, stats.Children.Drifts, stats.Children.Deletes)
		assert.Zero(t, stats.Children.Drifts, "children answered differently from their creation without a spec change: %v", stats.Children.Changed)
	}
}

func (w *world) waitCluster(t *testing.T, name string, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	return w.waitObject(t, sparkClusters, name, ok)
}

func (w *world) waitStatefulSet(t *testing.T, name string, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	return w.waitObject(t, statefulSets, name, ok)
}

func (w *world) waitObject(t *testing.T, gvr schema.GroupVersionResource, name string, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	get := func(ctx context.Context) (*unstructured.Unstructured, error) {
		return w.dyn.Resource(gvr).Namespace(w.ns).Get(ctx, name, metav1.GetOptions{})
	}
	describe := func(obj *unstructured.Unstructured) string { return fmt.Sprint(statusOf(obj)) }
	obj, err := harness.WaitFor(context.Background(), waitTimeout, fmt.Sprintf("%s %s/%s as the test expects", gvr.Resource, w.ns, name), get, ok, describe)
	require.NoError(t, err)
	return obj
}

// readyStatefulSet plays the kubelet of the StatefulSet's Pods whose ordinals are below ready: it
// starts each one the StatefulSet controller creates (again, when a rolling update replaces it),
// until the controller reports that many ready Pods, all of the StatefulSet's update revision.
func (w *world) readyStatefulSet(t *testing.T, name string, ready int32) {
	t.Helper()
	last := "no StatefulSet"
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		sts, err := w.core.AppsV1().StatefulSets(w.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		pods, err := w.core.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(sts.Spec.Selector)})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		var updated int32
		for _, pod := range pods.Items {
			ordinal, ok := strings.CutPrefix(pod.Name, name+"-")
			n, err := strconv.Atoi(ordinal)
			if !ok || err != nil || int32(n) >= ready || pod.DeletionTimestamp != nil || pod.Spec.NodeName != harness.NodeName {
				continue
			}
			if pod.Status.Phase == corev1.PodPending {
				if err := w.kubelet.Start(ctx, pod.Name); err != nil {
					last = err.Error()
					return false, nil
				}
			}
			if pod.Labels[appsv1.ControllerRevisionHashLabelKey] == sts.Status.UpdateRevision {
				updated++
			}
		}
		last = fmt.Sprintf("readyReplicas %d, %d of the first %d Pods at the update revision, observed generation %d of %d",
			sts.Status.ReadyReplicas, updated, ready, sts.Status.ObservedGeneration, sts.Generation)
		return sts.Status.ObservedGeneration == sts.Generation && sts.Status.ReadyReplicas == ready && updated == ready, nil
	})
	require.NoError(t, err, "StatefulSet %s/%s: want %d ready Pods; saw %s", w.ns, name, ready, last)
}

// An autoscaled SparkCluster (Apache's cluster-with-hpa shape) starts its workers at
// initWorkers; the count the autoscaler sets survives the syncs that follow, since the hook
// answers it back (Metacontroller's apply would otherwise write initWorkers over it on every
// sync); an edit of initWorkers is applied.
func TestSparkClusterAutoscaledKeepsTheAutoscalersCount(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, clusterController)
	ctx := context.Background()
	const name = "elastic"
	out, err := w.apply(`apiVersion: spark.apache.org/v1
kind: SparkCluster
metadata:
  name: ` + name + `
spec:
  runtimeVersions:
    sparkVersion: "4.0.1"
  clusterTolerations:
    instanceConfig:
      initWorkers: 3
      minWorkers: 1
      maxWorkers: 5
`)
	require.NoError(t, err, out)
	worker := name + "-worker"
	replicas := func(n string) func(*unstructured.Unstructured) bool {
		return func(s *unstructured.Unstructured) bool { return harness.NestedString(s, "spec", "replicas") == n }
	}
	w.waitStatefulSet(t, worker, replicas("3"))
	// Metacontroller creates the children one after the other: the autoscaler may come a moment
	// after the StatefulSet.
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 50e6, waitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := w.dyn.Resource(horizontalPodAutoscalers).Namespace(w.ns).Get(ctx, name+"-worker-hpa", metav1.GetOptions{})
		return err == nil, nil
	}), "the autoscaler")

	// The autoscaler scales the pool through the scale subresource, as kubectl scale does.
	out, err = w.kubectl("scale", "statefulset", worker, "--replicas=5")
	require.NoError(t, err, out)
	// Under the stand-in the test waits for the syncs it counts; Metacontroller syncs on each
	// watch event of the parent and its StatefulSets, which the waits below bring.
	ctl := w.standIn("sparkhooks-sparkcluster")
	var before int
	if ctl != nil {
		before = ctl.Stats(w.ns, name).Syncs
	}
	w.readyStatefulSet(t, name+"-master", 1)
	w.readyStatefulSet(t, worker, 5)
	w.waitCluster(t, name, func(c *unstructured.Unstructured) bool {
		return harness.NestedString(c, "status", "currentState", "currentStateSummary") == "RunningHealthy"
	})
	// A label edit of the parent brings one more sync after the pool is ready.
	_, err = w.dyn.Resource(sparkClusters).Namespace(w.ns).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	if ctl != nil {
		require.NoError(t, wait.PollUntilContextTimeout(ctx, 50e6, waitTimeout, true, func(context.Context) (bool, error) {
			return ctl.Stats(w.ns, name).Syncs >= before+3, nil
		}), "syncs after the scaling")
	} else {
		time.Sleep(metacontrollerSettle)
	}
	sts := w.waitStatefulSet(t, worker, func(*unstructured.Unstructured) bool { return true })
	assert.Equal(t, "5", harness.NestedString(sts, "spec", "replicas"), "the autoscaler's count survives the syncs")

	// The user's edit of initWorkers is applied.
	_, err = w.dyn.Resource(sparkClusters).Namespace(w.ns).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"spec":{"clusterTolerations":{"instanceConfig":{"initWorkers":2}}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	w.waitStatefulSet(t, worker, replicas("2"))
}

// spec.suspend (Apache 1.1): a cluster created suspended gets its Services alone; resumed it is
// built (Submitted, then RunningHealthy); suspended again its StatefulSets, autoscaler and
// budget go while the Services and the NetworkPolicy stay; resumed again it is rebuilt.
func TestSparkClusterSuspendAndResume(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, clusterController)
	ctx := context.Background()
	const name = "pausable"
	out, err := w.apply(`apiVersion: spark.apache.org/v1
kind: SparkCluster
metadata:
  name: ` + name + `
spec:
  suspend: true
  runtimeVersions:
    sparkVersion: "4.0.1"
  clusterTolerations:
    instanceConfig:
      initWorkers: 2
      minWorkers: 1
      maxWorkers: 3
`)
	require.NoError(t, err, out)
	state := func(want string) func(*unstructured.Unstructured) bool {
		return func(c *unstructured.Unstructured) bool {
			return harness.NestedString(c, "status", "currentState", "currentStateSummary") == want
		}
	}
	exists := func(gvr schema.GroupVersionResource, n string) bool {
		_, err := w.dyn.Resource(gvr).Namespace(w.ns).Get(ctx, n, metav1.GetOptions{})
		require.True(t, err == nil || apierrors.IsNotFound(err), "%s %s: %v", gvr.Resource, n, err)
		return err == nil
	}
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	policies := schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	budgets := schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	suspended := func(t *testing.T, policy bool) {
		t.Helper()
		c := w.waitCluster(t, name, state("Suspended"))
		assert.Equal(t, "SpecSuspend", harness.NestedString(c, "status", "currentState", "suspendReason"))
		require.NoError(t, wait.PollUntilContextTimeout(ctx, 50e6, waitTimeout, true, func(context.Context) (bool, error) {
			return !exists(statefulSets, name+"-master") && !exists(statefulSets, name+"-worker") &&
				!exists(horizontalPodAutoscalers, name+"-worker-hpa") && !exists(budgets, name+"-worker-pdb"), nil
		}), "the StatefulSets, autoscaler and budget go")
		assert.True(t, exists(services, name+"-master-svc"), "the master Service stays")
		assert.True(t, exists(services, name+"-worker-svc"), "the worker Service stays")
		assert.Equal(t, policy, exists(policies, name+"-worker"), "the NetworkPolicy once made")
	}
	resume := func(t *testing.T) {
		t.Helper()
		_, err := w.dyn.Resource(sparkClusters).Namespace(w.ns).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{})
		require.NoError(t, err)
		w.waitCluster(t, name, state("Submitted"))
		w.waitStatefulSet(t, name+"-worker", func(s *unstructured.Unstructured) bool { return harness.NestedString(s, "spec", "replicas") == "2" })
		w.readyStatefulSet(t, name+"-master", 1)
		w.readyStatefulSet(t, name+"-worker", 2)
		w.waitCluster(t, name, state("RunningHealthy"))
		assert.True(t, exists(horizontalPodAutoscalers, name+"-worker-hpa"))
		assert.True(t, exists(budgets, name+"-worker-pdb"))
		assert.True(t, exists(policies, name+"-worker"))
	}

	suspended(t, false)
	resume(t)
	_, err = w.dyn.Resource(sparkClusters).Namespace(w.ns).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	suspended(t, true)
	resume(t)
	c := w.waitCluster(t, name, state("RunningHealthy"))
	assert.Equal(t, []string{"Suspended", "Submitted", "RunningHealthy", "Suspended", "Submitted", "RunningHealthy"}, stateHistory(c))
}

// stateHistory is the states of a SparkCluster's stateTransitionHistory, oldest first.
func stateHistory(c *unstructured.Unstructured) []string {
	var history []string
	entries, _, _ := unstructured.NestedMap(c.Object, "status", "stateTransitionHistory")
	for i := range len(entries) {
		e, _ := entries[strconv.Itoa(i)].(map[string]any)
		history = append(history, fmt.Sprint(e["currentStateSummary"]))
	}
	return history
}
