package sparkctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

const piYAML = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi
spec:
  type: Scala
  mode: cluster
  image: apache/spark:3.5.3
  sparkVersion: 3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: %s
  deps:
    jars: [%s]
  driver:
    serviceAccount: spark
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestCreateFromFile(t *testing.T) {
	dir := t.TempDir()
	pi := writeFile(t, dir, "pi.yaml", fmt.Sprintf(piYAML, "local:///opt/spark/examples/jars/spark-examples.jar", "https://artifacts.example.com/x.jar"))
	elsewhere := writeFile(t, dir, "elsewhere.yaml", strings.Replace(fmt.Sprintf(piYAML, "local:///x.jar", "local:///y.jar"), "name: spark-pi", "name: spark-pi\n  namespace: team-b", 1))
	two := writeFile(t, dir, "two.yaml", fmt.Sprintf(piYAML, "local:///x.jar", "local:///y.jar")+"---\n"+
		"apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: nightly}\nspec: {schedule: '@daily', template: {type: Scala}}\n")
	pod := writeFile(t, dir, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
	local := writeFile(t, dir, "local.yaml", fmt.Sprintf(piYAML, "local:///x.jar", "./lib/dep.jar"))
	for _, tc := range []struct {
		name     string
		args     []string
		existing bool
		wantCode int
		wantOut  string
		wantErr  string
		wantNS   string
	}{
		{"into the context's namespace", []string{"create", "-f", pi}, false, 0, "sparkapplication.sparkoperator.k8s.io/spark-pi created\n", "", "default"},
		{"into -n", []string{"create", "-f", pi, "-n", "team-b"}, false, 0, "created", "", "team-b"},
		{"namespace from the file", []string{"create", "-f", elsewhere}, false, 0, "created", "", "team-b"},
		{"file and -n disagree", []string{"create", "-f", elsewhere, "-n", "team-c"}, false, ExitError, "", `is in namespace "team-b", not "team-c" as -n says`, ""},
		{"two objects", []string{"create", "-f", two}, false, 0, "scheduledsparkapplication.sparkoperator.k8s.io/nightly created", "", "default"},
		{"exists", []string{"create", "-f", pi}, true, ExitError, "", `SparkApplication "spark-pi" exists in namespace "default": delete it, or pass --delete`, ""},
		{"exists, --delete", []string{"create", "-f", pi, "--delete"}, true, 0, "created", "sparkapplication.sparkoperator.k8s.io/spark-pi deleted", "default"},
		{"missing file", []string{"create", "-f", filepath.Join(dir, "nope.yaml")}, false, ExitError, "", "nope.yaml: no such file or directory", ""},
		{"not our kind", []string{"create", "-f", pod}, false, ExitError, "", "v1 Pod is not a kind sparkctl creates", ""},
		{"local dependency without --upload-to", []string{"create", "-f", local}, false, ExitError, "", `deps.jars "./lib/dep.jar" is a local file: pass --upload-to`, ""},
		{"-f and --from", []string{"create", "-f", pi, "--from", "x"}, false, ExitUsage, "", "-f and --from exclude each other", ""},
		{"--follow of two objects", []string{"create", "-f", two, "--follow"}, false, ExitUsage, "", "--follow follows one SparkApplication", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.existing {
				old := sparkApp("default", "spark-pi", v1beta2.ApplicationStateCompleted)
				old.UID = "old-uid"
				objs = append(objs, old)
			}
			f := newFixture(t, objs...)
			out, errOut, code := f.run(tc.args...)
			require.Equal(t, tc.wantCode, code, "stderr: %s", errOut)
			assert.Contains(t, out, tc.wantOut)
			assert.Contains(t, errOut, tc.wantErr)
			if code != 0 {
				assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
				return
			}
			app := f.getCustom(kindSparkApp, tc.wantNS, "spark-pi")
			assert.Equal(t, "org.apache.spark.examples.SparkPi", app.Object["spec"].(map[string]any)["mainClass"])
			assert.NotEqual(t, "old-uid", string(app.GetUID()))
		})
	}
}

