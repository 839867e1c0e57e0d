//go:build e2e

package spark

// The cases of Spark's own Kubernetes integration tests (resource-managers/kubernetes/
// integration-tests in apache/spark: BasicTestsSuite, SecretsTestsSuite, VolumeSuite,
// PodTemplateSuite, PythonTestsSuite, SparkConfPropagateSuite, DepsTestsSuite) that apply to an
// operator that builds the driver Pod itself, as SparkApplications with the same inputs and the
// same assertions. Several cases share one application where their inputs do not interfere, to
// keep the suite within CI's time; each check names the Spark test it comes from. What the
// Spark tests read with kubectl exec (env, cat, ls, df), which the process kubelet does not
// serve, the PodProbe program prints from the driver and every executor instead. Which cases are
// left out, and why: docs/process-kubelet.md.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// itRun is one application of the port, run to completion.
type itRun struct {
	n         *namespace
	app       *unstructured.Unstructured
	driver    *corev1.Pod
	log       string
	executors *executorRecorder
}

// runIT applies manifest, a SparkApplication named name, waits for COMPLETED while recording its
// executors, and returns the finished run.
func runIT(t *testing.T, n *namespace, name, manifest string) *itRun {
	t.Helper()
	r := &itRun{n: n, executors: newExecutorRecorder(n, name)}
	n.apply(manifest)
	r.app = n.waitAppState(name, "COMPLETED", appTimeout, r.executors.observe)
	driverName := harness.NestedString(r.app, "status", "driverInfo", "podName")
	driver, err := n.pod(driverName)
	if err != nil {
		t.Fatal(err)
	}
	r.driver = driver
	r.log = n.logs(driverName, "")
	return r
}

// expectLog fails for each line the driver log does not contain, naming the Spark test.
func (r *itRun) expectLog(t *testing.T, sparkTest string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if !strings.Contains(r.log, line) {
			t.Errorf("%s: the driver log has no %q:\n%s", sparkTest, line, harness.Tail(r.log, 40))
		}
	}
}

// executorPods are the running executors seen, by name.
func (r *itRun) executorPods(t *testing.T) map[string]*corev1.Pod {
	t.Helper()
	r.executors.mu.Lock()
	defer r.executors.mu.Unlock()
	if len(r.executors.executors) == 0 {
		t.Fatal("no executor pod was seen running")
	}
	return r.executors.executors
}

// basicPodCheck is Spark's doBasicDriverPodCheck / doBasicExecutorPodCheck: the Spark container
// is the pod's first, with its role's name, the application's image and the memory request
// of 1g of heap plus Spark's overhead.
func basicPodCheck(t *testing.T, pod *corev1.Pod, container, image, memory string) {
	t.Helper()
	if len(pod.Spec.Containers) == 0 {
		t.Errorf("%s: no containers", pod.Name)
		return
	}
	c := pod.Spec.Containers[0]
	if c.Name != container {
		t.Errorf("%s: first container %q, want %q", pod.Name, c.Name, container)
	}
	if c.Image != image {
		t.Errorf("%s: image %q, want %q", pod.Name, c.Image, image)
	}
	if memory != "" {
		if got := c.Resources.Requests.Memory().String(); got != memory {
			t.Errorf("%s: memory request %s, want %s", pod.Name, got, memory)
		}
	}
}

