// Package crds holds the CustomResourceDefinitions generated from internal/api/v1beta2 by
// `make generate`; its tests check that they are current, valid for the API server and
// compatible with the Kubeflow Spark Operator's.
package crds

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
)

const (
	sparkApplicationFile          = "sparkoperator.k8s.io_sparkapplications.yaml"
	scheduledSparkApplicationFile = "sparkoperator.k8s.io_scheduledsparkapplications.yaml"
	sparkConnectFile              = "sparkoperator.k8s.io_sparkconnects.yaml"
	sparkClusterFile              = "spark.apache.org_sparkclusters.yaml"

	// lastAppliedLimit is the size cap of all annotations of an object. A client-side
	// `kubectl apply` copies the whole CRD into one, so a bigger CRD cannot be applied that way.
	lastAppliedLimit = 256 * 1024
)

// TestGeneratedFilesUpToDate runs what `make generate` runs into temporary directories and
// fails when crds/ or the deepcopy functions differ from it.
func TestGeneratedFilesUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen through go run")
	}
	controllerGen, crdGenerator := controllerGenFromMakefile(t)

	generated := t.TempDir()
	run(t, "go", "run", controllerGen, crdGenerator, "paths=./internal/api/...", "output:crd:artifacts:config="+generated)
	crdDir := t.TempDir()
	require.NoError(t, os.CopyFS(crdDir, os.DirFS(generated)))
	run(t, "go", "run", "./hack/crdtrim", crdDir)
	assertSameFiles(t, crdDir, ".", "*.yaml")
	for _, file := range []string{sparkApplicationFile, scheduledSparkApplicationFile, sparkConnectFile, sparkClusterFile} {
		assertTrimmedLosslessly(t, loadCRD(t, filepath.Join(generated, file)), loadCRD(t, filepath.Join(crdDir, file)))
	}

	for _, version := range []string{"v1beta2", "v1alpha1", "sparkapache/v1"} {
		objectDir := t.TempDir()
		run(t, "go", "run", controllerGen, "object", "paths=./internal/api/"+version+"/...", "output:object:dir="+objectDir)
		assertSameFiles(t, objectDir, "../internal/api/"+version, "zz_generated.*.go")
	}
}

// controllerGenFromMakefile returns the pinned controller-gen of the Makefile and the crd
// generator with its options as `make generate` runs it, so that the test and the Makefile
// cannot drift apart.
func controllerGenFromMakefile(t *testing.T) (tool, crdGenerator string) {
	t.Helper()
	makefile, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`sigs\.k8s\.io/controller-tools/cmd/controller-gen@\S+`).Find(makefile)
	require.NotNil(t, m, "the Makefile pins no controller-gen version")
	gen := regexp.MustCompile(`\$\(CONTROLLER_GEN\) (crd\S*) `).FindSubmatch(makefile)
	require.NotNil(t, gen, "the Makefile runs no controller-gen crd generator")
	return string(m), string(gen[1])
}

// assertTrimmedLosslessly checks that crdtrim removed nothing the API server acts on: the
// descriptions it kept are controller-gen's, and with every description removed and every list
// type the API server assumes (atomic) made explicit, the CRDs are equal.
func assertTrimmedLosslessly(t *testing.T, generated, trimmed *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	generatedDocs := descriptions(generated)
	kept := descriptions(trimmed)
	for path, doc := range kept {
		assert.Equal(t, generatedDocs[path], doc, "%s: description of %s", trimmed.Name, path)
	}
	assert.Less(t, len(kept), len(generatedDocs), "%s: no description removed", trimmed.Name)

	normalize := func(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
		crd = crd.DeepCopy()
		forEachSchema(crd, func(_ string, s *apiextensionsv1.JSONSchemaProps) {
			s.Description = ""
			if s.Type == "array" && s.XListType == nil {
				s.XListType = ptr.To("atomic")
			}
		})
		return crd
	}
	assert.Equal(t, normalize(generated), normalize(trimmed), "%s: crdtrim changed more than descriptions and implied list types", trimmed.Name)
}

// descriptions maps the path of every schema node with a description to it.
func descriptions(crd *apiextensionsv1.CustomResourceDefinition) map[string]string {
	docs := map[string]string{}
	forEachSchema(crd, func(path string, s *apiextensionsv1.JSONSchemaProps) {
		if s.Description != "" {
			docs[path] = s.Description
		}
	})
	return docs
}