func TestCreateFromStdin(t *testing.T) {
	f := newFixture(t)
	var out strings.Builder
	env := &Env{Stdin: strings.NewReader(fmt.Sprintf(piYAML, "local:///x.jar", "local:///y.jar")), Stdout: &out, Stderr: &out,
		Connect: func(ConnFlags) (*Clients, error) { return &Clients{Dynamic: f.dyn, Logs: f.logs}, nil }}
	require.Equal(t, 0, Run(t.Context(), env, []string{"create", "-f", "-"}), out.String())
	f.getCustom(kindSparkApp, "default", "spark-pi")
}

func TestCreateWithHadoopConf(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "hadoop")
	require.NoError(t, os.MkdirAll(filepath.Join(conf, "sub"), 0o755))
	writeFile(t, conf, "core-site.xml", "<configuration><property><name>fs.defaultFS</name><value>hdfs://nn:8020</value></property></configuration>\n")
	writeFile(t, conf, "hdfs-site.xml", "<configuration/>\n")
	writeFile(t, conf, "keytab.bin", "\xff\xfe\x00binary")
	pi := writeFile(t, dir, "pi.yaml", fmt.Sprintf(piYAML, "local:///x.jar", "local:///y.jar"))
	ssa := writeFile(t, dir, "ssa.yaml", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: nightly}\nspec: {schedule: '@daily', template: {type: Scala}}\n")

	for _, tc := range []struct {
		name     string
		env      string
		args     []string
		wantKind kind
		wantName string
		field    []string
	}{
		{"HADOOP_CONF_DIR", conf, []string{"create", "-f", pi}, kindSparkApp, "spark-pi", []string{"spec", "hadoopConfigMap"}},
		{"--hadoop-conf-dir", "", []string{"create", "-f", pi, "--hadoop-conf-dir", conf}, kindSparkApp, "spark-pi", []string{"spec", "hadoopConfigMap"}},
		{"a schedule's template", conf, []string{"create", "-f", ssa}, kindScheduled, "nightly", []string{"spec", "template", "hadoopConfigMap"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.getenv["HADOOP_CONF_DIR"] = tc.env
			_, errOut, code := f.run(tc.args...)
			require.Zero(t, code, errOut)
			app := f.getCustom(tc.wantKind, "default", tc.wantName)
			cmName, _, _ := unstructured.NestedString(app.Object, tc.field...)
			assert.Equal(t, tc.wantName+"-hadoop-config", cmName)
			cm, err := f.configMap("default", cmName)
			require.NoError(t, err)
			assert.Equal(t, []string{"core-site.xml", "hdfs-site.xml"}, slices.Sorted(maps.Keys(cm.Data)))
			assert.Contains(t, cm.Data["core-site.xml"], "hdfs://nn:8020")
			assert.Equal(t, []byte("\xff\xfe\x00binary"), cm.BinaryData["keytab.bin"])
			require.Len(t, cm.OwnerReferences, 1)
			ref := cm.OwnerReferences[0]
			assert.Equal(t, app.GetUID(), ref.UID)
			assert.Equal(t, tc.wantKind.Kind, ref.Kind)
			assert.Nil(t, ref.Controller, "a controller reference would let Metacontroller claim and delete it")
			assert.Equal(t, tc.wantName, cm.Labels[LabelHadoopConfigFor])
		})
	}

	t.Run("errors", func(t *testing.T) {
		empty := t.TempDir()
		for args, want := range map[string]string{
			"create -f " + pi + " --hadoop-conf-dir " + filepath.Join(dir, "missing"): "the Hadoop configuration directory: open " + filepath.Join(dir, "missing") + ": no such file or directory",
			"create -f " + pi + " --hadoop-conf-dir " + empty:                         "holds no file",
		} {
			f := newFixture(t)
			_, errOut, code := f.run(strings.Fields(args)...)
			assert.Equal(t, ExitError, code)
			assert.Contains(t, errOut, want)
			_, err := f.dyn.Resource(kindSparkApp.GVR).Namespace("default").Get(t.Context(), "spark-pi", metav1.GetOptions{})
			assert.Error(t, err, "nothing is created when the configuration cannot be read")
		}
	})

	t.Run("--delete replaces the ConfigMap of the old application", func(t *testing.T) {
		old := sparkApp("default", "spark-pi", v1beta2.ApplicationStateCompleted)
		old.UID = "old-uid"
		oldCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "spark-pi-hadoop-config", Namespace: "default", UID: "old-cm",
			OwnerReferences: []metav1.OwnerReference{{Kind: "SparkApplication", Name: "spark-pi", UID: "old-uid"}}}, Data: map[string]string{"old": "x"}}
		f := newFixture(t, old, oldCM)
		f.getenv["HADOOP_CONF_DIR"] = conf
		_, errOut, code := f.run("create", "-f", pi, "--delete")
		require.Zero(t, code, errOut)
		cm, err := f.configMap("default", "spark-pi-hadoop-config")
		require.NoError(t, err)
		assert.NotContains(t, cm.Data, "old")
	})
}

