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
		{name: "kubeflow simulated", o: options{operator: operatorKubeflow, kubeflowOperator: release, simulate: true}},
		{name: "kubeflow on the real node", o: options{operator: operatorKubeflow, kubeflowOperator: release, realNode: "/node"}, err: "not the operator's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.checkOperator()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("checkOperator() = %v, want an error with %q", err, tc.err)
			}
		})
	}
}

func TestCheckApache(t *testing.T) {
	repo := t.TempDir()
	chart := filepath.Join(repo, "chart")
	if err := os.MkdirAll(chart, 0o755); err != nil {
		t.Fatal(err)
	}
	noCRD := filepath.Join(t.TempDir(), "chart")
	if err := os.MkdirAll(filepath.Join(repo, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "crds", "spark.apache.org_sparkapplications.yaml"), []byte("kind: CustomResourceDefinition\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    options
		err  string
	}{
		{name: "not asked for", o: options{operator: operatorSparkhooks, chart: noCRD}},
		{name: "the chart and its CRD", o: options{operator: operatorSparkhooks, chart: chart, apache: true}},
		{name: "no CRD next to the chart", o: options{operator: operatorSparkhooks, chart: noCRD, apache: true}, err: "no CRD of Apache's SparkApplication"},
		{name: "Kubeflow's operator", o: options{operator: operatorKubeflow, chart: chart, apache: true}, err: "not with --operator kubeflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.checkApache()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("checkApache() = %v, want an error with %q", err, tc.err)
			}
		})
	}
	o := options{chart: chart, apache: true}
	dir, err := apacheCRDDir(&o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "spark.apache.org_sparkapplications.yaml")); err != nil || string(data) != "kind: CustomResourceDefinition\n" {
		t.Errorf("the CRD directory holds %q, %v; want the chart's CRD", data, err)
	}
}

func TestFirstStepsNameTheGroup(t *testing.T) {
	for _, apache := range []bool{false, true} {
		steps := firstSteps(apache)
		if !strings.Contains(steps, "kubectl get sparkapplications.sparkoperator.k8s.io") {
			t.Errorf("firstSteps(%v) does not name Kubeflow's group:\n%s", apache, steps)
		}
		if got := strings.Contains(steps, "kubectl get sparkapplications.spark.apache.org"); got != apache {
			t.Errorf("firstSteps(%v) names Apache's group: %v\n%s", apache, got, steps)
		}
	}
}