// forEachSchema calls visit with every schema node of every version of crd, and its path
// (property names, [] for array items, {} for map values, anyOf[i] and the like).
func forEachSchema(crd *apiextensionsv1.CustomResourceDefinition, visit func(path string, s *apiextensionsv1.JSONSchemaProps)) {
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			walkSchema(v.Name, v.Schema.OpenAPIV3Schema, visit)
		}
	}
}

func walkSchema(path string, s *apiextensionsv1.JSONSchemaProps, visit func(string, *apiextensionsv1.JSONSchemaProps)) {
	visit(path, s)
	for name, p := range s.Properties {
		walkSchema(path+"."+name, &p, visit)
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(path+"[]", s.Items.Schema, visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(path+"{}", s.AdditionalProperties.Schema, visit)
	}
	if s.Not != nil {
		walkSchema(path+".not", s.Not, visit)
	}
	for key, list := range map[string][]apiextensionsv1.JSONSchemaProps{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf} {
		for i := range list {
			walkSchema(fmt.Sprintf("%s.%s[%d]", path, key, i), &list[i], visit)
		}
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
}

func assertSameFiles(t *testing.T, wantDir, gotDir, pattern string) {
	t.Helper()
	want, err := filepath.Glob(filepath.Join(wantDir, pattern))
	require.NoError(t, err)
	got, err := filepath.Glob(filepath.Join(gotDir, pattern))
	require.NoError(t, err)
	require.Equal(t, baseNames(want), baseNames(got), "files matching %s in %s; run make generate", pattern, gotDir)
	for _, name := range baseNames(want) {
		w, err := os.ReadFile(filepath.Join(wantDir, name))
		require.NoError(t, err)
		g, err := os.ReadFile(filepath.Join(gotDir, name))
		require.NoError(t, err)
		if !bytes.Equal(w, g) {
			t.Errorf("%s is out of date (%s); run make generate", filepath.Join(gotDir, name), firstDifference(w, g))
		}
	}
}

func baseNames(paths []string) []string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	slices.Sort(names)
	return names
}

func firstDifference(want, got []byte) string {
	w, g := bufio.NewScanner(bytes.NewReader(want)), bufio.NewScanner(bytes.NewReader(got))
	w.Buffer(nil, 1<<20)
	g.Buffer(nil, 1<<20)
	for line := 1; ; line++ {
		wok, gok := w.Scan(), g.Scan()
		if !wok && !gok {
			return "same lines, different bytes"
		}
		if wok != gok || w.Text() != g.Text() {
			col := commonPrefix(w.Text(), g.Text())
			return fmt.Sprintf("line %d, column %d: generated %q, checked in %q", line, col+1, excerpt(w.Text(), col), excerpt(g.Text(), col))
		}
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// excerpt returns the part of a line around column col: schema nodes in flow style make lines
// of kilobytes.
func excerpt(line string, col int) string {
	const around = 60
	from, to := max(col-around, 0), min(col+around, len(line))
	return line[from:to]
}

// TestCRDsPassAPIServerValidation decodes both CRDs strictly and runs the API server's own
// CRD validation on them.
func TestCRDsPassAPIServerValidation(t *testing.T) {
	for _, file := range []string{sparkApplicationFile, scheduledSparkApplicationFile} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			crd, err := crdschema.DecodeCRD(data)
			require.NoError(t, err)
			assert.Empty(t, crdschema.ValidateCRD(crd))

			stored, err := json.Marshal(crd)
			require.NoError(t, err)
			t.Logf("%s: %d bytes of YAML, %d bytes of JSON", file, len(data), len(stored))
			assert.Less(t, len(stored), lastAppliedLimit, "too big for a client-side kubectl apply")
		})
	}
}