func envValue(c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

const (
	image401 = "apache/spark:4.0.1"
	jar401   = "local:///opt/spark/examples/jars/spark-examples_2.13-4.0.1.jar"
	// jvm1g is the memory request of a JVM with 1g of heap: 1024Mi + max(10%, 384Mi).
	jvm1g = "1408Mi"
)

// TestSparkITCustomSettings ports BasicTestsSuite's "Run SparkPi with custom labels,
// annotations, and environment variables" (with the {{APP_ID}} label and annotation of 4.0),
// "All pods have the same service account by default", "SPARK-42769: All executor pods have
// SPARK_DRIVER_POD_IP env variable", "Run SparkPi with an argument." (snappy), "Run SparkPi with
// no resources" (the basic pod checks), and TolerationsTestsSuite as Kubeflow's fields.
func TestSparkITCustomSettings(t *testing.T) {
	n := newNamespace(t, "it-custom")
	const custom = `
    labels: {label1: label1-value, label2: label2-value, customAppIdLabelKey: "{{APP_ID}}"}
    annotations: {annotation1: annotation1-value, annotation2: annotation2-value, customAppIdAnnotation: "{{APP_ID}}"}`
	r := runIT(t, n, "custom-settings", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: custom-settings
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: `+image401+`
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: `+jar401+`
  arguments: ["5"]
  sparkConf:
    spark.authenticate: "true"
    spark.io.compression.codec: snappy
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark`+custom+`
    env: [{name: ENV1, value: VALUE1}, {name: ENV2, value: VALUE2}]
    tolerations:
    - {key: key0, operator: Equal, value: value, effect: NoSchedule}
    - {key: key1, operator: Exists, effect: NoExecute, tolerationSeconds: 15}
    - {operator: Exists}
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g`+custom+`
    env: [{name: ENV1, value: VALUE1}, {name: ENV2, value: VALUE2}]
    tolerations:
    - {key: key2, operator: Equal, value: value, effect: NoSchedule}
    - {key: key3, operator: Exists, effect: NoExecute, tolerationSeconds: 15}
    - {key: key4, operator: Exists}
`)
	r.expectLog(t, "Run SparkPi with an argument.", "Pi is roughly 3")
	checkNoErrors(t, r.driver.Name, r.log)

	checkCustomSettings := func(pod *corev1.Pod, container string) {
		t.Helper()
		sparkTest := "Run SparkPi with custom labels, annotations, and environment variables."
		for k, v := range map[string]string{"label1": "label1-value", "label2": "label2-value"} {
			if pod.Labels[k] != v {
				t.Errorf("%s: %s: label %s=%q, want %q", sparkTest, pod.Name, k, pod.Labels[k], v)
			}
		}
		for k, v := range map[string]string{"annotation1": "annotation1-value", "annotation2": "annotation2-value"} {
			if pod.Annotations[k] != v {
				t.Errorf("%s: %s: annotation %s=%q, want %q", sparkTest, pod.Name, k, pod.Annotations[k], v)
			}
		}
		c := namedContainer(pod, container)
		if c == nil {
			t.Errorf("%s: no container %s", pod.Name, container)
			return
		}
		for k, v := range map[string]string{"ENV1": "VALUE1", "ENV2": "VALUE2"} {
			if got, _ := envValue(c, k); got != v {
				t.Errorf("%s: %s: env %s=%q, want %q", sparkTest, pod.Name, k, got, v)
			}
		}
		appID, _ := envValue(c, "SPARK_APPLICATION_ID")
		if appID == "" || pod.Labels["customAppIdLabelKey"] != appID || pod.Annotations["customAppIdAnnotation"] != appID {
			t.Errorf("%s: %s: {{APP_ID}} became label %q and annotation %q, want SPARK_APPLICATION_ID %q", sparkTest, pod.Name,
				pod.Labels["customAppIdLabelKey"], pod.Annotations["customAppIdAnnotation"], appID)
		}
	}
	checkTolerations := func(pod *corev1.Pod, want []corev1.Toleration) {
		t.Helper()
		for _, w := range want {
			if !slices.ContainsFunc(pod.Spec.Tolerations, func(got corev1.Toleration) bool { return got.MatchToleration(&w) && equalSeconds(got, w) }) {
				t.Errorf("TolerationsTestsSuite: %s: tolerations %+v lack %+v", pod.Name, pod.Spec.Tolerations, w)
			}
		}
	}
	fifteen := int64(15)

	basicPodCheck(t, r.driver, "spark-kubernetes-driver", image401, jvm1g)
	checkCustomSettings(r.driver, "spark-kubernetes-driver")
	checkTolerations(r.driver, []corev1.Toleration{
		{Key: "key0", Operator: corev1.TolerationOpEqual, Value: "value", Effect: corev1.TaintEffectNoSchedule},
		{Key: "key1", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &fifteen},
		{Operator: corev1.TolerationOpExists},
	})
	for _, pod := range r.executorPods(t) {
		basicPodCheck(t, pod, "spark-kubernetes-executor", image401, jvm1g)
		checkCustomSettings(pod, "spark-kubernetes-executor")
		checkTolerations(pod, []corev1.Toleration{
			{Key: "key2", Operator: corev1.TolerationOpEqual, Value: "value", Effect: corev1.TaintEffectNoSchedule},
			{Key: "key3", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &fifteen},
			{Key: "key4", Operator: corev1.TolerationOpExists},
		})
		if pod.Spec.ServiceAccountName != r.driver.Spec.ServiceAccountName {
			t.Errorf("All pods have the same service account by default: executor %s runs as %q, the driver as %q",
				pod.Name, pod.Spec.ServiceAccountName, r.driver.Spec.ServiceAccountName)
		}
		if _, ok := envValue(&pod.Spec.Containers[0], "SPARK_DRIVER_POD_IP"); !ok {
			t.Errorf("SPARK-42769: executor %s has no SPARK_DRIVER_POD_IP", pod.Name)
		}
	}
}

func equalSeconds(a, b corev1.Toleration) bool {
	if a.TolerationSeconds == nil || b.TolerationSeconds == nil {
		return a.TolerationSeconds == b.TolerationSeconds
	}
	return *a.TolerationSeconds == *b.TolerationSeconds
}

// TestSparkITSecretsAndVolumes ports SecretsTestsSuite's "Run SparkPi with env and mount
// secrets." and VolumeSuite's "A Spark job with tmpfs-backed localDir volumes", with the
// memory- and disk-backed emptyDir data volumes of VolumeSuite's driver-only cases given to the
// executors too; what the Spark tests exec in the pods, PodProbe prints. The application's
// name is as long as a name may be, for BasicTestsSuite's "Run SparkPi with a very long
// application name.": every name and label derived from it must still be valid.
func TestSparkITSecretsAndVolumes(t *testing.T) {
	n := newNamespace(t, "it-secrets")
	n.apply(`apiVersion: v1
kind: Secret
metadata:
  name: mysecret
stringData:
  username: secretusername
  password: secretpassword
`)
	name := strings.Repeat("long", 15) + "lon" // Spark's test uses 160; a name may have 63
	secrets := `
    secrets: [{name: mysecret, path: /etc/secret, secretType: Generic}]
    envSecretKeyRefs: {USERNAME: {name: mysecret, key: username}, PASSWORD: {name: mysecret, key: password}}
    volumeMounts: [{name: data, mountPath: /data}, {name: scratch, mountPath: /scratch}]`
	r := runIT(t, n, name, `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: `+name+`
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: `+image401+`
  mainClass: io.sparkhooks.e2e.PodProbe
  mainApplicationFile: `+jar401+`
  arguments: ["env:USERNAME", "env:PASSWORD", "ls:/etc/secret", "file:/etc/secret/username", "file:/etc/secret/password",
    "fs:$SPARK_LOCAL_DIRS", "fs:/data", "fs:/scratch"]
  sparkConf:
    spark.kubernetes.local.dirs.tmpfs: "true"
  volumes:
  - {name: data, emptyDir: {medium: Memory, sizeLimit: 1G}}
  - {name: scratch, emptyDir: {}}
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark`+secrets+`
  executor:
    instances: 2
    cores: 1
    coreRequest: 200m
    memory: 1g`+secrets+`
`)
	basicPodCheck(t, r.driver, "spark-kubernetes-driver", image401, jvm1g)
	executors := r.executorPods(t)
	for _, pod := range executors {
		basicPodCheck(t, pod, "spark-kubernetes-executor", image401, jvm1g)
	}
	sources := []string{"driver"}
	for _, pod := range executors {
		id := pod.Labels["spark-exec-id"]
		sources = append(sources, "executor "+id)
	}
	for _, where := range sources {
		r.expectLog(t, "Run SparkPi with env and mount secrets.",
			where+" env USERNAME=secretusername",
			where+" env PASSWORD=secretpassword",
			where+" ls /etc/secret=password,username",
			where+" file /etc/secret/username=secretusername",
			where+" file /etc/secret/password=secretpassword")
		localDir := probeAnswer(r.log, where+" fs /var/data/")
		if !strings.HasPrefix(localDir, "tmpfs ") {
			t.Errorf("A Spark job with tmpfs-backed localDir volumes: %s's local directory is on %q, want tmpfs", where, localDir)
		}
		r.expectLog(t, "A driver-only Spark job with a tmpfs-backed emptyDir data volume", where+" fs /data=tmpfs ")
		if fs := probeAnswer(r.log, where+" fs /scratch"); fs == "" || strings.HasPrefix(fs, "tmpfs ") {
			t.Errorf("A driver-only Spark job with a disk-backed emptyDir volume: %s's /scratch is on %q, want a disk", where, fs)
		}
	}
	// Every name derived from the longest application name is valid, or nothing would run.
	for _, svc := range []string{harness.NestedString(r.app, "status", "driverInfo", "webUIServiceName")} {
		if len(svc) > 63 {
			t.Errorf("Run SparkPi with a very long application name.: UI Service name %q is longer than 63", svc)
		}
	}
	for _, pod := range executors {
		if v := pod.Labels["spark-app-name"]; len(v) > 63 || v == "" {
			t.Errorf("Run SparkPi with a very long application name.: executor %s label spark-app-name %q", pod.Name, v)
		}
	}
}

// probeAnswer is the answer of the first probe line starting with prefix ("" when none).
func probeAnswer(log, prefix string) string {
	for _, line := range strings.Split(log, "\n") {
		if i := strings.Index(line, prefix); i >= 0 {
			if _, answer, ok := strings.Cut(line[i:], "="); ok {
				return strings.TrimSpace(answer)
			}
		}
	}
	return ""
}

// TestSparkITDriverOnly ports BasicTestsSuite's "SPARK-42190: Run SparkPi with local[*]" and
// VolumeSuite's driver-only cases ("A driver-only Spark job with a tmpfs-backed localDir
// volume", "... with a tmpfs-backed emptyDir data volume", "... with a disk-backed emptyDir
// volume", with Spark's own spark.kubernetes.driver.volumes.* properties): the driver runs the
// job itself and no executor is created.
func TestSparkITDriverOnly(t *testing.T) {
	n := newNamespace(t, "it-local")
	pi := runIT(t, n, "local-pi", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: local-pi
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: `+image401+`
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: `+jar401+`
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
    kubernetesMaster: local[10]
  executor: {}
`)
	pi.expectLog(t, "SPARK-42190: Run SparkPi with local[*]", "local[10]", "Pi is roughly 3")
	basicPodCheck(t, pi.driver, "spark-kubernetes-driver", image401, jvm1g)

	probe := runIT(t, n, "local-probe", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: local-probe
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: `+image401+`
  mainClass: io.sparkhooks.e2e.PodProbe
  mainApplicationFile: `+jar401+`
  arguments: ["fs:$SPARK_LOCAL_DIRS", "fs:/data", "fs:/scratch"]
  sparkConf:
    spark.kubernetes.local.dirs.tmpfs: "true"
    spark.kubernetes.driver.volumes.emptyDir.data.mount.path: /data
    spark.kubernetes.driver.volumes.emptyDir.data.options.medium: Memory
    spark.kubernetes.driver.volumes.emptyDir.data.options.sizeLimit: 1G
    spark.kubernetes.driver.volumes.emptyDir.scratch.mount.path: /scratch
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
    kubernetesMaster: local[10]
  executor: {}
`)
	if fs := probeAnswer(probe.log, "driver fs /var/data/"); !strings.HasPrefix(fs, "tmpfs ") {
		t.Errorf("A driver-only Spark job with a tmpfs-backed localDir volume: the local directory is on %q, want tmpfs", fs)
	}
	probe.expectLog(t, "A driver-only Spark job with a tmpfs-backed emptyDir data volume", "driver fs /data=tmpfs ")
	if fs := probeAnswer(probe.log, "driver fs /scratch"); fs == "" || strings.HasPrefix(fs, "tmpfs ") {
		t.Errorf("A driver-only Spark job with a disk-backed emptyDir volume: /scratch is on %q, want a disk", fs)
	}
	for _, r := range []*itRun{pi, probe} {
		r.executors.mu.Lock()
		seen := len(r.executors.executors)
		r.executors.mu.Unlock()
		pods, err := n.core.CoreV1().Pods(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=executor"})
		if err != nil {
			t.Fatal(err)
		}
		if seen > 0 || len(pods.Items) > 0 {
			t.Errorf("%s: a driver-only application created executors (%d seen, %d left)", r.app.GetName(), seen, len(pods.Items))
		}
	}
}

// TestSparkITDriverJVMOptions ports BasicTestsSuite's "Run extraJVMOptions check on driver" and
// "SPARK-42474: Run extraJVMOptions JVM GC option check" (G1GC and another collector), on Spark
// 3.5, with DriverSubmissionTest, which starts no executors.
func TestSparkITDriverJVMOptions(t *testing.T) {
	n := newNamespace(t, "it-jvm")
	for _, tc := range []struct {
		name, options, want string
	}{
		{"jvm-g1", "-Dspark.test.foo=spark.test.bar -XX:+UseG1GC", "JVM G1GC Flag: true"},
		{"jvm-parallel", "-Dspark.test.foo=spark.test.bar -XX:+UseParallelGC", "JVM G1GC Flag: false"},
	} {
		r := runIT(t, n, tc.name, fmt.Sprintf(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: %s
spec:
  type: Scala
  sparkVersion: 3.5.3
  image: apache/spark:3.5.3
  mainClass: org.apache.spark.examples.DriverSubmissionTest
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  arguments: ["5"]
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
    javaOptions: %q
  executor:
    javaOptions: %q
`, tc.name, tc.options, strings.Fields(tc.options)[1]))
		r.expectLog(t, "Run extraJVMOptions check on driver", "(spark.test.foo,spark.test.bar)")
		r.expectLog(t, "SPARK-42474: Run extraJVMOptions JVM GC option check", tc.want)
		basicPodCheck(t, r.driver, "spark-kubernetes-driver", "apache/spark:3.5.3", jvm1g)
	}
}

