//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// The harness itself, which the scenario tests trust: the scheduler places pods on the fake
// node, the fake kubelet starts them when told, a pod naming another scheduler is bound there
// too, a running pod is deleted gracefully and the kubelet finishes the deletion, and the
// garbage collector takes the executors with their driver.
func TestFakeKubeletPlaysScheduledPods(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "http://127.0.0.1:1")
	ctx := context.Background()

	driver := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "driver"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "spark", Image: "spark:4.0.0"}}},
	}
	_, err := w.core.CoreV1().Pods(w.ns).Create(ctx, driver, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.waitPod("driver", "bound to "+harness.NodeName, func(p *corev1.Pod) bool {
		return p != nil && p.Spec.NodeName == harness.NodeName
	}), w.events("driver"))
	require.NoError(t, w.kubelet.Start(ctx, "driver"))
	pod, err := w.pod("driver")
	require.NoError(t, err)
	assert.Equal(t, corev1.PodRunning, pod.Status.Phase)
	assert.NotEmpty(t, pod.Status.PodIP)
	require.Len(t, pod.Status.ContainerStatuses, 1)
	assert.NotNil(t, pod.Status.ContainerStatuses[0].State.Running)

	executors, err := w.kubelet.AddExecutors(ctx, "driver", 2)
	require.NoError(t, err)
	require.Len(t, executors, 2)

	other := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gang"},
		Spec:       corev1.PodSpec{SchedulerName: "yunikorn", Containers: []corev1.Container{{Name: "spark", Image: "spark:4.0.0"}}},
	}
	_, err = w.core.CoreV1().Pods(w.ns).Create(ctx, other, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.waitPod("gang", "bound to "+harness.NodeName+" for its scheduler", func(p *corev1.Pod) bool {
		return p != nil && p.Spec.NodeName == harness.NodeName
	}))

	require.NoError(t, w.core.CoreV1().Pods(w.ns).Delete(ctx, "driver", metav1.DeleteOptions{}))
	pod, err = w.pod("driver")
	require.NoError(t, err, "a running pod is deleted gracefully")
	assert.NotNil(t, pod.DeletionTimestamp)
	require.NoError(t, w.waitPod("driver", "gone", podGone))
	for _, name := range executors {
		require.NoError(t, w.waitPod(name, "gone with its driver", podGone))
	}
}