func TestCRDShape(t *testing.T) {
	type column struct{ name, typ, path string }
	// The printer columns are Kubeflow's exactly (its api/v1beta2 printcolumn markers and the
	// chart's CRDs, v2.5): scripts parse `kubectl get sparkapp`, so order, names and types
	// (strings where an integer or a date would read better) are copied as they are.
	tests := []struct {
		file       string
		group      string
		kind       string
		plural     string
		shortNames []string
		version    string
		columns    []column
	}{
		{
			file: sparkApplicationFile, kind: "SparkApplication", plural: "sparkapplications", shortNames: []string{"sparkapp"}, version: "v1beta2",
			columns: []column{
				{"Suspend", "boolean", ".spec.suspend"},
				{"Status", "string", ".status.applicationState.state"},
				{"Attempts", "string", ".status.executionAttempts"},
				{"Start", "string", ".status.lastSubmissionAttemptTime"},
				{"Finish", "string", ".status.terminationTime"},
				{"Age", "date", ".metadata.creationTimestamp"},
			},
		},
		{
			file: scheduledSparkApplicationFile, kind: "ScheduledSparkApplication", plural: "scheduledsparkapplications", shortNames: []string{"scheduledsparkapp"}, version: "v1beta2",
			columns: []column{
				{"Schedule", "string", ".spec.schedule"},
				{"TimeZone", "string", ".spec.timeZone"},
				{"Suspend", "string", ".spec.suspend"},
				{"Last Run", "date", ".status.lastRun"},
				{"Last Run Name", "string", ".status.lastRunName"},
				{"Age", "date", ".metadata.creationTimestamp"},
			},
		},
		{
			file: sparkConnectFile, kind: "SparkConnect", plural: "sparkconnects", shortNames: []string{"sparkconn"}, version: "v1alpha1",
			columns: []column{
				{"Age", "date", ".metadata.creationTimestamp"},
				{"Status", "string", ".status.state"},
				{"PodName", "string", ".status.server.podName"},
			},
		},
		{
			// The Apache operator's v1 columns.
			file: sparkClusterFile, group: "spark.apache.org", kind: "SparkCluster", plural: "sparkclusters", shortNames: []string{"sparkcluster"}, version: "v1",
			columns: []column{
				{"Age", "date", ".metadata.creationTimestamp"},
				{"Current State", "string", ".status.currentState.currentStateSummary"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			crd := loadCRD(t, tt.file)
			group := tt.group
			if group == "" {
				group = v1beta2.GroupName
			}
			assert.Equal(t, tt.plural+"."+group, crd.Name)
			assert.Equal(t, group, crd.Spec.Group)
			assert.Equal(t, tt.kind, crd.Spec.Names.Kind)
			assert.Equal(t, tt.plural, crd.Spec.Names.Plural)
			assert.Equal(t, tt.shortNames, crd.Spec.Names.ShortNames)
			assert.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
			if strings.HasSuffix(group, ".k8s.io") {
				assert.Contains(t, crd.Annotations, "api-approved.kubernetes.io", "the API server requires it for *.k8s.io groups")
			}

			require.Len(t, crd.Spec.Versions, 1)
			version := crd.Spec.Versions[0]
			assert.Equal(t, tt.version, version.Name)
			assert.True(t, version.Served)
			assert.True(t, version.Storage)
			require.NotNil(t, version.Subresources)
			assert.NotNil(t, version.Subresources.Status, "status subresource")

			var got []column
			for _, c := range version.AdditionalPrinterColumns {
				assert.Zero(t, c.Priority, "column %s shows in plain kubectl get, as in Kubeflow", c.Name)
				got = append(got, column{c.Name, c.Type, c.JSONPath})
			}
			assert.Equal(t, tt.columns, got)
		})
	}
}

// The metadata of objects embedded in a spec (an ephemeral volume's claim template) keeps its
// labels and annotations: controller-gen runs with generateEmbeddedObjectMeta, without which
// the schema declares metadata as an empty object and the API server prunes them.
func TestEmbeddedObjectMetaKept(t *testing.T) {
	volume := map[string]any{
		"name": "scratch",
		"ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"team": "data"}, "annotations": map[string]any{"backup": "never"}},
			"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}}},
		}},
	}
	spec := map[string]any{
		"type": "Scala", "mode": "cluster", "image": "apache/spark:3.5.3", "sparkVersion": "3.5.3",
		"mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples.jar",
		"driver":              map[string]any{}, "executor": map[string]any{},
		"volumes": []any{volume},
	}
	meta := map[string]any{"name": "pi", "namespace": "spark"}
	tests := []struct {
		file string
		obj  map[string]any
	}{
		{sparkApplicationFile, map[string]any{"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication", "metadata": meta, "spec": spec}},
		{scheduledSparkApplicationFile, map[string]any{"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "ScheduledSparkApplication", "metadata": meta,
			"spec": map[string]any{"schedule": "@daily", "template": spec}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			validator, err := crdschema.Load(tt.file)
			require.NoError(t, err)
			assert.Empty(t, crdschema.WithoutCELSkipped(validator.Validate(tt.obj)), "labels and annotations of the claim template are declared")

			volume["ephemeral"].(map[string]any)["volumeClaimTemplate"].(map[string]any)["metadata"].(map[string]any)["ownerTeam"] = "data"
			defer delete(volume["ephemeral"].(map[string]any)["volumeClaimTemplate"].(map[string]any)["metadata"].(map[string]any), "ownerTeam")
			errs := crdschema.WithoutCELSkipped(validator.Validate(tt.obj))
			require.Len(t, errs, 1, "a field ObjectMeta lacks is still unknown")
			assert.Contains(t, errs[0].Field, "volumeClaimTemplate.metadata.ownerTeam")
		})
	}
}

