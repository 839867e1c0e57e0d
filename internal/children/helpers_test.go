package children

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/javaprops"
)

const (
	testNamespace = "team-a"
	testAppName   = "pi"
	testImage     = "apache/spark:3.5.5"
	testJar       = "local:///opt/spark/examples/jars/spark-examples.jar"
	testMainClass = "org.apache.spark.examples.SparkPi"
	testPyFile    = "local:///opt/spark/examples/src/main/python/pi.py"
	testRFile     = "local:///opt/spark/examples/src/main/r/dataframe.R"
)

// testSub is the submission of every test that does not care about attempts.
var testSub = NewSubmission("3f7b1c2e-uid", 1)

// newApp is a small valid Scala application, changed by muts, not yet defaulted.
func newApp(muts ...func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication"},
		ObjectMeta: metav1.ObjectMeta{Name: testAppName, Namespace: testNamespace, UID: "3f7b1c2e-uid"},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			SparkVersion:        "3.5.5",
			Image:               ptr.To(testImage),
			MainClass:           ptr.To(testMainClass),
			MainApplicationFile: ptr.To(testJar),
		},
	}
	for _, m := range muts {
		m(app)
	}
	return app
}

// pythonApp turns the application into a PySpark one.
func pythonApp(app *v1beta2.SparkApplication) {
	app.Spec.Type = v1beta2.SparkApplicationTypePython
	app.Spec.MainClass = nil
	app.Spec.MainApplicationFile = ptr.To(testPyFile)
}

func withVersion(v string) func(*v1beta2.SparkApplication) {
	return func(app *v1beta2.SparkApplication) { app.Spec.SparkVersion = v }
}

func withConf(kv ...string) func(*v1beta2.SparkApplication) {
	return func(app *v1beta2.SparkApplication) {
		if app.Spec.SparkConf == nil {
			app.Spec.SparkConf = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			app.Spec.SparkConf[kv[i]] = kv[i+1]
		}
	}
}

// prepare defaults app and requires it to be valid, as the hooks do before Build.
func prepare(t testing.TB, app *v1beta2.SparkApplication) *v1beta2.SparkApplication {
	t.Helper()
	v1beta2.SetSparkApplicationDefaults(app)
	require.Empty(t, v1beta2.ValidateSparkApplication(app), "the test's application must be valid")
	return app
}

// build defaults, validates and builds app with testSub.
func build(t testing.TB, app *v1beta2.SparkApplication, opts Options) *Objects {
	t.Helper()
	objs, err := Build(prepare(t, app), testSub, opts)
	require.NoError(t, err)
	require.NotNil(t, objs)
	return objs
}

// buildErr builds an application that must fail, and returns the *BuildError.
func buildErr(t testing.TB, app *v1beta2.SparkApplication, opts Options) *BuildError {
	t.Helper()
	v1beta2.SetSparkApplicationDefaults(app)
	objs, err := Build(app, testSub, opts)
	require.Error(t, err)
	require.Nil(t, objs)
	var be *BuildError
	require.True(t, errors.As(err, &be), "want a *BuildError, got %T: %v", err, err)
	return be
}

// sparkProps reads spark.properties of the built ConfigMap with the independent reader of
// properties_test.go.
func sparkProps(t testing.TB, objs *Objects) map[string]string {
	t.Helper()
	require.NotNil(t, objs.ConfigMap)
	text, ok := objs.ConfigMap.Data[propertiesFile]
	require.True(t, ok, "the ConfigMap has no %s", propertiesFile)
	props, err := javaprops.Parse(text)
	require.NoError(t, err)
	return props
}

// driverContainer is the Spark container of the driver Pod.
func driverContainer(t testing.TB, objs *Objects) *corev1.Container {
	t.Helper()
	return namedContainer(t, objs.DriverPod, sparkpod.DriverContainerName)
}

func namedContainer(t testing.TB, pod *corev1.Pod, name string) *corev1.Container {
	t.Helper()
	require.NotNil(t, pod)
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	require.Failf(t, "no container", "pod %q has no container %q", pod.Name, name)
	return nil
}

// executorTemplatePod decodes the executor pod template from the ConfigMap.
func executorTemplatePod(t testing.TB, objs *Objects) *corev1.Pod {
	t.Helper()
	data, ok := objs.ConfigMap.Data[executorTemplateKey]
	require.True(t, ok, "the ConfigMap has no executor pod template")
	var pod corev1.Pod
	require.NoError(t, json.Unmarshal([]byte(data), &pod))
	return &pod
}

func findEnv(env []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			return &env[i]
		}
	}
	return nil
}

// envValue is the value of a plain env var, failing when it is absent or not plain.
func envValue(t testing.TB, ctr *corev1.Container, name string) string {
	t.Helper()
	e := findEnv(ctr.Env, name)
	require.NotNil(t, e, "container %q has no env %s", ctr.Name, name)
	require.Nil(t, e.ValueFrom, "env %s is not a plain value", name)
	return e.Value
}

func envCount(env []corev1.EnvVar, name string) int {
	n := 0
	for _, e := range env {
		if e.Name == name {
			n++
		}
	}
	return n
}

func findVolume(vols []corev1.Volume, name string) *corev1.Volume {
	for i := range vols {
		if vols[i].Name == name {
			return &vols[i]
		}
	}
	return nil
}

func findMount(mounts []corev1.VolumeMount, name string) *corev1.VolumeMount {
	for i := range mounts {
		if mounts[i].Name == name {
			return &mounts[i]
		}
	}
	return nil
}

func volumeNames(vols []corev1.Volume) []string {
	out := make([]string, 0, len(vols))
	for _, v := range vols {
		out = append(out, v.Name)
	}
	return out
}

func mountNames(mounts []corev1.VolumeMount) []string {
	out := make([]string, 0, len(mounts))
	for _, m := range mounts {
		out = append(out, m.Name)
	}
	return out
}

// keysWithPrefix returns the keys of props under prefix.
func keysWithPrefix(props map[string]string, prefix string) []string {
	var out []string
	for k := range props {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out = append(out, k)
		}
	}
	return out
}
