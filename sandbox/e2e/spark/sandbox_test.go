//go:build e2e

package spark

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestPodSandbox checks what a pod of the stock Spark image sees, before any Spark runs: the
// image's user, its Java, the service-account credentials at the standard path (Debian's
// /var/run is a link to /run), and the API server at kubernetes.default.svc:443 with a
// certificate the mounted CA verifies and a token it accepts.
func TestPodSandbox(t *testing.T) {
	parallelOnRealNode(t)
	n := newNamespace(t, "sandbox")
	n.apply(`apiVersion: v1
kind: Pod
metadata:
  name: probe
spec:
  serviceAccountName: spark
  restartPolicy: Never
  containers:
  - name: main
    image: apache/spark:3.5.3
    command: ["/bin/bash", "-c"]
    args:
    - |
      sa=/var/run/secrets/kubernetes.io/serviceaccount
      echo "user=$(id -un):$(id -u)"
      echo "home=$HOME"
      echo "namespace=$(cat $sa/namespace)"
      echo "java=$("$JAVA_HOME/bin/java" -version 2>&1 | grep -v "^Picked up" | head -1)"
      echo "api=$(curl -sS -o /dev/null -w '%{http_code}' --cacert $sa/ca.crt -H "Authorization: Bearer $(cat $sa/token)" \
        https://kubernetes.default.svc/api/v1/namespaces/$(cat $sa/namespace)/pods)"
      echo "anonymous=$(curl -sS -o /dev/null -w '%{http_code}' --cacert $sa/ca.crt https://kubernetes.default.svc.cluster.local/api/v1/namespaces/default/pods)"
`)
	n.waitFor(pods, "probe", "phase Succeeded", time.Minute, func(u *unstructured.Unstructured) bool {
		phase := harness.NestedString(u, "status", "phase")
		if phase == "Failed" {
			t.Fatalf("probe pod failed:\n%s", n.logs("probe", ""))
		}
		return phase == "Succeeded"
	})
	got := map[string]string{}
	log := n.logs("probe", "")
	for _, line := range strings.Split(log, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	for k, want := range map[string]string{"user": "spark:185", "home": "/home/spark", "namespace": n.name, "api": "200", "anonymous": "403"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q\n%s", k, got[k], want, log)
		}
	}
	if !strings.Contains(got["java"], `version "17`) {
		t.Errorf("java -version: %q, want Java 17", got["java"])
	}
}