// TestKubeflowFields checks that every field of the Kubeflow operator's v1beta2 API is declared.
func TestKubeflowFields(t *testing.T) {
	appFields := readFieldList(t, "testdata/kubeflow-sparkapplication-fields.txt")
	app := rootSchema(t, sparkApplicationFile)
	for _, path := range appFields {
		assert.NotNil(t, lookup(app, path), "SparkApplication: %s", path)
	}

	scheduled := rootSchema(t, scheduledSparkApplicationFile)
	for _, path := range readFieldList(t, "testdata/kubeflow-scheduledsparkapplication-fields.txt") {
		assert.NotNil(t, lookup(scheduled, path), "ScheduledSparkApplication: %s", path)
	}
	for _, path := range appFields {
		if rest, ok := strings.CutPrefix(path, "spec."); ok {
			assert.NotNil(t, lookup(scheduled, "spec.template."+rest), "ScheduledSparkApplication: spec.template.%s", rest)
		}
	}

	connect := rootSchema(t, sparkConnectFile)
	connectFields := readFieldList(t, "testdata/kubeflow-sparkconnect-fields.txt")
	require.Greater(t, len(connectFields), 30)
	for _, path := range connectFields {
		assert.NotNil(t, lookup(connect, path), "SparkConnect: %s", path)
	}
}

func readFieldList(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var paths []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			paths = append(paths, line)
		}
	}
	require.NotEmpty(t, paths)
	return paths
}

// TestSchemaQuirks checks the schema details the Kubeflow CRDs have and that clients rely on.
func TestSchemaQuirks(t *testing.T) {
	t.Run("unknown fields are kept only in pod templates", func(t *testing.T) {
		assert.Equal(t, []string{"spec.driver.template", "spec.executor.template"},
			preserveUnknownPaths(rootSchema(t, sparkApplicationFile), ""))
		assert.Equal(t, []string{"spec.template.driver.template", "spec.template.executor.template"},
			preserveUnknownPaths(rootSchema(t, scheduledSparkApplicationFile), ""))
	})

	app := rootSchema(t, sparkApplicationFile)
	tests := []struct {
		path  string
		check func(*apiextensionsv1.JSONSchemaProps) bool
		what  string
	}{
		{"spec.batchSchedulerOptions.resources", func(s *apiextensionsv1.JSONSchemaProps) bool {
			v := s.AdditionalProperties.Schema
			return v.XIntOrString && len(v.AnyOf) == 2
		}, "quantities are int-or-string"},
		{"spec.volumes.emptyDir.sizeLimit", func(s *apiextensionsv1.JSONSchemaProps) bool { return s.XIntOrString }, "quantities are int-or-string"},
		{"spec.driver.cores", func(s *apiextensionsv1.JSONSchemaProps) bool {
			return s.Type == "integer" && s.Minimum != nil && *s.Minimum == 1
		}, "cores is an integer >= 1"},
		{"spec.driver.memory", func(s *apiextensionsv1.JSONSchemaProps) bool { return s.Type == "string" }, "memory is a string"},
		{"spec.executor.instances", func(s *apiextensionsv1.JSONSchemaProps) bool {
			return s.Type == "integer" && s.Minimum != nil && *s.Minimum == 1
		}, "instances is an integer >= 1"},
		{"spec.type", func(s *apiextensionsv1.JSONSchemaProps) bool { return len(s.Enum) == 4 }, "type is an enum"},
		{"spec.driver.template", func(s *apiextensionsv1.JSONSchemaProps) bool {
			return s.Type == "object" && len(s.Properties) == 0
		}, "pod templates are schemaless objects"},
		{"status.lastSubmissionAttemptTime", func(s *apiextensionsv1.JSONSchemaProps) bool {
			return s.Nullable && s.Format == "date-time"
		}, "unset times are null"},
		{"status.conditions", func(s *apiextensionsv1.JSONSchemaProps) bool {
			return s.XListType != nil && *s.XListType == "map" && slices.Equal(s.XListMapKeys, []string{"type"})
		}, "conditions are a list map keyed by type"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			s := lookup(app, tt.path)
			require.NotNil(t, s)
			assert.True(t, tt.check(s), tt.what)
		})
	}

	root := rootSchema(t, sparkApplicationFile)
	assert.ElementsMatch(t, []string{"spec"}, root.Required)
	assert.ElementsMatch(t, []string{"type", "sparkVersion", "driver", "executor"}, lookup(root, "spec").Required,
		"Kubeflow's required fields, less mainApplicationFile, which Java and Scala applications may omit")
}

