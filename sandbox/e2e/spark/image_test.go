//go:build e2e

package spark

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/ociimage"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// TestHookServerRunsTheBuiltImage: on the real node, the chart's hook server runs from the image
// make image builds (bin/image.tar), with its digest, as the user the Dockerfile names, and
// serves (every other real-node test goes through it).
func TestHookServerRunsTheBuiltImage(t *testing.T) {
	requireRealNode(t)
	parallelOnRealNode(t)
	_, digest, err := ociimage.ArchiveImage(os.Getenv("SPARKHOOKS_IMAGE_ARCHIVE"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(shared.stack.Admin)
	if err != nil {
		t.Fatal(err)
	}
	// A test's helm upgrade may still be rolling the server out: wait for a ready pod, and judge
	// the containers that have started (a container being created has no image ID yet).
	pods, err := harness.WaitFor(context.Background(), 2*time.Minute, "a ready hook server pod", func(ctx context.Context) (*corev1.PodList, error) {
		return client.CoreV1().Pods(stack.SparkhooksNamespace).List(ctx, metav1.ListOptions{})
	}, func(pods *corev1.PodList) bool { return readyServers(pods) > 0 }, nil)
	if err != nil {
		t.Fatalf("%s: %v", stack.SparkhooksNamespace, err)
	}
	for _, pod := range pods.Items {
		for _, c := range pod.Status.ContainerStatuses {
			if !strings.HasPrefix(c.Image, "ghcr.io/sparkhooks/sparkhooks:") || c.ImageID == "" {
				continue
			}
			if !strings.HasSuffix(c.ImageID, "@"+digest.String()) && c.ImageID != digest.String() {
				t.Errorf("pod %s runs %s as image %s, want the built image %s", pod.Name, c.Image, c.ImageID, digest)
			}
		}
	}
}

// readyServers counts the running, ready hook server containers.
func readyServers(pods *corev1.PodList) int {
	servers := 0
	for _, pod := range pods.Items {
		for _, c := range pod.Status.ContainerStatuses {
			if strings.HasPrefix(c.Image, "ghcr.io/sparkhooks/sparkhooks:") && pod.Status.Phase == corev1.PodRunning && c.Ready {
				servers++
			}
		}
	}
	return servers
}