// fakeStager is an object store in memory.
type fakeStager struct {
	mu      sync.Mutex
	scheme  string
	objects map[string][]byte
}

func (s *fakeStager) Upload(_ context.Context, bucket, key, local string, override bool) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[bucket+"/"+key]; ok && !override {
		return false, nil
	}
	data, err := os.ReadFile(local)
	if err != nil {
		return false, err
	}
	s.objects[bucket+"/"+key] = data
	return true, nil
}

func (s *fakeStager) URI(bucket, key string) string { return s.scheme + "://" + bucket + "/" + key }

func TestCreateStagesLocalDependencies(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.MkdirAll("lib", 0o755))
	writeFile(t, dir, "app.jar", "main")
	writeFile(t, filepath.Join(dir, "lib"), "dep.jar", "dep")
	pi := writeFile(t, dir, "pi.yaml", fmt.Sprintf(piYAML, "app.jar", "./lib/dep.jar, file://"+filepath.Join(dir, "lib", "dep.jar")+", https://repo/x.jar, local:///opt/y.jar"))
	s3 := &fakeStager{scheme: "s3a", objects: map[string][]byte{}}
	gs := &fakeStager{scheme: "gs", objects: map[string][]byte{}}

	f := newFixture(t)
	f.stagers = map[string]Stager{"s3": s3, "gs": gs}
	_, errOut, code := f.run("create", "-f", pi, "--upload-to", "s3://bucket/some/prefix")
	require.Zero(t, code, errOut)
	app := f.getCustom(kindSparkApp, "default", "spark-pi")
	main, _, _ := unstructured.NestedString(app.Object, "spec", "mainApplicationFile")
	jars, _, _ := unstructured.NestedStringSlice(app.Object, "spec", "deps", "jars")
	prefix := "bucket/some/prefix/spark-app-dependencies/default/spark-pi/"
	assert.Equal(t, "s3a://"+prefix+"app.jar", main)
	assert.Equal(t, []string{"s3a://" + prefix + "dep.jar", "s3a://" + prefix + "dep.jar", "https://repo/x.jar", "local:///opt/y.jar"}, jars)
	assert.Equal(t, []byte("main"), s3.objects[prefix+"app.jar"])
	assert.Contains(t, errOut, "staged app.jar as s3a://"+prefix+"app.jar")

	// Again, into GCS, with the objects there already: kept without --override, replaced with it.
	gs.objects["b/spark-app-dependencies/default/spark-pi/app.jar"] = []byte("older")
	f = newFixture(t)
	f.stagers = map[string]Stager{"s3": s3, "gs": gs}
	_, errOut, code = f.run("create", "-f", pi, "--upload-to", "gs://b")
	require.Zero(t, code, errOut)
	assert.Contains(t, errOut, "gs://b/spark-app-dependencies/default/spark-pi/app.jar exists, kept (--override replaces it)")
	assert.Equal(t, []byte("older"), gs.objects["b/spark-app-dependencies/default/spark-pi/app.jar"])
	f = newFixture(t)
	f.stagers = map[string]Stager{"s3": s3, "gs": gs}
	_, errOut, code = f.run("create", "-f", pi, "--upload-to", "gs://b", "--override")
	require.Zero(t, code, errOut)
	assert.Equal(t, []byte("main"), gs.objects["b/spark-app-dependencies/default/spark-pi/app.jar"])

	for _, tc := range []struct{ args, want string }{
		{"--upload-to hdfs://nn/x", `--upload-to "hdfs://nn/x": want s3://BUCKET[/PREFIX] or gs://BUCKET[/PREFIX]`},
		{"--upload-to s3://", `--upload-to "s3://"`},
	} {
		f := newFixture(t)
		f.stagers = map[string]Stager{"s3": s3}
		_, errOut, code := f.run(append([]string{"create", "-f", pi}, strings.Fields(tc.args)...)...)
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, errOut, tc.want)
	}
	missing := writeFile(t, dir, "missing.yaml", fmt.Sprintf(piYAML, "nope.jar", "local:///y.jar"))
	f = newFixture(t)
	f.stagers = map[string]Stager{"s3": s3}
	_, errOut, code = f.run("create", "-f", missing, "--upload-to", "s3://b")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "mainApplicationFile: stat nope.jar: no such file or directory")
	f = newFixture(t)
	_, errOut, code = f.run("create", "-f", pi, "--upload-to", "s3://b")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "no stager for s3://")
}