// TestSecondsFieldsBounded checks that every field counted in seconds has the bounds validation
// applies, so that the API server refuses a value the hooks would: the markers repeat
// v1beta2.MaxSeconds as a literal.
func TestSecondsFieldsBounded(t *testing.T) {
	appFields := []struct {
		path    string
		minimum float64
	}{
		{"spec.timeToLiveSeconds", 0},
		{"spec.restartPolicy.onFailureRetryInterval", 1},
		{"spec.restartPolicy.onSubmissionFailureRetryInterval", 1},
		{"spec.timeouts.driverStartSeconds", 1},
		{"spec.timeouts.driverReadySeconds", 1},
		{"spec.timeouts.executorsStartSeconds", 1},
	}
	type field struct {
		file, path string
		minimum    float64
	}
	fields := []field{{scheduledSparkApplicationFile, "spec.startingDeadlineSeconds", 0}}
	for _, f := range appFields {
		fields = append(fields, field{sparkApplicationFile, f.path, f.minimum},
			field{scheduledSparkApplicationFile, "spec.template." + strings.TrimPrefix(f.path, "spec."), f.minimum})
	}
	for _, f := range fields {
		t.Run(f.file+"/"+f.path, func(t *testing.T) {
			s := lookup(rootSchema(t, f.file), f.path)
			require.NotNil(t, s)
			require.NotNil(t, s.Minimum, "minimum")
			assert.Equal(t, f.minimum, *s.Minimum)
			require.NotNil(t, s.Maximum, "maximum")
			assert.Equal(t, float64(v1beta2.MaxSeconds), *s.Maximum)
		})
	}
}

// TestDescriptions checks that our documentation reaches `kubectl explain`, and that crdtrim
// removed the Kubernetes documentation of foreign types and fields.
func TestDescriptions(t *testing.T) {
	app := rootSchema(t, sparkApplicationFile)
	for _, path := range []string{
		"spec.timeouts", "spec.timeouts.driverStartSeconds", "spec.timeouts.driverReadySeconds",
		"spec.timeouts.executorsStartSeconds", "spec.resourceRetainPolicy", "status.conditions",
		"status.observedGeneration", "spec.driver.affinity", "spec.volumes",
	} {
		s := lookup(app, path)
		require.NotNil(t, s, path)
		assert.NotEmpty(t, s.Description, path)
	}
	for _, path := range []string{"apiVersion", "kind", "spec.driver.affinity.nodeAffinity", "spec.volumes.name", "status.conditions.reason"} {
		s := lookup(app, path)
		require.NotNil(t, s, path)
		assert.Empty(t, s.Description, path)
	}
}

