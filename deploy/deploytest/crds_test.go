package deploytest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The CRD files make generate writes; the chart ships copies (hack/helm-sync-crds.sh).
var crdFiles = map[string]string{
	"SparkApplication":          "sparkoperator.k8s.io_sparkapplications.yaml",
	"ScheduledSparkApplication": "sparkoperator.k8s.io_scheduledsparkapplications.yaml",
	"SparkConnect":              "sparkoperator.k8s.io_sparkconnects.yaml",
	"SparkCluster":              "spark.apache.org_sparkclusters.yaml",
}

// optInCRD is Apache's SparkApplication, which the chart does not install: beside Kubeflow's it
// would take the bare name `kubectl get sparkapp` (docs/apache.md).
const optInCRD = "spark.apache.org_sparkapplications.yaml"

func yamlFileNames(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	return names
}

func TestChartShipsTheGeneratedCRDs(t *testing.T) {
	root := repoRoot(t)
	generated := yamlFileNames(t, filepath.Join(root, "crds"))
	for _, name := range crdFiles {
		require.Contains(t, generated, name, "crds/ lacks a CRD: run make generate")
	}
	shipped := yamlFileNames(t, filepath.Join(root, "chart", "crds"))
	want := slices.DeleteFunc(slices.Clone(generated), func(name string) bool { return name == optInCRD })
	require.Equal(t, want, shipped, "chart/crds/ must hold the files of crds/ but %s: run hack/helm-sync-crds.sh", optInCRD)
	for _, name := range shipped {
		want := readFile(t, filepath.Join(root, "crds", name))
		got := readFile(t, filepath.Join(root, "chart", "crds", name))
		assert.Equal(t, string(want), string(got), "chart/crds/%s differs from crds/%s: run hack/helm-sync-crds.sh", name, name)
	}
}

// loadCRD reads the generated CRD for kind.
func loadCRD(t *testing.T, kind string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	path := filepath.Join(repoRoot(t), "crds", crdFiles[kind])
	data, err := os.ReadFile(path)
	require.NoError(t, err, "the CRD for %s is missing: run make generate", kind)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.Unmarshal(data, crd), path)
	require.Equal(t, kind, crd.Spec.Names.Kind, path)
	return crd
}

// crdVersionSchema is the schema of version in crd; it fails the test when the CRD does not serve
// that version.
func crdVersionSchema(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			require.True(t, v.Served, "%s %s is not served", crd.Name, version)
			require.NotNil(t, v.Schema, "%s %s has no schema", crd.Name, version)
			require.NotNil(t, v.Schema.OpenAPIV3Schema, "%s %s has no schema", crd.Name, version)
			return v.Schema.OpenAPIV3Schema
		}
	}
	t.Fatalf("%s has no version %s", crd.Name, version)
	return nil
}
