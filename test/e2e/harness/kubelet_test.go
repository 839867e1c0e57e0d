//go:build e2e

package harness

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/internal/localcluster"
)

var kubeletEnv *localcluster.Env

func TestMain(m *testing.M) {
	os.Exit(runKubeletTests(m))
}

func runKubeletTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sparkhooks-harness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	logs, err := os.Create(dir + "/apiserver.log")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logs.Close()
	localcluster.RedirectLogs(logs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubeletEnv, err = localcluster.StartEnv(ctx, localcluster.EnvOptions{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster:", err)
		return 1
	}
	defer kubeletEnv.Stop()
	return m.Run()
}

func TestKubeletRunsAndTerminatesPods(t *testing.T) {
	ns, err := kubeletEnv.CreateNamespace(context.Background(), "kubelet")
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(kubeletEnv.API.ClientConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubelet, err := NewKubelet(kubeletEnv.API.ClientConfig(), ns)
	require.NoError(t, err)
	go func() { _ = kubelet.Run(ctx) }()

	driver := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "driver"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "spark", Image: "spark:4.0.0"}}},
	}
	_, err = client.CoreV1().Pods(ns).Create(ctx, driver, metav1.CreateOptions{})
	require.NoError(t, err)
	waitPod(t, client, ns, "driver", func(p *corev1.Pod) bool { return p != nil && p.Spec.NodeName == NodeName })
	require.NoError(t, kubelet.Start(ctx, "driver"))
	pod, err := client.CoreV1().Pods(ns).Get(ctx, "driver", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.PodRunning, pod.Status.Phase)
	assert.NotEmpty(t, pod.Status.PodIP)
	require.Len(t, pod.Status.ContainerStatuses, 1)
	assert.NotNil(t, pod.Status.ContainerStatuses[0].State.Running)

	executors, err := kubelet.AddExecutors(ctx, "driver", 2)
	require.NoError(t, err)
	require.Len(t, executors, 2)

	require.NoError(t, client.CoreV1().Pods(ns).Delete(ctx, "driver", metav1.DeleteOptions{}))
	pod, err = client.CoreV1().Pods(ns).Get(ctx, "driver", metav1.GetOptions{})
	require.NoError(t, err, "a running pod is deleted gracefully")
	assert.NotNil(t, pod.DeletionTimestamp)
	waitPod(t, client, ns, "driver", func(p *corev1.Pod) bool { return p == nil })
	for _, name := range executors {
		waitPod(t, client, ns, name, func(p *corev1.Pod) bool { return p == nil })
	}
}

func waitPod(t *testing.T, client kubernetes.Interface, ns, name string, gone func(*corev1.Pod) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return gone(nil), nil
		}
		if err != nil {
			return false, err
		}
		return gone(pod), nil
	})
	require.NoError(t, err, "pod %s/%s", ns, name)
}
