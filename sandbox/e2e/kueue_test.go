//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
)

var (
	workloads       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	resourceFlavors = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
)

var installKueueCRDs = sync.OnceValue(func() error {
	return harness.InstallKueueCRDs(shared.stack.Kubeconfig)
})

// queuedRegistration is metacontroller/<file> with Workloads declared, as the chart's
// metacontroller.kueue renders it.
func queuedRegistration(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "metacontroller", file))
	require.NoError(t, err)
	child := "    - apiVersion: kueue.x-k8s.io/v1beta2\n      resource: workloads\n      updateStrategy:\n        method: OnDelete\n  hooks:\n"
	out := strings.Replace(string(b), "  hooks:\n", child, 1)
	require.NotEqual(t, string(b), out)
	path := filepath.Join(t.TempDir(), file)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	return path
}

// quotaKueue stands in for Kueue's scheduler, by its documented Workload status
// (kueue.x-k8s.io/v1beta2): in creation order, a Workload that fits the ClusterQueue's unused
// cpu quota gets QuotaReserved and Admitted with status.admission on one flavor; one that does
// not gets QuotaReserved False with Kueue's "insufficient unused quota" message. Quota is held by
// every admitted Workload until it is deleted, as Kueue holds it until the reservation is
// cleared. evict preempts one, as Kueue's preemption writes it.
type quotaKueue struct {
	w      *world
	flavor string
	quota  resource.Quantity // cpu
}

func (k *quotaKueue) run(ctx context.Context) {
	_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		k.schedule(ctx)
		return false, nil
	})
}

func (k *quotaKueue) schedule(ctx context.Context) {
	list, err := k.w.dyn.Resource(workloads).Namespace(k.w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool {
		ti, tj := items[i].GetCreationTimestamp(), items[j].GetCreationTimestamp()
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return items[i].GetName() < items[j].GetName()
	})
	used := resource.Quantity{}
	for _, wl := range items {
		if admitted(&wl) {
			used.Add(workloadCPU(&wl))
		}
	}
	for i := range items {
		wl := &items[i]
		if admitted(wl) || wl.GetDeletionTimestamp() != nil {
			continue
		}
		need := workloadCPU(wl)
		free := k.quota.DeepCopy()
		free.Sub(used)
		now := time.Now().UTC().Format(time.RFC3339)
		if need.Cmp(free) > 0 {
			missing := need.DeepCopy()
			missing.Sub(free)
			k.setStatus(ctx, wl, map[string]any{"conditions": []any{condition("QuotaReserved", "False", "Pending",
				fmt.Sprintf("couldn't assign flavors to pod set driver: insufficient unused quota for cpu in flavor %s, %s more needed", k.flavor, missing.String()), now)}})
			continue
		}
		used.Add(need)
		var assignments []any
		for _, ps := range podSets(wl) {
			assignments = append(assignments, map[string]any{"name": ps["name"], "count": ps["count"],
				"flavors": map[string]any{"cpu": k.flavor, "memory": k.flavor}})
		}
		k.setStatus(ctx, wl, map[string]any{
			"conditions": []any{
				condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue spark", now),
				condition("Admitted", "True", "Admitted", "The workload is admitted", now),
			},
			"admission": map[string]any{"clusterQueue": "spark", "podSetAssignments": assignments},
		})
	}
}

// evict preempts the named Workload: Evicted and Preempted true, the reservation kept.
func (k *quotaKueue) evict(ctx context.Context, name string) error {
	wl, err := k.w.dyn.Resource(workloads).Namespace(k.w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	now := time.Now().UTC().Format(time.RFC3339)
	msg := "Preempted to accommodate a workload (UID: 0) due to prioritization in the ClusterQueue"
	conds = append(conds, condition("Evicted", "True", "Preempted", msg, now), condition("Preempted", "True", "InClusterQueue", msg, now))
	status, _, _ := unstructured.NestedMap(wl.Object, "status")
	status["conditions"] = conds
	k.setStatus(ctx, wl, status)
	return nil
}

func (k *quotaKueue) setStatus(ctx context.Context, wl *unstructured.Unstructured, status map[string]any) {
	wl = wl.DeepCopy()
	wl.Object["status"] = status
	if _, err := k.w.dyn.Resource(workloads).Namespace(k.w.ns).UpdateStatus(ctx, wl, metav1.UpdateOptions{}); err != nil {
		k.w.t.Logf("Kueue stand-in: status of Workload %s: %v", wl.GetName(), err)
	}
}

func condition(typ, status, reason, msg, at string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": at}
}

func admitted(wl *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if c["type"] == "Admitted" && c["status"] == "True" {
			return true
		}
	}
	return false
}

