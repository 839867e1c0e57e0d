//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

const connectController = "sparkconnect-controller.yaml"

var sparkConnects = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1alpha1", Resource: "sparkconnects"}

// A SparkConnect applied with kubectl goes Provisioning → Ready once its server Pod is ready,
// with the server's Pod and Service in the same status write, as the Kubeflow SDK needs; its
// executors are counted; a deleted server Pod is started again and goes Ready again; deleting
// the SparkConnect removes its children.
func TestSparkConnectServes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, connectController)
	ctx := context.Background()
	out, err := w.kubectl("apply", "-f", filepath.Join(repoRoot, "examples", "spark-connect.yaml"))
	require.NoError(t, err, out)

	const name, server = "spark-connect", "spark-connect-server"
	sc := w.waitConnect(t, name, func(sc *unstructured.Unstructured) bool { return connectState(sc) == "Provisioning" })
	assert.Equal(t, server, harness.NestedString(sc, "status", "server", "podName"))
	pod := w.livePod(t, server, func(*corev1.Pod) bool { return true })
	c := pod.Spec.Containers[0]
	require.NotNil(t, c.ReadinessProbe, "a TCP readiness probe on the gRPC port")
	assert.Equal(t, int32(15002), c.ReadinessProbe.TCPSocket.Port.IntVal)
	svc, err := w.core.CoreV1().Services(w.ns).Get(ctx, server, metav1.GetOptions{})
	require.NoError(t, err, "the client Service <name>-server")
	assert.Contains(t, servicePorts(svc), "spark-connect-server/15002")

	require.NoError(t, w.kubelet.Start(ctx, server))
	sc = w.waitConnect(t, name, func(sc *unstructured.Unstructured) bool { return connectState(sc) == "Ready" })
	assert.Equal(t, server, harness.NestedString(sc, "status", "server", "podName"), "Ready comes with the Pod name")
	assert.Equal(t, server, harness.NestedString(sc, "status", "server", "serviceName"), "Ready comes with the Service name")
	assert.NotEmpty(t, harness.NestedString(sc, "status", "server", "podIp"), "Ready comes with the Pod IP")

	_, err = w.kubelet.AddExecutors(ctx, server, 2)
	require.NoError(t, err)
	w.waitConnect(t, name, func(sc *unstructured.Unstructured) bool {
		return harness.NestedString(sc, "status", "executors", "running") == "2"
	})

	// The server Pod deleted: a new one, Ready again once it is.
	out, err = w.kubectl("delete", "pod", server, "--wait=true")
	require.NoError(t, err, out)
	again := w.livePod(t, server, func(p *corev1.Pod) bool { return p.UID != pod.UID })
	w.waitConnect(t, name, func(sc *unstructured.Unstructured) bool { return connectState(sc) == "NotReady" })
	require.NoError(t, w.kubelet.Start(ctx, again.Name))
	w.waitConnect(t, name, func(sc *unstructured.Unstructured) bool { return connectState(sc) == "Ready" })

	out, err = w.kubectl("delete", "sparkconnect", name, "--wait=true", "--timeout="+waitTimeout.String())
	require.NoError(t, err, out)
	_, err = w.dyn.Resource(sparkConnects).Namespace(w.ns).Get(ctx, name, metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the SparkConnect is gone: %v", err)
	_, err = w.core.CoreV1().Services(w.ns).Get(ctx, server, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the client Service is deleted: %v", err)
	err = wait.PollUntilContextTimeout(ctx, 100e6, waitTimeout, true, func(context.Context) (bool, error) {
		_, err := w.pod(server)
		return apierrors.IsNotFound(err), nil
	})
	require.NoError(t, err, "the server Pod is deleted")
	w.checkChildrenUnchanged(t, "sparkhooks-sparkconnect", sparkConnects, "SparkConnect", name)
}

func (w *world) waitConnect(t *testing.T, name string, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	return w.waitObject(t, sparkConnects, name, ok)
}

// livePod waits for a Pod that exists, is not being deleted, and that ok accepts.
func (w *world) livePod(t *testing.T, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	live := func(p *corev1.Pod) bool { return p != nil && p.DeletionTimestamp == nil && ok(p) }
	require.NoError(t, w.waitPod(name, "a live Pod", live))
	pod, err := w.pod(name)
	require.NoError(t, err)
	return pod
}

func connectState(sc *unstructured.Unstructured) string {
	return harness.NestedString(sc, "status", "state")
}

func statusOf(obj *unstructured.Unstructured) any {
	if obj == nil {
		return nil
	}
	return obj.Object["status"]
}

func servicePorts(svc *corev1.Service) []string {
	var out []string
	for _, p := range svc.Spec.Ports {
		out = append(out, fmt.Sprintf("%s/%d", p.Name, p.Port))
	}
	return out
}
