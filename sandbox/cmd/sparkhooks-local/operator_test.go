package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOperator(t *testing.T) {
	release := t.TempDir()
	for _, f := range []string{"spark-operator", "entrypoint.sh", filepath.Join("chart", "Chart.yaml")} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(release, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(release, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		o    options
		err  string
	}{
		{name: "sparkhooks", o: options{operator: operatorSparkhooks}},
		{name: "kubeflow with its release", o: options{operator: operatorKubeflow, kubeflowOperator: release}},
		{name: "an unknown operator", o: options{operator: "spark-on-k8s"}, err: `--operator "spark-on-k8s": want sparkhooks or kubeflow`},
		{name: "kubeflow without a release", o: options{operator: operatorKubeflow}, err: `--kubeflow-operator "" has no spark-operator`},
		{name: "kubeflow with a directory that is no release", o: options{operator: operatorKubeflow, kubeflowOperator: t.TempDir()}, err: "has no spark-operator"},
		{name: "kubeflow simulated", o: options{operator: operatorKubeflow, kubeflowOperator: release, simulate: true}, err: "process kubelet only"},
		{name: "kubeflow on the real node", o: options{operator: operatorKubeflow, kubeflowOperator: release, realNode: "/node"}, err: "process kubelet only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.checkOperator()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("checkOperator() = %v, want an error with %q", err, tc.err)
			}
		})
	}
}