func podSets(wl *unstructured.Unstructured) []map[string]any {
	sets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
	var out []map[string]any
	for _, s := range sets {
		if m, ok := s.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// workloadCPU is the cpu a Workload asks for: each pod set's count times its containers' requests.
func workloadCPU(wl *unstructured.Unstructured) resource.Quantity {
	total := resource.Quantity{}
	for _, ps := range podSets(wl) {
		count, _ := ps["count"].(int64)
		containers, _, _ := unstructured.NestedSlice(ps, "template", "spec", "containers")
		for _, c := range containers {
			cpu, _, _ := unstructured.NestedString(c.(map[string]any), "resources", "requests", "cpu")
			q, err := resource.ParseQuantity(cpu)
			if err != nil {
				continue
			}
			for range count {
				total.Add(q)
			}
		}
	}
	return total
}

func (w *world) workload(name string) (*unstructured.Unstructured, error) {
	return w.dyn.Resource(workloads).Namespace(w.ns).Get(context.Background(), name, metav1.GetOptions{})
}

func queuedCondition(app *unstructured.Unstructured) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if c["type"] == "Queued" {
			return fmt.Sprint(c["status"]), fmt.Sprint(c["message"])
		}
	}
	return "", ""
}

// Two SparkApplications in a LocalQueue whose quota fits one: the first runs on the admitted
// flavor's nodes while the second waits SUSPENDED with Kueue's message and no driver; the first's
// completion frees the quota (its Workload is deleted) and the second runs; a preemption stops
// the second's driver and queues it again, and it runs when admitted again.
func TestKueueQueuesApplications(t *testing.T) {
	skipUnderMetacontroller(t, "the test runs a registration of its own, with Kueue's Workloads as a child")
	require.NoError(t, installKueueCRDs())
	w := newWorld(t, hooksURL, queuedRegistration(t, appController))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	flavor := "spark-" + w.ns
	_, err := w.dyn.Resource(resourceFlavors).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
		"metadata": map[string]any{"name": flavor},
		"spec": map[string]any{
			"nodeLabels":  map[string]any{"pool": "spark"},
			"tolerations": []any{map[string]any{"key": "spark", "operator": "Exists", "effect": "NoSchedule"}},
		},
	}}, metav1.CreateOptions{})
	require.NoError(t, err, "the real ResourceFlavor CRD takes the flavor")
	t.Cleanup(func() {
		_ = w.dyn.Resource(resourceFlavors).Delete(context.Background(), flavor, metav1.DeleteOptions{})
	})
	kueue := &quotaKueue{w: w, flavor: flavor, quota: resource.MustParse("3")} // one driver and two executors of one core
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		kueue.run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-stopped }) // it logs through t, which must outlive it

	labelled := "  labels:\n    kueue.x-k8s.io/queue-name: team-a\n"
	for _, name := range []string{"spark-pi-1", "spark-pi-2"} {
		w.watchStates(t, name)
		manifest := strings.Replace(scenarioApp(name, "10", ""), "  name: "+name+"\n", "  name: "+name+"\n"+labelled, 1)
		out, err := w.apply(manifest)
		require.NoError(t, err, out)
		// Kueue admits in the order of the Workloads' creation, and the hooks create each one at
		// its application's first sync: the second is applied once the first's exists (ties,
		// within the timestamps' second, go by name).
		require.NoError(t, wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 45*time.Second, true, func(context.Context) (bool, error) {
			_, err := w.workload("sparkapplication-" + name)
			return err == nil, nil
		}), "the Workload of %s", name)
	}

	first, pod := w.runAttempt(t, "spark-pi-1", "")
	assert.Equal(t, map[string]string{"pool": "spark"}, pod.Spec.NodeSelector, "the admitted flavor's node labels")
	assert.Contains(t, pod.Spec.Tolerations, corev1.Toleration{Key: "spark", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	wl, err := w.workload("sparkapplication-spark-pi-1")
	require.NoError(t, err, "the Workload the real CRD accepted")
	assert.Equal(t, "team-a", nestedValue(wl, "spec", "queueName"))

	w.check(t, w.waitApp("spark-pi-2", "SUSPENDED with Kueue's message", func(app *unstructured.Unstructured) bool {
		status, msg := queuedCondition(app)
		return appState(app) == "SUSPENDED" && status == "True" && strings.Contains(msg, "insufficient unused quota")
	}))
	_, err = w.pod("spark-pi-2-driver")
	assert.True(t, apierrors.IsNotFound(err), "no driver before admission: %v", err)

	require.NoError(t, w.kubelet.Succeed(ctx, pod.Name))
	w.check(t, w.waitState("spark-pi-1", "COMPLETED"))
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		_, err := w.workload("sparkapplication-spark-pi-1")
		return err != nil, nil
	}), "completion deletes the Workload, freeing its quota")

	a2, pod2 := w.runAttempt(t, "spark-pi-2", "")
	assert.NotEqual(t, first.submissionID, a2.submissionID)

	require.NoError(t, kueue.evict(ctx, "sparkapplication-spark-pi-2"))
	w.check(t, w.waitApp("spark-pi-2", "SUSPENDED after the eviction", func(app *unstructured.Unstructured) bool {
		return appState(app) == "SUSPENDED" && attemptOf(app).submissionID == a2.submissionID
	}))
	w.requirePod(t, "spark-pi-2", pod2.Name, "deleted: eviction ends the attempt", podGone)
	a3, _ := w.runAttempt(t, "spark-pi-2", a2.submissionID)
	assert.Equal(t, int64(1), a3.executionAttempts, "the evicted attempt does not count")
	w.requireStates(t, "spark-pi-2", "SUSPENDED SUBMITTED RUNNING SUSPENDING SUSPENDED SUBMITTED RUNNING")
}

