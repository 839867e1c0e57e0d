//go:build e2e

package spark

import (
	"context"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
	pods, err := client.CoreV1().Pods(stack.SparkhooksNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	servers := 0
	for _, pod := range pods.Items {
		for _, c := range pod.Status.ContainerStatuses {
			if !strings.HasPrefix(c.Image, "ghcr.io/sparkhooks/sparkhooks:") {
				continue
			}
			if !strings.HasSuffix(c.ImageID, "@"+digest.String()) && c.ImageID != digest.String() {
				t.Errorf("pod %s runs %s as image %s, want the built image %s", pod.Name, c.Image, c.ImageID, digest)
			}
			if pod.Status.Phase == "Running" && c.Ready {
				servers++
			}
		}
	}
	if servers == 0 {
		t.Fatalf("no ready hook server pod in %s: %+v", stack.SparkhooksNamespace, pods.Items)
	}
}
