//go:build e2e

package spark

import (
	"bytes"
	"errors"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// realNodeCoreRequest is the CPU a Spark pod asks for on the real node (SPARKHOOKS_E2E_NODE=
// containerd) when its manifest does not say: the node is this machine, two cores, and the
// examples ask for a core per pod, as on a cluster's nodes. A user with small nodes does the
// same; limits stay as written, and the node enforces them.
const realNodeCoreRequest = "250m"

// forNode returns a manifest as applied on the suite's node: unchanged on the process kubelet
// (which offers the scheduler 32 cores), with realNodeCoreRequest for the driver and executors
// of every SparkApplication that names no coreRequest on the real node.
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
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "SparkApplication" {
			for _, role := range []string{"driver", "executor"} {
				if _, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", role, "coreRequest"); !found {
					if err := unstructured.SetNestedField(obj, realNodeCoreRequest, "spec", role, "coreRequest"); err != nil {
						return nil, err
					}
				}
			}
		}
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return bytes.Join(out, []byte("---\n")), nil
}

// exampleCoreRequest is the CPU request of a Spark pod of an example that asks for one core.
func exampleCoreRequest() string {
	if shared.stack.Node != nil {
		return realNodeCoreRequest
	}
	return "1"
}
