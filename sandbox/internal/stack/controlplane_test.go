package stack

import (
	"context"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
)

// TestControlPlane starts etcd and the three control-plane components and checks what only the
// real ones do: the controller-manager's service-account and root-CA publishers fill a new
// namespace, and the API server refuses an invalid Pod and prints tables.
func TestControlPlane(t *testing.T) {
	binDir := os.Getenv("KUBE_BIN_DIR")
	if binDir == "" {
		t.Skip("KUBE_BIN_DIR is not set: build the control plane with make kube")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := StartControlPlane(ctx, ControlPlaneOptions{
		Dir: t.TempDir(), KubeBinDir: binDir, NodeIP: netip.MustParseAddr("192.0.2.1"), Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	// A second one at the same address is refused in one line, before anything starts.
	if _, err := StartControlPlane(ctx, ControlPlaneOptions{Dir: t.TempDir(), KubeBinDir: binDir, Address: cp.Address, Now: time.Now()}); err == nil ||
		err.Error() != cp.Address+" is in use: stop what listens there or choose another address" {
		t.Errorf("a control plane at a taken address: %v", err)
	}
	client, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"serviceaccount default", "configmap kube-root-ca.crt"} {
		kind, name, _ := strings.Cut(what, " ")
		deadline := time.Now().Add(time.Minute)
		for {
			var err error
			if kind == "serviceaccount" {
				_, err = client.CoreV1().ServiceAccounts("default").Get(ctx, name, metav1.GetOptions{})
			} else {
				_, err = client.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
			}
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s in default: %v", what, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	out, err := kubectl.Run(ctx, cp.Kubeconfig, "run", "bad", "--image=busybox", "--overrides", `{"spec":{"containers":[{"name":"UPPER","image":"busybox"}]}}`)
	if err == nil || !strings.Contains(out, "Invalid value") {
		t.Errorf("an invalid pod: %v: %s", err, out)
	}
	// The server's table: a STATUS column kubectl does not know of itself.
	out, err = kubectl.Run(ctx, cp.Kubeconfig, "get", "namespace", "default")
	if err != nil || !strings.Contains(out, "STATUS") || !strings.Contains(out, "Active") {
		t.Errorf("kubectl get namespace prints no server-side table: %v: %s", err, out)
	}
}
