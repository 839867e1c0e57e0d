//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

const clusterController = "sparkcluster-controller.yaml"

var (
	sparkClusters = schema.GroupVersionResource{Group: "spark.apache.org", Version: "v1", Resource: "sparkclusters"}
	statefulSets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
)

// A SparkCluster applied with kubectl is RunningHealthy only once its master and minWorkers
// workers are ready; an edit (more workers, a new conf) reaches the StatefulSets; deleting it
// releases every child.
func TestSparkClusterRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, shared.hooks.URL, clusterController)
	ctx := context.Background()
	out, err := w.kubectl("apply", "-f", filepath.Join(repoRoot, "examples", "spark-cluster.yaml"))
	require.NoError(t, err, out)
	const name = "spark-cluster"
	state := func(c *unstructured.Unstructured) string {
		return nestedString(c, "status", "currentState", "currentStateSummary")
	}

	w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "Submitted" })
	master := w.waitStatefulSet(t, name+"-master", func(*unstructured.Unstructured) bool { return true })
	assert.Equal(t, "1", nestedString(master, "spec", "replicas"))
	w.waitStatefulSet(t, name+"-worker", func(s *unstructured.Unstructured) bool { return nestedString(s, "spec", "replicas") == "3" })
	for _, svc := range []string{name + "-master-svc", name + "-worker-svc"} {
		_, err := w.core.CoreV1().Services(w.ns).Get(ctx, svc, metav1.GetOptions{})
		require.NoError(t, err, "Service %s", svc)
	}
	_, err = w.core.PolicyV1().PodDisruptionBudgets(w.ns).Get(ctx, name+"-worker-pdb", metav1.GetOptions{})
	require.NoError(t, err, "the workers' PodDisruptionBudget (minWorkers >= 1)")
	_, err = w.core.NetworkingV1().NetworkPolicies(w.ns).Get(ctx, name+"-worker", metav1.GetOptions{})
	require.NoError(t, err, "the workers' NetworkPolicy")

	// Ready step by step, as the StatefulSet controller would report it.
	w.setReadyReplicas(t, name+"-master", 1)
	w.setReadyReplicas(t, name+"-worker", 2)
	c := w.waitCluster(t, name, func(c *unstructured.Unstructured) bool {
		return strings.Contains(nestedString(c, "status", "currentState", "message"), "(2 ready)")
	})
	assert.Equal(t, "Submitted", state(c), "2 of minWorkers 3 ready is not healthy")
	w.setReadyReplicas(t, name+"-worker", 3)
	w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "RunningHealthy" })

	// An edit reaches the StatefulSets.
	patch := `{"spec":{"clusterTolerations":{"instanceConfig":{"initWorkers":4,"minWorkers":4,"maxWorkers":4}},"sparkConf":{"spark.worker.cleanup.enabled":"true"}}}`
	_, err = w.dyn.Resource(sparkClusters).Namespace(w.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
	worker := w.waitStatefulSet(t, name+"-worker", func(s *unstructured.Unstructured) bool { return nestedString(s, "spec", "replicas") == "4" })
	containers, _, _ := unstructured.NestedSlice(worker.Object, "spec", "template", "spec", "containers")
	require.NotEmpty(t, containers)
	assert.Contains(t, nestedString(&unstructured.Unstructured{Object: map[string]any{"c": containers[0]}}, "c", "env"), "spark.worker.cleanup.enabled=true")
	w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "Submitted" })
	w.setReadyReplicas(t, name+"-worker", 4)
	c = w.waitCluster(t, name, func(c *unstructured.Unstructured) bool { return state(c) == "RunningHealthy" })
	history, _, _ := unstructured.NestedMap(c.Object, "status", "stateTransitionHistory")
	assert.Len(t, history, 4, "Submitted, RunningHealthy, Submitted, RunningHealthy: one entry per change")

	out, err = w.kubectl("delete", "sparkcluster", name, "--wait=true", "--timeout="+waitTimeout.String())
	require.NoError(t, err, out)
	_, err = w.dyn.Resource(statefulSets).Namespace(w.ns).Get(ctx, name+"-master", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the master StatefulSet is deleted: %v", err)
	_, err = w.core.CoreV1().Services(w.ns).Get(ctx, name+"-master-svc", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the master Service is deleted: %v", err)
	stats := w.controllers["sparkhooks-sparkcluster"].Stats(w.ns, name)
	t.Logf("%s: %d syncs, %d status writes, children: %d created, %d updated, %d drifted, %d deleted",
		name, stats.Syncs, stats.StatusWrites, stats.Children.Creates, stats.Children.Updates, stats.Children.Drifts, stats.Children.Deletes)
	assert.Zero(t, stats.Children.Drifts, "children answered differently from their creation without a spec change: %v", stats.Children.Changed)
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
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(context.Background(), 50e6, waitTimeout, true, func(ctx context.Context) (bool, error) {
		obj, err := w.dyn.Resource(gvr).Namespace(w.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = obj
		return ok(obj), nil
	})
	require.NoError(t, err, "%s %s/%s: last seen %v", gvr.Resource, w.ns, name, statusOf(last))
	return last
}

// setReadyReplicas reports a StatefulSet's Pods ready, as its controller would.
func (w *world) setReadyReplicas(t *testing.T, name string, ready int64) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50e6, waitTimeout, true, func(ctx context.Context) (bool, error) {
		sts, err := w.dyn.Resource(statefulSets).Namespace(w.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		_ = unstructured.SetNestedField(sts.Object, ready, "status", "replicas")
		_ = unstructured.SetNestedField(sts.Object, ready, "status", "readyReplicas")
		_, err = w.dyn.Resource(statefulSets).Namespace(w.ns).UpdateStatus(ctx, sts, metav1.UpdateOptions{})
		return err == nil, nil
	})
	require.NoError(t, err, "StatefulSet %s: readyReplicas %d", name, ready)
}