// TestTypedObjectsMatchSchema validates Go objects using every part of the API, spec and
// status, against the CRDs, so that the types and the schema cannot disagree.
func TestTypedObjectsMatchSchema(t *testing.T) {
	app := fullSparkApplication()
	validator, err := crdschema.Load(sparkApplicationFile)
	require.NoError(t, err)
	errs, err := validator.ValidateObject(app)
	require.NoError(t, err)
	assert.Empty(t, errs)

	scheduled := &v1beta2.ScheduledSparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindScheduledSparkApplication},
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "spark"},
		Spec: v1beta2.ScheduledSparkApplicationSpec{
			Schedule: "0 3 * * *", TimeZone: "Europe/Paris", Template: app.Spec, Suspend: ptr.To(false),
			ConcurrencyPolicy: v1beta2.ConcurrencyForbid, StartingDeadlineSeconds: ptr.To[int64](600),
			SuccessfulRunHistoryLimit: ptr.To[int32](3), FailedRunHistoryLimit: ptr.To[int32](1),
		},
		Status: v1beta2.ScheduledSparkApplicationStatus{
			LastRun: metav1.NewTime(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)), LastRunName: "nightly-1767322800",
			PastSuccessfulRunNames: []string{"nightly-1767236400"}, ScheduleState: v1beta2.ScheduleStateScheduled,
			ObservedGeneration: 2,
			Conditions: []metav1.Condition{{
				Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "ScheduleValid", Message: "next run at 03:00",
				LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			}},
		},
	}
	scheduledValidator, err := crdschema.Load(scheduledSparkApplicationFile)
	require.NoError(t, err)
	errs, err = scheduledValidator.ValidateObject(scheduled)
	require.NoError(t, err)
	assert.Empty(t, errs)

	t.Run("an empty new status is valid", func(t *testing.T) {
		fresh := fullSparkApplication()
		fresh.Status = v1beta2.SparkApplicationStatus{}
		errs, err := validator.ValidateObject(fresh)
		require.NoError(t, err)
		assert.Empty(t, errs)
	})
	t.Run("the schema catches a bad value", func(t *testing.T) {
		bad := fullSparkApplication()
		bad.Spec.Driver.Cores = ptr.To[int32](0)
		bad.Spec.ResourceRetainPolicy = ptr.To[v1beta2.ResourceRetainPolicy]("Sometimes")
		errs, err := validator.ValidateObject(bad)
		require.NoError(t, err)
		var fields []string
		for _, e := range crdschema.WithoutCELSkipped(errs) {
			fields = append(fields, e.Field)
		}
		assert.Equal(t, []string{"spec.driver.cores", "spec.resourceRetainPolicy"}, fields)
	})
}