// The acceptance test with the real Kueue controller: a ClusterQueue whose quota fits
// one of two SparkApplications admits the first, which runs on the flavor's nodes, while the
// second waits SUSPENDED with Kueue's own message; when the first completes its Workload goes,
// and Kueue admits the second, which runs to completion too.
func TestKueueRealControllerAdmitsOneOfTwo(t *testing.T) {
	skipUnderMetacontroller(t, "the test runs a registration of its own, with Kueue's Workloads as a child")
	require.NoError(t, installKueueCRDs())
	harness.StartKueue(t, shared.stack.Kubeconfig, shared.dir)
	w := newWorld(t, hooksURL, queuedRegistration(t, appController))
	ctx := context.Background()

	flavor := "real-" + w.ns
	for _, manifest := range []string{
		fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: %s
spec:
  nodeLabels: {pool: spark}
`, flavor),
		fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: %s
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: %s
          resources:
            - {name: cpu, nominalQuota: "3"}
            - {name: memory, nominalQuota: 3Gi}
`, flavor, flavor),
		fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team-a
  namespace: %s
spec:
  clusterQueue: %s
`, w.ns, flavor),
	} {
		out, err := w.apply(manifest)
		require.NoError(t, err, out)
	}
	t.Cleanup(func() {
		_, _ = kubectl.Run(context.Background(), shared.stack.Kubeconfig, "delete", "clusterqueue/"+flavor, "resourceflavor/"+flavor, "--wait=false")
	})

	labelled := "  labels:\n    kueue.x-k8s.io/queue-name: team-a\n"
	for _, name := range []string{"real-pi-1", "real-pi-2"} {
		w.watchStates(t, name)
		manifest := strings.Replace(scenarioApp(name, "10", ""), "  name: "+name+"\n", "  name: "+name+"\n"+labelled, 1)
		out, err := w.apply(manifest)
		require.NoError(t, err, out)
		time.Sleep(1100 * time.Millisecond) // Kueue orders equal priorities by creation time, in seconds
	}

	_, pod := w.runAttempt(t, "real-pi-1", "")
	assert.Equal(t, map[string]string{"pool": "spark"}, pod.Spec.NodeSelector, "the node labels of the flavor Kueue assigned")
	w.check(t, w.waitApp("real-pi-2", "SUSPENDED with Kueue's message", func(app *unstructured.Unstructured) bool {
		status, msg := queuedCondition(app)
		return appState(app) == "SUSPENDED" && status == "True" && strings.Contains(msg, "insufficient")
	}))
	app2, err := w.app("real-pi-2")
	require.NoError(t, err)
	_, msg := queuedCondition(app2)
	t.Logf("Kueue's message for the waiting application: %s", msg)
	_, err = w.pod("real-pi-2-driver")
	assert.True(t, apierrors.IsNotFound(err), "no driver before admission: %v", err)

	require.NoError(t, w.kubelet.Succeed(ctx, pod.Name))
	w.check(t, w.waitState("real-pi-1", "COMPLETED"))
	_, pod2 := w.runAttempt(t, "real-pi-2", "")
	require.NoError(t, w.kubelet.Succeed(ctx, pod2.Name))
	w.check(t, w.waitState("real-pi-2", "COMPLETED"))
	w.requireStates(t, "real-pi-2", "SUSPENDED SUBMITTED RUNNING COMPLETED")
}