// TestCreateFromScheduledIsARunTheHookKeeps: the run sparkctl makes, taken as Metacontroller
// observes it, is one of the schedule's own runs for its sync hook: kept while it runs, held
// against Forbid, and listed in history once it completes.
func TestCreateFromScheduledIsARunTheHookKeeps(t *testing.T) {
	ssa := scheduled("jobs", "nightly")
	ssa.Spec.ConcurrencyPolicy = v1beta2.ConcurrencyForbid
	f := newFixture(t, ssa)
	out, errOut, code := f.run("create", "--from", "nightly", "-n", "jobs")
	require.Zero(t, code, errOut)
	runName := fmt.Sprintf("nightly-%d", now.Unix())
	assert.Equal(t, "sparkapplication.sparkoperator.k8s.io/"+runName+" created\n", out)
	run := f.getCustom(kindSparkApp, "jobs", runName)
	assert.Equal(t, map[string]string{"team": "analytics", schedule.LabelScheduledAppName: "nightly", "controller-uid": "uid-nightly"}, run.GetLabels())
	assert.Equal(t, now.Format(time.RFC3339), run.GetAnnotations()[schedule.AnnotationScheduledTime])
	owner := metav1.GetControllerOfNoCopy(run)
	require.NotNil(t, owner)
	assert.Equal(t, "uid-nightly", string(owner.UID))
	assert.Equal(t, "ScheduledSparkApplication", owner.Kind)
	want, err := toUnstructured(&ssa.Spec.Template)
	require.NoError(t, err)
	assert.Equal(t, want.Object, run.Object["spec"])

	// The hook's view, a minute later: a run is due now (the schedule says every minute).
	parent := ssa.DeepCopy()
	parent.Spec.Schedule = "* * * * *"
	parent.Status.ScheduleState = v1beta2.ScheduleStateScheduled
	parent.Status.NextRun = metav1.NewTime(now.Add(time.Minute))
	sync := func(state v1beta2.ApplicationStateType) *metacontroller.SyncResponse {
		child := run.DeepCopy()
		require.NoError(t, unstructured.SetNestedField(child.Object, string(state), "status", "applicationState", "state"))
		req := &metacontroller.SyncRequest{
			Parent:   coretest.MustJSON(t, parent),
			Children: metacontroller.ChildMap{schedule.ChildKey: {runName: coretest.MustJSON(t, child.Object)}},
		}
		resp, _, err := schedule.Sync(req, now.Add(time.Minute), schedule.Config{})
		require.NoError(t, err)
		return resp
	}
	names := func(resp *metacontroller.SyncResponse) []string {
		var out []string
		for _, c := range resp.Children {
			var obj struct{ Metadata struct{ Name string } }
			require.NoError(t, json.Unmarshal(coretest.MustJSON(t, c), &obj))
			out = append(out, obj.Metadata.Name)
		}
		return out
	}
	running := sync(v1beta2.ApplicationStateRunning)
	assert.Equal(t, []string{runName}, names(running), "the running run is kept, and Forbid holds the due run back")
	assert.Contains(t, running.Status.(*v1beta2.ScheduledSparkApplicationStatus).Reason, "waits for "+runName)
	done := sync(v1beta2.ApplicationStateCompleted)
	st := done.Status.(*v1beta2.ScheduledSparkApplicationStatus)
	assert.Equal(t, []string{runName}, st.PastSuccessfulRunNames)
	assert.Contains(t, names(done), runName)

	// A name of the user's choosing, and the errors.
	_, errOut, code = f.run("create", "adhoc", "--from", "nightly", "-n", "jobs")
	require.Zero(t, code, errOut)
	assert.Equal(t, "nightly", f.getCustom(kindSparkApp, "jobs", "adhoc").GetLabels()[schedule.LabelScheduledAppName])
	_, errOut, code = f.run("create", "adhoc", "--from", "nightly", "-n", "jobs")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, `SparkApplication "adhoc" exists in namespace "jobs"`)
	_, errOut, code = f.run("create", "--from", "weekly", "-n", "jobs")
	assert.Equal(t, ExitError, code)
	assert.Equal(t, "error: ScheduledSparkApplication \"weekly\" not found in namespace \"jobs\"\n", errOut)
}

