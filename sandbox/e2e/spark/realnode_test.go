//go:build e2e

package spark

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// realNodeCoreRequest is the CPU a Spark pod asks for on the real node (SPARKHOOKS_E2E_NODE=
// containerd) when its manifest does not say: the node is this machine, two cores, and the
// examples ask for a core per pod, as on a cluster's nodes. A user with small nodes does the
// same; limits stay as written, and the node enforces them. A tenth of a core lets the
// applications the tests run side by side (parallelOnRealNode) be scheduled whole: with more,
// drivers could take the cores their executors wait for.
const realNodeCoreRequest = "100m"

// forNode returns a manifest as applied on the suite's node: unchanged on the process kubelet
// (which offers the scheduler 32 cores), with realNodeCoreRequest on the real node for the
// driver and executors of every SparkApplication that names no coreRequest, for the server and
// executors of every SparkConnect whose sparkConf names no request, and for the master and
// workers of a SparkCluster whose pod templates request CPU.
func forNode(manifest []byte) ([]byte, error) {
	if shared.stack.Node == nil {
		return manifest, nil
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var out [][]byte
	for {
		obj := map[string]any{}
		if err := decoder.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		var err error
		switch (&unstructured.Unstructured{Object: obj}).GetKind() {
		case "SparkApplication":
			err = smallSparkApplication(obj)
		case "SparkConnect":
			err = smallSparkConnect(obj)
		case "SparkCluster":
			err = smallSparkCluster(obj)
		}
		if err != nil {
			return nil, err
		}
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return bytes.Join(out, []byte("---\n")), nil
}

func smallSparkApplication(obj map[string]any) error {
	for _, role := range []string{"driver", "executor"} {
		if _, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", role, "coreRequest"); !found {
			if err := unstructured.SetNestedField(obj, realNodeCoreRequest, "spec", role, "coreRequest"); err != nil {
				return err
			}
		}
	}
	return nil
}

// smallSparkConnect asks for realNodeCoreRequest as a SparkConnect's user does, through the
// server's Spark properties: the server is a driver, whose CPU request Spark takes from them over
// its pod template's.
func smallSparkConnect(obj map[string]any) error {
	for _, role := range []string{"driver", "executor"} {
		key := "spark.kubernetes." + role + ".request.cores"
		if _, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "sparkConf", key); !found {
			if err := unstructured.SetNestedField(obj, realNodeCoreRequest, "spec", "sparkConf", key); err != nil {
				return err
			}
		}
	}
	return nil
}

// smallSparkCluster asks for realNodeCoreRequest for the master and workers whose pod templates
// request CPU.
func smallSparkCluster(obj map[string]any) error {
	for _, role := range []string{"masterSpec", "workerSpec"} {
		path := []string{"spec", role, "statefulSetSpec", "template", "spec", "containers"}
		containers, _, _ := unstructured.NestedSlice(obj, path...)
		for _, c := range containers {
			c := c.(map[string]any)
			if _, found, _ := unstructured.NestedFieldNoCopy(c, "resources", "requests", "cpu"); found {
				if err := unstructured.SetNestedField(c, realNodeCoreRequest, "resources", "requests", "cpu"); err != nil {
					return err
				}
			}
		}
		if len(containers) > 0 {
			if err := unstructured.SetNestedSlice(obj, containers, path...); err != nil {
				return err
			}
		}
	}
	return nil
}

// parallelOnRealNode runs the test beside the others that call it, on the real node only. There
// the scheduler admits pods by the CPU and memory they request from the machine's, and the
// node holds each to its limits, so applications can share the machine; the process kubelet
// offers 32 cores and limits nothing, so its tests run one at a time (see namespace).
func parallelOnRealNode(t *testing.T) {
	if shared.stack.Node != nil {
		t.Parallel()
	}
}

// requireRealNode skips a test of what only the real node does (limits the kernel enforces,
// cluster DNS, Service IPs) when the suite runs on the process kubelet.
func requireRealNode(t *testing.T) {
	t.Helper()
	if shared.stack.Node == nil {
		t.Skip("needs the real node: SPARKHOOKS_E2E_NODE=containerd (make e2e runs it)")
	}
}

// exampleCoreRequest is the CPU request of a Spark pod of an example that asks for one core.
func exampleCoreRequest() string {
	if shared.stack.Node != nil {
		return realNodeCoreRequest
	}
	return "1"
}
