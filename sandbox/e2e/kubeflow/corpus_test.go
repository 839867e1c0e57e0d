//go:build e2e

package kubeflow

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// corpusCase is one SparkApplication of the corpus, applied to the namespace default as its
// file is, unchanged.
type corpusCase struct {
	// name is how docs/kubeflow-compat.md's cases column names the case: where the file comes
	// from (sparkhooks or kubeflow) and its path there.
	name string
	// path is the file.
	path string
	// ci: the case is in the subset make e2e runs.
	ci bool

	// app is the SparkApplication's name and configMaps the ConfigMaps its volumes name, which
	// the case creates empty first, as Kubeflow's own e2e suite does.
	app        string
	configMaps []string
}

// corpus are the cases: our examples and Kubeflow's (v2.5.2), and the applications its test/e2e
// applies, that run on one node with the pinned or preparable images. Left out, with why:
// Kubeflow's volcano, yunikorn and kube-scheduler examples (a batch scheduler this cluster does
// not run), its scheduled example (compared by runs, not yet), its prometheus examples (an image
// with the JMX exporter baked in), ours for other kinds (SparkCluster, SparkConnect, scheduled),
// for S3, Gateway API and SparkR, and Spark 2 (refused by design).
var corpus = []corpusCase{
	{name: "kubeflow:examples/spark-pi.yaml", ci: true},
	{name: "sparkhooks:examples/spark-pi.yaml"},
	{name: "sparkhooks:examples/pyspark-pi.yaml"},
	{name: "kubeflow:examples/spark-pi-python.yaml"},
	{name: "kubeflow:examples/spark-pi-configmap.yaml"},
	{name: "kubeflow:examples/spark-pi-custom-resource.yaml"},
	{name: "kubeflow:examples/spark-pi-emptydir.yaml"},
	{name: "kubeflow:test/e2e/bad_examples/fail-application.yaml"},
	{name: "kubeflow:test/e2e/bad_examples/fail-submission.yaml"},
}

// corpusCases are the cases this run takes: those marked ci, or with
// SPARKHOOKS_KUBEFLOW_CORPUS=all every one, read from their files.
func corpusCases() ([]corpusCase, bool, error) {
	all := os.Getenv("SPARKHOOKS_KUBEFLOW_CORPUS") == "all"
	var cases []corpusCase
	for _, c := range corpus {
		if !all && !c.ci {
			continue
		}
		from, rel, _ := strings.Cut(c.name, ":")
		root := repoRoot
		if from == "kubeflow" {
			root = shared.release
		}
		c.path = filepath.Join(root, rel)
		data, err := os.ReadFile(c.path)
		if err != nil {
			return nil, all, err
		}
		var app struct {
			Metadata struct{ Name, Namespace string }
			Spec     struct {
				Volumes []struct {
					ConfigMap *struct{ Name string } `json:"configMap"`
				}
			}
		}
		if err := yaml.Unmarshal(data, &app); err != nil {
			return nil, all, fmt.Errorf("%s: %w", c.name, err)
		}
		if ns := app.Metadata.Namespace; ns != "" && ns != "default" {
			return nil, all, fmt.Errorf("%s: in namespace %s, want default", c.name, ns)
		}
		c.app = app.Metadata.Name
		for _, v := range app.Spec.Volumes {
			if v.ConfigMap != nil {
				c.configMaps = append(c.configMaps, v.ConfigMap.Name)
			}
		}
		cases = append(cases, c)
	}
	return cases, all, nil
}