func TestCreateFollow(t *testing.T) {
	dir := t.TempDir()
	pi := writeFile(t, dir, "pi.yaml", fmt.Sprintf(piYAML, "local:///x.jar", "local:///y.jar"))
	for _, tc := range []struct {
		name     string
		final    v1beta2.ApplicationStateType
		errMsg   string
		wantCode int
	}{
		{"completed", v1beta2.ApplicationStateCompleted, "", 0},
		{"failed", v1beta2.ApplicationStateFailed, "driver exited 1", ExitAppFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			// The operator's part, played on the fake: each read of the application moves it
			// one step, and the driver pod runs one attempt, then a retry.
			steps := []v1beta2.ApplicationStateType{v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateFailing, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateRunning, tc.final}
			reads := 0
			f.dyn.PrependReactor("get", "sparkapplications", func(action clienttesting.Action) (bool, runtime.Object, error) {
				obj, err := f.dyn.Tracker().Get(kindSparkApp.GVR, "default", "spark-pi")
				if err != nil {
					return true, nil, err
				}
				u := obj.(*unstructured.Unstructured).DeepCopy()
				step := steps[min(reads, len(steps)-1)]
				reads++
				_ = unstructured.SetNestedField(u.Object, string(step), "status", "applicationState", "state")
				_ = unstructured.SetNestedField(u.Object, tc.errMsg, "status", "applicationState", "errorMessage")
				attempt := "1"
				if reads > 4 {
					attempt = "2"
				}
				pod := driverPod("default", "spark-pi-driver", corev1.PodRunning)
				pod.UID = types.UID("attempt-" + attempt)
				_ = f.dyn.Tracker().Delete(podsGVR, "default", "spark-pi-driver")
				if step == v1beta2.ApplicationStateRunning || terminal(step) {
					require.NoError(t, f.dyn.Tracker().Add(unstructuredOf(t, pod)))
				}
				return true, u, nil
			})
			logs := 0
			f.logs = func(_ context.Context, _, _ string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
				logs++
				assert.True(t, opts.Follow)
				return io.NopCloser(strings.NewReader(fmt.Sprintf("log of attempt %d\n", logs))), nil
			}
			out, errOut, code := f.run("create", "-f", pi, "--follow")
			require.Equal(t, tc.wantCode, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Equal(t, "sparkapplication.sparkoperator.k8s.io/spark-pi created\nlog of attempt 1\nlog of attempt 2\n", out)
			assert.Contains(t, errOut, "spark-pi: SUBMITTED\nspark-pi: RUNNING\nspark-pi: FAILING\nspark-pi: PENDING_RERUN\nspark-pi: RUNNING\nspark-pi: "+string(tc.final)+"\n")
			if tc.wantCode != 0 {
				assert.Contains(t, errOut, "error: SparkApplication default/spark-pi FAILED: driver exited 1")
			}
		})
	}
}
