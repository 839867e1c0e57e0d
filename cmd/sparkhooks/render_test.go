package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

const renderApp = `# a comment before the document
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi
spec:
  type: Scala
  mode: cluster
  image: apache/spark:3.5.3
  sparkVersion: 3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  driver:
    serviceAccount: spark
  executor:
    instances: 2
`

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func renderArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), append([]string{"render"}, args...), &out, &errOut)
	return out.String(), err
}

func TestRenderPrintsWhatTheSyncHookWouldCreate(t *testing.T) {
	file := writeFile(t, renderApp)
	out, err := renderArgs(t, "-f", file, "-o", "json", "-now", "2026-03-08T06:00:00Z")
	require.NoError(t, err)

	var resp struct {
		Status struct {
			ApplicationState   struct{ State string } `json:"applicationState"`
			SubmissionAttempts int                    `json:"submissionAttempts"`
		} `json:"status"`
		Children []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		} `json:"children"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp))
	assert.Equal(t, "SUBMITTED", resp.Status.ApplicationState.State)
	assert.Equal(t, 1, resp.Status.SubmissionAttempts)
	kinds := map[string]string{}
	for _, c := range resp.Children {
		kinds[c.Kind] = c.Metadata.Name
		assert.Equal(t, "default", c.Metadata.Namespace, "a file without a namespace renders into default, as kubectl apply would")
	}
	assert.Equal(t, "spark-pi-driver", kinds["Pod"])
	assert.Contains(t, kinds, "ConfigMap")
	assert.Contains(t, kinds, "Service")

	again, err := renderArgs(t, "-f", file, "-o", "json", "-now", "2026-03-08T06:00:00Z")
	require.NoError(t, err)
	assert.Equal(t, out, again, "render is deterministic for a given clock")
}

func TestRenderYAMLMultiDocument(t *testing.T) {
	second := bytes.ReplaceAll([]byte(renderApp), []byte("name: spark-pi"), []byte("name: spark-pi-2"))
	file := writeFile(t, renderApp+"---\n"+string(second))
	out, err := renderArgs(t, "-f", file)
	require.NoError(t, err)
	docs := bytes.Split([]byte(out), []byte("\n---\n"))
	require.Len(t, docs, 2)
	for _, doc := range docs {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(doc, &m))
		assert.Contains(t, m, "children")
	}
}

func TestRenderRejectsInvalidFiles(t *testing.T) {
	for name, tc := range map[string]struct {
		content string
		want    string
	}{
		"invalid spec":   {renderApp + "  dynamicAllocation:\n    enabled: true\n    minExecutors: 4\n    maxExecutors: 2\n", "spec.dynamicAllocation"},
		"wrong kind":     {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n", `found "Pod"`},
		"no name":        {"apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nspec: {}\n", "metadata.name is required"},
		"not yaml":       {"kind: [unclosed\n", "document 1"},
		"empty document": {"# nothing here\n", "no SparkApplication found"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := renderArgs(t, "-f", writeFile(t, tc.content))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := renderArgs(t)
	assert.ErrorContains(t, err, "-f")
	_, err = renderArgs(t, "-f", "x", "-o", "xml")
	assert.ErrorContains(t, err, "yaml or json")
}

func TestRenderScheduledSparkApplication(t *testing.T) {
	app := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata:\n  name: nightly\nspec:\n  schedule: \"0 2 * * *\"\n  template:\n" +
		indent(renderApp[bytes.Index([]byte(renderApp), []byte("spec:\n"))+len("spec:\n"):])
	out, err := renderArgs(t, "-f", writeFile(t, app), "-o", "json", "-now", "2026-03-08T06:00:00Z")
	require.NoError(t, err)
	var resp struct {
		Status struct {
			NextRun string `json:"nextRun"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp))
	assert.Equal(t, "2026-03-09T02:00:00Z", resp.Status.NextRun)

	bad := bytes.ReplaceAll([]byte(app), []byte(`"0 2 * * *"`), []byte(`"61 * * * *"`))
	_, err = renderArgs(t, "-f", writeFile(t, string(bad)))
	assert.ErrorContains(t, err, "ScheduledSparkApplication nightly is invalid")
}

func indent(s string) string {
	return "  " + string(bytes.ReplaceAll([]byte(s), []byte("\n  "), []byte("\n    ")))
}

// Every example renders; a Volcano one only as a registration that manages PodGroups would,
// and otherwise says how to get one.
func TestRenderEveryExample(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	apache, err := filepath.Glob(filepath.Join("..", "..", "examples", "apache", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, apache)
	for _, file := range append(files, apache...) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, err := renderArgs(t, "-f", file, "-o", "json", "-now", "2026-03-08T06:00:00Z")
			require.NoError(t, err)
			assert.Contains(t, out, `"status"`)
		})
	}

	volcano := writeFile(t, strings.Replace(renderApp, "  driver:\n", "  batchScheduler: volcano\n  driver:\n", 1))
	_, err = renderArgs(t, "-f", volcano)
	assert.ErrorContains(t, err, "metacontroller.volcanoPodGroups")
	out, err := renderArgs(t, "-f", volcano, "--volcano-podgroups", "-o", "json")
	require.NoError(t, err)
	assert.Contains(t, out, `"kind": "PodGroup"`)
}