// TestSparkITPodTemplate ports PodTemplateSuite's "Start pod creation from template": the
// templates' container names and labels are kept, their placeholder image replaced.
func TestSparkITPodTemplate(t *testing.T) {
	n := newNamespace(t, "it-template")
	r := runIT(t, n, "from-template", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: from-template
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: `+image401+`
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: `+jar401+`
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
    template:
      metadata: {labels: {template-label-key: driver-template-label-value}}
      spec:
        containers: [{name: test-driver-container, image: will-be-overwritten}]
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g
    template:
      metadata: {labels: {template-label-key: executor-template-label-value}}
      spec:
        containers: [{name: test-executor-container, image: will-be-overwritten}]
`)
	r.expectLog(t, "Start pod creation from template", "Pi is roughly 3")
	basicPodCheck(t, r.driver, "test-driver-container", image401, "")
	if v := r.driver.Labels["template-label-key"]; v != "driver-template-label-value" {
		t.Errorf("Start pod creation from template: driver label template-label-key=%q", v)
	}
	for _, pod := range r.executorPods(t) {
		basicPodCheck(t, pod, "test-executor-container", image401, "")
		if v := pod.Labels["template-label-key"]; v != "executor-template-label-value" {
			t.Errorf("Start pod creation from template: executor %s label template-label-key=%q", pod.Name, v)
		}
	}
}

// TestSparkITPython ports PythonTestsSuite's "Run PySpark to test a pyfiles example" and "Run
// PySpark with memory customization" (the pi.py case is TestPySparkPi).
func TestSparkITPython(t *testing.T) {
	n := newNamespace(t, "it-python")
	const pyImage = "apache/spark:4.0.1-python3"
	pyfiles := runIT(t, n, "pyfiles", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: pyfiles
spec:
  type: Python
  pythonVersion: "3"
  sparkVersion: 4.0.1
  image: `+pyImage+`
  mainApplicationFile: local:///opt/spark/tests/pyfiles.py
  arguments: ["python3"]
  deps:
    pyFiles: [local:///opt/spark/tests/py_container_checks.py]
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g
`)
	pyfiles.expectLog(t, "Run PySpark to test a pyfiles example",
		"Python runtime version check is: True",
		"Python environment version check is: True",
		"Python runtime version check for executor is: True")
	// The non-JVM overhead is 40%: 1024Mi + 409Mi.
	basicPodCheck(t, pyfiles.driver, "spark-kubernetes-driver", pyImage, "1433Mi")
	for _, pod := range pyfiles.executorPods(t) {
		basicPodCheck(t, pod, "spark-kubernetes-executor", pyImage, "1433Mi")
	}

	memory := runIT(t, n, "pymemory", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: pymemory
spec:
  type: Python
  pythonVersion: "3"
  sparkVersion: 4.0.1
  image: `+pyImage+`
  mainApplicationFile: local:///opt/spark/tests/worker_memory_check.py
  arguments: ["209715200"]
  memoryOverheadFactor: "0.8"
  sparkConf:
    spark.executor.pyspark.memory: 200m
  deps:
    pyFiles: [local:///opt/spark/tests/py_container_checks.py]
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g
`)
	memory.expectLog(t, "Run PySpark with memory customization", "PySpark Worker Memory Check is: True")
	// 1024Mi + 80%; the executors add the 200Mi of Python memory.
	basicPodCheck(t, memory.driver, "spark-kubernetes-driver", pyImage, "1843Mi")
	for _, pod := range memory.executorPods(t) {
		basicPodCheck(t, pod, "spark-kubernetes-executor", pyImage, "2043Mi")
	}
}

// TestSparkITConfPropagate ports SparkConfPropagateSuite's "Verify logging configuration is
// picked from the provided SPARK_CONF_DIR/log4j2.properties". An operator has no submitter's
// conf directory; a SparkApplication brings its log4j2.properties in spec.sparkConfigMap, which
// the driver reads from /etc/spark/conf (Kubeflow's place) and hands to its executors.
func TestSparkITConfPropagate(t *testing.T) {
	n := newNamespace(t, "it-conf")
	n.apply(`apiVersion: v1
kind: ConfigMap
metadata:
  name: log-config
data:
  log4j2.properties: |
    rootLogger.level = debug
    rootLogger.appenderRef.stdout.ref = console
    appender.console.type = Console
    appender.console.name = console
    appender.console.target = SYSTEM_ERR
    appender.console.layout.type = PatternLayout
    appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c: %maxLen{%m}{512}%n%ex{8}%n
`)
	r := runIT(t, n, "conf-propagate", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: conf-propagate
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: `+image401+`
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: `+jar401+`
  sparkConfigMap: log-config
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
    javaOptions: -Dlog4j2.debug
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g
    javaOptions: -Dlog4j2.debug
    deleteOnTermination: false
`)
	const sparkTest = "Verify logging configuration is picked from the provided SPARK_CONF_DIR/log4j2.properties"
	r.expectLog(t, sparkTest, "DEBUG", "Pi is roughly 3", "Reconfiguration complete for context", "at URI /etc/spark/conf/log4j2.properties")
	pods, err := n.core.CoreV1().Pods(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=executor"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("%s: no executor kept (deleteOnTermination false): %v", sparkTest, err)
	}
	log := n.logs(pods.Items[0].Name, "")
	// The driver hands the files of its conf directory to its executors, as Spark's test expects:
	// they read them from /opt/spark/conf.
	for _, line := range []string{"Reconfiguration complete for context", "at URI /opt/spark/conf/log4j2.properties"} {
		if !strings.Contains(log, line) {
			t.Errorf("%s: executor %s's log has no %q:\n%s", sparkTest, pods.Items[0].Name, line, harness.Tail(log, 30))
		}
	}
}

// TestSparkITRemoteFiles ports BasicTestsSuite's "Run SparkRemoteFileTest using a remote data
// file" and DepsTestsSuite's "SPARK-33615: Launcher client archives" re-expressed for an
// operator, which has no local files to upload: the file and the archive are served over HTTP by
// a pod of the cluster, and driver and executors fetch them.
func TestSparkITRemoteFiles(t *testing.T) {
	n := newNamespace(t, "it-files")
	n.apply(`apiVersion: v1
kind: ConfigMap
metadata:
  name: files
data:
  pagerank_data.txt: |
    1 2
    1 3
    1 4
    2 1
    3 1
    4 1
  serve.sh: |
    set -e
    mkdir -p /tmp/srv/archive
    cp /files/pagerank_data.txt /tmp/srv/
    echo "test deps" > /tmp/srv/archive/deps.txt
    tar -czf /tmp/srv/deps.tar.gz -C /tmp/srv/archive deps.txt
    exec python3 -m http.server 8000 --directory /tmp/srv
---
apiVersion: v1
kind: Pod
metadata:
  name: files
  labels: {app: files}
spec:
  containers:
  - name: server
    image: ` + image401 + `
    command: [bash, /files/serve.sh]
    ports: [{containerPort: 8000}]
    readinessProbe: {tcpSocket: {port: 8000}, periodSeconds: 1}
    volumeMounts: [{name: files, mountPath: /files}]
  volumes:
  - {name: files, configMap: {name: files}}
---
apiVersion: v1
kind: Service
metadata:
  name: files
spec:
  selector: {app: files}
  ports: [{port: 8000, targetPort: 8000}]
`)
	// The driver fetches its files as its first step: submitted before the server is ready, it
	// would find no endpoint behind the Service's name, on any cluster.
	if out, err := n.kubectl("wait", "--for=condition=Ready", "pod/files", "--timeout=3m"); err != nil {
		t.Fatalf("waiting for the file server: %v: %s\n%s", err, out, n.dump())
	}
	manifest := func(name, file string) string {
		return fmt.Sprintf(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: %s
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: %s
  mainClass: org.apache.spark.examples.SparkRemoteFileTest
  mainApplicationFile: %s
  arguments: [%s]
  deps:
    files: [http://files:8000/pagerank_data.txt]
    archives: ["http://files:8000/deps.tar.gz#test_tar_gz"]
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g
`, name, image401, jar401, file)
	}
	r := runIT(t, n, "remote-file", manifest("remote-file", "pagerank_data.txt"))
	r.expectLog(t, "Run SparkRemoteFileTest using a remote data file", "Mounting of pagerank_data.txt was true")
	archive := runIT(t, n, "remote-archive", manifest("remote-archive", "test_tar_gz/deps.txt"))
	archive.expectLog(t, "SPARK-33615: Launcher client archives", "Mounting of test_tar_gz/deps.txt was true")
}

// TestSparkITWithoutDriverService ports BasicTestsSuite's "SPARK-53944: Run SparkPi without
// driver service" (Spark 4.1+): the application leaves out DriverServiceFeatureStep and its
// executors dial the driver's Pod IP, so no headless driver Service is made.
func TestSparkITWithoutDriverService(t *testing.T) {
	n := newNamespace(t, "it-nosvc")
	r := runIT(t, n, "no-driver-svc", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: no-driver-svc
spec:
  type: Scala
  sparkVersion: 4.3.0
  image: apache/spark:4.3.0
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.13-4.3.0.jar
  sparkConf:
    spark.kubernetes.driver.pod.excludedFeatureSteps: org.apache.spark.deploy.k8s.features.DriverServiceFeatureStep
    spark.kubernetes.executor.useDriverPodIP: "true"
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g
`)
	r.expectLog(t, "SPARK-53944: Run SparkPi without driver service", "Pi is roughly 3")
	r.executorPods(t)
	// Each attempt's driver Service is <app>-<attempt id>-driver-svc: look for any.
	svcs, err := n.core.CoreV1().Services(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "sparkoperator.k8s.io/app-name=no-driver-svc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range svcs.Items {
		if strings.HasSuffix(svc.Name, "-driver-svc") {
			t.Errorf("SPARK-53944: the driver Service %s was made although DriverServiceFeatureStep is excluded", svc.Name)
		}
	}
}

// TestSparkITStatefulSetAllocation ports BasicTestsSuite's "Run SparkPi with no resources &
// statefulset allocation" (the driver creates its executors through a StatefulSet, and deletes
// it when it stops) and "Use SparkLauncher.NO_RESOURCE" (no primary resource: the main class
// comes from spec.deps.jars).
func TestSparkITStatefulSetAllocation(t *testing.T) {
	n := newNamespace(t, "it-sts")
	// The chart's Role covers Spark's default allocator; this one needs StatefulSets too, which an
	// administrator grants (the chart's spark.rbac.extraRules, here for this namespace alone).
	n.apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: spark-statefulsets
rules:
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, create, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: spark-statefulsets
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: spark-statefulsets
subjects:
- kind: ServiceAccount
  name: spark
`)
	r := runIT(t, n, "sts-pi", `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: sts-pi
spec:
  type: Scala
  sparkVersion: 4.0.1
  image: `+image401+`
  mainClass: org.apache.spark.examples.SparkPi
  deps:
    jars: [`+jar401+`]
  sparkConf:
    spark.kubernetes.allocation.pods.allocator: statefulset
  driver:
    coreRequest: 200m
    memory: 1g
    serviceAccount: spark
  executor:
    instances: 1
    cores: 1
    coreRequest: 200m
    memory: 1g
`)
	r.expectLog(t, "Run SparkPi with no resources & statefulset allocation", "Pi is roughly 3")
	r.expectLog(t, "Use SparkLauncher.NO_RESOURCE", "Pi is roughly 3")
	for _, pod := range r.executorPods(t) {
		basicPodCheck(t, pod, "spark-kubernetes-executor", image401, jvm1g)
		if owner := metav1.GetControllerOf(pod); owner == nil || owner.Kind != "StatefulSet" {
			t.Errorf("statefulset allocation: executor %s is controlled by %+v, want a StatefulSet", pod.Name, owner)
		}
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		sets, err := n.core.AppsV1().StatefulSets(n.name).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(sets.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("statefulset allocation: %d StatefulSets left 3 minutes after completion", len(sets.Items))
			break
		}
		time.Sleep(time.Second)
	}
}
