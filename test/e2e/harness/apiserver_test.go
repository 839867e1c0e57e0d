//go:build e2e

package harness

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func startTestAPIServer(t *testing.T) *APIServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	etcd, err := StartEtcd(dir)
	require.NoError(t, err)
	t.Cleanup(etcd.Stop)
	server, err := StartAPIServer(context.Background(), dir, etcd.ClientURL)
	require.NoError(t, err)
	t.Cleanup(server.Stop)
	_ = ctx
	return server
}

func TestAPIServerServesPodsAndCRDs(t *testing.T) {
	server := startTestAPIServer(t)
	client, err := kubernetes.NewForConfig(server.ClientConfig())
	require.NoError(t, err)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	created, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Equal(t, corev1.PodPending, created.Status.Phase)

	out, err := exec.Command("kubectl", "--kubeconfig", server.Kubeconfig, "apply", "-f", "../../../crds/").CombinedOutput()
	require.NoError(t, err, string(out))
	t.Log(string(out))
	out, err = exec.Command("kubectl", "--kubeconfig", server.Kubeconfig, "get", "pods", "-A").CombinedOutput()
	require.NoError(t, err, string(out))
	t.Log(string(out))
}