func fullSparkApplication() *v1beta2.SparkApplication {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	pod := v1beta2.SparkPodSpec{
		Template:       &corev1.PodTemplateSpec{Spec: corev1.PodSpec{PriorityClassName: "batch"}},
		Cores:          ptr.To[int32](2),
		CoreLimit:      ptr.To("2"),
		Memory:         ptr.To("2g"),
		MemoryLimit:    ptr.To("3Gi"),
		MemoryOverhead: ptr.To("512m"),
		GPU:            &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1},
		Image:          ptr.To("spark:3.5.5"),
		ConfigMaps:     []v1beta2.NamePath{{Name: "app-config", Path: "/etc/app"}},
		Secrets:        []v1beta2.SecretInfo{{Name: "gcp", Path: "/mnt/gcp", Type: v1beta2.SecretTypeGCPServiceAccount}},
		Env:            []corev1.EnvVar{{Name: "MODE", Value: "batch"}, {Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
		EnvVars:        map[string]string{"LEGACY": "1"},
		EnvFrom:        []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "env"}}}},
		EnvSecretKeyRefs: map[string]v1beta2.NameKey{
			"TOKEN": {Name: "creds", Key: "token"},
		},
		Labels:       map[string]string{"team": "data"},
		Annotations:  map[string]string{"example.com/owner": "data"},
		VolumeMounts: []corev1.VolumeMount{{Name: "spark-local-dir-1", MountPath: "/tmp/spark"}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"spark"}}}}},
		}}},
		Tolerations:        []corev1.Toleration{{Key: "spark", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		PodSecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](185), FSGroup: ptr.To[int64](185)},
		SecurityContext:    &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		SchedulerName:      ptr.To("default-scheduler"),
		Sidecars: []corev1.Container{{Name: "fluent-bit", Image: "fluent/fluent-bit:3.0", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		}}},
		InitContainers:                []corev1.Container{{Name: "fetch", Image: "busybox", Command: []string{"true"}}},
		HostNetwork:                   ptr.To(false),
		DNSConfig:                     &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.10"}},
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		ServiceAccount:                ptr.To("spark"),
		HostAliases:                   []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"metastore"}}},
		ShareProcessNamespace:         ptr.To(true),
	}
	return &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindSparkApplication},
		ObjectMeta: metav1.ObjectMeta{Name: "spark-pi", Namespace: "spark", Labels: map[string]string{"app": "pi"}},
		Spec: v1beta2.SparkApplicationSpec{
			Type: v1beta2.SparkApplicationTypeScala, SparkVersion: "3.5.5", Mode: v1beta2.DeployModeCluster,
			ProxyUser: ptr.To("alice"), Image: ptr.To("spark:3.5.5"), ImagePullPolicy: ptr.To("IfNotPresent"),
			ImagePullSecrets: []string{"registry"}, MainClass: ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: ptr.To("local:///opt/spark/examples/jars/spark-examples.jar"), Arguments: []string{"1000"},
			SparkConf:      map[string]string{"spark.ui.port": "4045"},
			HadoopConf:     map[string]string{"fs.s3a.endpoint": "http://minio:9000"},
			SparkConfigMap: ptr.To("spark-conf"), HadoopConfigMap: ptr.To("hadoop-conf"),
			Volumes: []corev1.Volume{{Name: "spark-local-dir-1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				SizeLimit: ptr.To(resource.MustParse("10Gi")),
			}}}},
			Driver: v1beta2.DriverSpec{
				SparkPodSpec: pod, PodName: ptr.To("spark-pi-driver"), CoreRequest: ptr.To("500m"), JavaOptions: ptr.To("-XX:+UseG1GC"),
				Lifecycle:        &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
				KubernetesMaster: ptr.To("https://kubernetes.default.svc"), ServiceAnnotations: map[string]string{"a": "b"},
				ServiceLabels: map[string]string{"c": "d"}, Ports: []v1beta2.Port{{Name: "debug", Protocol: "TCP", ContainerPort: 5005}},
				PriorityClassName: ptr.To("high"),
			},
			Executor: v1beta2.ExecutorSpec{
				SparkPodSpec: pod, Instances: ptr.To[int32](2), CoreRequest: ptr.To("1"), JavaOptions: ptr.To("-XX:+UseG1GC"),
				DeleteOnTermination: ptr.To(true), Ports: []v1beta2.Port{{Name: "metrics", Protocol: "TCP", ContainerPort: 9000}},
				PriorityClassName: ptr.To("low"),
			},
			Deps: v1beta2.Dependencies{
				Jars: []string{"local:///opt/a.jar"}, Files: []string{"s3a://b/f"}, PyFiles: []string{"s3a://b/p.zip"},
				Packages: []string{"org.apache.hadoop:hadoop-aws:3.3.4"}, ExcludePackages: []string{"com.amazonaws:aws-java-sdk-bundle"},
				Repositories: []string{"https://artifacts.example.com/repository"}, Archives: []string{"s3a://b/env.tar.gz#env"},
			},
			RestartPolicy: v1beta2.RestartPolicy{
				Type: v1beta2.RestartPolicyOnFailure, OnSubmissionFailureRetries: ptr.To[int32](2), OnFailureRetries: ptr.To[int32](3),
				OnSubmissionFailureRetryInterval: ptr.To[int64](10), OnFailureRetryInterval: ptr.To[int64](20),
			},
			FailureRetries: ptr.To[int32](1), RetryInterval: ptr.To[int64](1),
			PythonVersion: ptr.To("3"), MemoryOverheadFactor: ptr.To("0.2"),
			Monitoring: &v1beta2.MonitoringSpec{
				ExposeDriverMetrics: true, ExposeExecutorMetrics: true, MetricsProperties: ptr.To("*.sink.jmx.class=org.apache.spark.metrics.sink.JmxSink"),
				MetricsPropertiesFile: ptr.To("/etc/metrics/conf/metrics.properties"),
				Prometheus: &v1beta2.PrometheusSpec{
					JmxExporterJar: "/prometheus/jmx_prometheus_javaagent.jar", Port: ptr.To[int32](8090), PortName: ptr.To("jmx-exporter"),
					ConfigFile: ptr.To("/etc/metrics/conf/prometheus.yaml"), Configuration: ptr.To("rules: []"),
				},
			},
			BatchScheduler:    ptr.To("volcano"),
			TimeToLiveSeconds: ptr.To[int64](86400),
			BatchSchedulerOptions: &v1beta2.BatchSchedulerConfiguration{
				Queue: ptr.To("default"), PriorityClassName: ptr.To("batch"),
				Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			},
			SparkUIOptions: &v1beta2.SparkUIConfiguration{
				ServicePort: ptr.To[int32](4040), ServicePortName: ptr.To("http"), ServiceType: ptr.To(corev1.ServiceTypeClusterIP),
				ServiceAnnotations: map[string]string{"a": "b"}, ServiceLabels: map[string]string{"c": "d"},
				IngressAnnotations: map[string]string{"kubernetes.io/ingress.class": "nginx"},
				IngressTLS:         []networkingv1.IngressTLS{{Hosts: []string{"ui.example.com"}, SecretName: "tls"}},
			},
			DriverIngressOptions: []v1beta2.DriverIngressConfiguration{{
				ServicePort: ptr.To[int32](8080), ServicePortName: ptr.To("http"), ServiceType: ptr.To(corev1.ServiceTypeNodePort),
				IngressURLFormat: "{{$appName}}.example.com", IngressTLS: []networkingv1.IngressTLS{{Hosts: []string{"x.example.com"}}},
			}},
			DynamicAllocation: &v1beta2.DynamicAllocation{
				Enabled: true, InitialExecutors: ptr.To[int32](2), MinExecutors: ptr.To[int32](1), MaxExecutors: ptr.To[int32](10),
				ShuffleTrackingEnabled: ptr.To(true), ShuffleTrackingTimeout: ptr.To[int64](60000),
			},
			Suspend: ptr.To(false), DriverPodDisruptionBudget: ptr.To(true),
			Timeouts: &v1beta2.SparkApplicationTimeouts{
				DriverStartSeconds: ptr.To[int64](300), DriverReadySeconds: ptr.To[int64](120), ExecutorsStartSeconds: ptr.To[int64](600),
			},
			ResourceRetainPolicy: ptr.To(v1beta2.ResourceRetainPolicyOnFailure),
		},
		Status: v1beta2.SparkApplicationStatus{
			SparkApplicationID: "spark-0123456789abcdef0123456789abcdef", SubmissionID: "4a1c7c2e-1b1e-4c55-9d2e-0f0e5b6c7d8e",
			LastSubmissionAttemptTime: now, TerminationTime: now,
			DriverInfo: v1beta2.DriverInfo{
				WebUIServiceName: "spark-pi-ui-svc", WebUIAddress: "10.0.0.5:4040", WebUIPort: 4040,
				WebUIIngressName: "spark-pi-ui-ingress", WebUIIngressAddress: "http://spark-pi.example.com", PodName: "spark-pi-driver",
			},
			AppState:           v1beta2.ApplicationState{State: v1beta2.ApplicationStateFailed, ErrorMessage: "driver container failed with ExitCode: 1"},
			ExecutorState:      map[string]v1beta2.ExecutorState{"spark-pi-exec-1": v1beta2.ExecutorStateFailed},
			ExecutionAttempts:  4,
			SubmissionAttempts: 4,
			ObservedGeneration: 7,
			Conditions: []metav1.Condition{
				{Type: "DriverReady", Status: metav1.ConditionFalse, Reason: "DriverFailed", Message: "exit code 1", LastTransitionTime: now, ObservedGeneration: 7},
				{Type: "TimedOut", Status: metav1.ConditionFalse, Reason: "WithinDeadlines", LastTransitionTime: now},
			},
		},
	}
}

func loadCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	crd, err := crdschema.DecodeCRD(data)
	require.NoError(t, err)
	return crd
}

func rootSchema(t *testing.T, file string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	crd := loadCRD(t, file)
	require.Len(t, crd.Spec.Versions, 1)
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// lookup follows a dotted path of property names, stepping through array items and map values.
func lookup(s *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	for name := range strings.SplitSeq(path, ".") {
		s = elem(s)
		child, ok := s.Properties[name]
		if !ok {
			return nil
		}
		s = &child
	}
	return s
}

func elem(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	for {
		switch {
		case s.Items != nil && s.Items.Schema != nil:
			s = s.Items.Schema
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
		default:
			return s
		}
	}
}

func preserveUnknownPaths(s *apiextensionsv1.JSONSchemaProps, path string) []string {
	var found []string
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		found = append(found, path)
	}
	s = elem(s)
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		child := s.Properties[name]
		childPath := name
		if path != "" {
			childPath = path + "." + name
		}
		found = append(found, preserveUnknownPaths(&child, childPath)...)
	}
	return found
}