// An application with no batch scheduler of its own, under an operator whose default is a
// kube-scheduler profile with the coscheduling plugin, renders with a scheduler-plugins
// PodGroup only where the registration declares them.
func TestRenderKubeSchedulerPodGroup(t *testing.T) {
	app := writeFile(t, renderApp)
	operator := []string{"--kube-scheduler-names", "scheduler-plugins-scheduler, other", "--default-batch-scheduler", "scheduler-plugins-scheduler"}
	_, err := renderArgs(t, append([]string{"-f", app}, operator...)...)
	assert.ErrorContains(t, err, "metacontroller.schedulerPluginsPodGroups")

	out, err := renderArgs(t, append([]string{"-f", app, "-o", "json", "--scheduler-plugins-podgroups"}, operator...)...)
	require.NoError(t, err)
	var rendered struct {
		Children []map[string]any `json:"children"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rendered))
	byKind := map[string]map[string]any{}
	for _, child := range rendered.Children {
		byKind[child["kind"].(string)] = child
	}
	require.Contains(t, byKind, "PodGroup")
	assert.Equal(t, "scheduling.x-k8s.io/v1alpha1", byKind["PodGroup"]["apiVersion"])
	pgName := byKind["PodGroup"]["metadata"].(map[string]any)["name"]
	driverPod := byKind["Pod"]
	assert.Equal(t, pgName, driverPod["metadata"].(map[string]any)["labels"].(map[string]any)["scheduling.x-k8s.io/pod-group"])
	assert.Equal(t, "scheduler-plugins-scheduler", driverPod["spec"].(map[string]any)["schedulerName"])
	assert.Contains(t, byKind["ConfigMap"]["data"].(map[string]any)["spark.properties"],
		"spark.kubernetes.executor.label.scheduling.x-k8s.io/pod-group="+pgName.(string))

	_, err = renderArgs(t, "-f", app, "--default-batch-scheduler", "coscheduler")
	assert.ErrorContains(t, err, `--default-batch-scheduler "coscheduler" is neither volcano, yunikorn nor one of --kube-scheduler-names`)
}

// The routes render only as registrations that declare them would answer: a SparkApplication's
// UI HTTPRoute from the operator's defaults, a SparkConnect's GRPCRoute from its spec.
func TestRenderGatewayRoutes(t *testing.T) {
	kinds := func(out string) []string {
		var rendered struct {
			Children []map[string]any `json:"children"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rendered))
		var got []string
		for _, child := range rendered.Children {
			got = append(got, child["kind"].(string))
		}
		return got
	}
	app := writeFile(t, renderApp)
	operator := []string{"-f", app, "-o", "json", "--ui-http-route", `--gateway-parent-refs=[{"name":"public"}]`}
	out, err := renderArgs(t, operator...)
	require.NoError(t, err)
	assert.NotContains(t, kinds(out), "HTTPRoute", "not declared")
	out, err = renderArgs(t, append(operator, "--gateway-api")...)
	require.NoError(t, err)
	assert.Contains(t, kinds(out), "HTTPRoute")

	connect := filepath.Join("..", "..", "examples", "spark-connect.yaml")
	doc, err := os.ReadFile(connect)
	require.NoError(t, err)
	routed := writeFile(t, strings.Replace(string(doc), "  server:\n", "  server:\n    grpcRoute:\n      parentRefs: [{name: public}]\n      hostnames: [connect.example.com]\n", 1))
	out, err = renderArgs(t, "-f", routed, "-o", "json", "--gateway-api")
	require.NoError(t, err)
	assert.Contains(t, kinds(out), "GRPCRoute")
}

// The operator's default event log reaches the rendered driver (its properties and the volume
// it is on) and the status names the History Server page; settings that cannot work are refused
// before anything is rendered.
func TestRenderDefaultEventLog(t *testing.T) {
	app := writeFile(t, renderApp)
	out, err := renderArgs(t, "-f", app, "-o", "json",
		"--default-event-log-dir", "file:/spark-events",
		"--default-event-log-volume", `{"persistentVolumeClaim":{"claimName":"spark-events"}}`,
		"--history-server-url", "http://spark-history.example.com:18080")
	require.NoError(t, err)
	var rendered struct {
		Status   map[string]any   `json:"status"`
		Children []map[string]any `json:"children"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rendered))
	assert.Regexp(t, `^http://spark-history\.example\.com:18080/history/spark-[0-9a-f]{32}/jobs/$`, rendered.Status["historyURL"])
	for _, child := range rendered.Children {
		switch child["kind"] {
		case "ConfigMap":
			assert.Contains(t, child["data"].(map[string]any)["spark.properties"], "spark.eventLog.dir=file\\:/spark-events\n")
		case "Pod":
			assert.Contains(t, string(coretest.MustJSON(t, child["spec"])), `{"name":"spark-event-log","persistentVolumeClaim":{"claimName":"spark-events"}}`)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--default-event-log-dir", "/spark-events"}, "has no scheme"},
		{[]string{"--default-event-log-volume", `{"persistentVolumeClaim":{"claimName":"x"}}`}, "needs an event log dir"},
		{[]string{"--default-event-log-dir", "s3a://logs/events", "--default-event-log-volume", `{"hostPath":{"path":"/x"}}`}, "must be a local directory"},
		{[]string{"--default-event-log-volume", `{"persistentVolumeClaim":{"claimNam":"x"}}`}, "not the JSON this setting takes"},
		{[]string{"--history-server-url", "http://history.example.com"}, "--history-server-url needs --default-event-log-dir"},
		{[]string{"--default-event-log-dir", "s3a://logs/events", "--history-server-url", "history.example.com"}, "is not an http or https URL"},
	} {
		_, err := renderArgs(t, append([]string{"-f", app}, tc.args...)...)
		assert.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
}
