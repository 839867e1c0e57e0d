//go:build e2e

package spark

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// sdkClient creates a Spark Connect session with the Kubeflow SDK, as a notebook would, and
// runs a query on it. The SDK talks to the API server with the pod's service account and, inside
// a cluster, to the server by its Service's cluster DNS name. Its second argument is the
// session's Spark properties, in JSON.
const sdkClient = `
import json, sys
from kubeflow.spark import SparkClient
from kubeflow.common.types import KubernetesBackendConfig
client = SparkClient(KubernetesBackendConfig(namespace=sys.argv[1]))
spark = client.connect(num_executors=1, resources_per_executor={"cpu": "1", "memory": "512Mi"},
                       spark_conf=json.loads(sys.argv[2]), timeout=240)
print("total", spark.range(0, 1000, 1, 4).selectExpr("sum(id)").collect()[0][0])
print("sessions", " ".join(s.name for s in client.list_sessions()))
`

// TestKubeflowSDK runs the Kubeflow SDK (kubeflow 0.4.1, kubeflow.spark.SparkClient) in a pod:
// connect() creates a SparkConnect through sparkhooks, waits for it to be ready, connects and
// runs a query. The server it asks for fetches the Spark Connect jar from Maven Central
// (spark.jars), so the pod network needs egress. On the real node it runs alone, before the
// tests that run side by side, and asks for realNodeCoreRequest through the session's Spark
// properties, as a user with small nodes does: the SDK's server and executor take a core each
// (the CRD's integer cores), and the node's two cores hold the cluster's own pods too.
func TestKubeflowSDK(t *testing.T) {
	if shared.egressErr != nil {
		t.Fatalf("the Kubeflow SDK's Spark Connect server downloads its jar from Maven Central, and pods have no egress: %v", shared.egressErr)
	}
	// privileged: the client's virtualenv comes from this machine through a hostPath volume, which
	// baseline refuses; the SDK itself needs nothing of the sort.
	n := newNamespaceWithLabels(t, "sdk", map[string]string{podSecurityEnforce: "privileged"})
	venv := filepath.Join(shared.imagesDir, "kubeflow-sdk")
	// The client runs as a notebook would: an account of its own with the namespace's edit role,
	// which the chart's aggregated ClusterRole extends to SparkConnects.
	n.apply(fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: notebook
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: notebook-edit
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: edit
subjects:
- kind: ServiceAccount
  name: notebook
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: sdk-client
data:
  client.py: |
%s
---
apiVersion: v1
kind: Pod
metadata:
  name: sdk-client
spec:
  serviceAccountName: notebook
  restartPolicy: Never
  containers:
  - name: client
    image: apache/spark:4.0.1
    command: ["%s/bin/python", "/client/client.py", "%s", '%s']
    volumeMounts:
    - {name: client, mountPath: /client}
    - {name: sdk, mountPath: %s, readOnly: true}
  volumes:
  - name: client
    configMap: {name: sdk-client}
  - name: sdk
    hostPath: {path: %s, type: Directory}
`, indent(sdkClient, "    "), venv, n.name, sdkSparkConf(), venv, venv))
	n.waitFor(pods, "sdk-client", "phase Succeeded", 5*time.Minute, func(pod *unstructured.Unstructured) bool {
		if phase := harness.NestedString(pod, "status", "phase"); phase == "Failed" {
			t.Fatalf("the SDK client failed:\n%s", harness.Tail(n.logs("sdk-client", ""), 40))
		}
		return harness.NestedString(pod, "status", "phase") == "Succeeded"
	})
	log := n.logs("sdk-client", "")
	if !strings.Contains(log, "total 499500") {
		t.Fatalf("the SDK client's query did not answer 499500:\n%s", harness.Tail(log, 40))
	}
	list, err := n.dyn.Resource(sparkConnects).Namespace(n.name).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || harness.NestedString(&list.Items[0], "status", "state") != "Ready" {
		t.Fatalf("want the one SparkConnect the SDK created, Ready: %v", list.Items)
	}
	if !strings.Contains(log, "sessions "+list.Items[0].GetName()) {
		t.Errorf("the SDK lists sessions %q, want %s", log, list.Items[0].GetName())
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

// sdkSparkConf is the Spark properties the SDK's session asks for, in JSON: on the real node the
// CPU requests of its server and executors.
func sdkSparkConf() string {
	if shared.stack.Node == nil {
		return "{}"
	}
	return fmt.Sprintf(`{"spark.kubernetes.driver.request.cores": %[1]q, "spark.kubernetes.executor.request.cores": %[1]q}`, realNodeCoreRequest)
}
