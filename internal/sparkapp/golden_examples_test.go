package sparkapp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// exampleCases is one golden case per SparkApplication in examples/: the first sync of each,
// which is everything the hook asks Metacontroller to create for it.
func exampleCases(t testing.TB) []goldenCase {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	require.NoError(t, err)
	var cases []goldenCase
	for _, file := range files {
		doc, err := os.ReadFile(file)
		require.NoError(t, err)
		var head struct {
			Kind string `json:"kind"`
		}
		require.NoError(t, yaml.Unmarshal(doc, &head), file)
		if head.Kind != v1beta2.KindSparkApplication {
			continue
		}
		name := "example-" + strings.TrimSuffix(filepath.Base(file), ".yaml")
		setup := fresh(string(doc))
		if strings.Contains(string(doc), "httpRoute:") {
			// Written for a registration that declares HTTPRoutes (gatewayAPI.enabled).
			setup = then(setup, httpRoutes)
		}
		cases = append(cases, goldenCase{name: name, setup: setup})
	}
	require.GreaterOrEqual(t, len(cases), 10, "examples/ should hold at least 10 SparkApplications")
	return cases
}

// edgeCases are first syncs of specs that stress the driver builder: names at their limits,
// every secret type, each kind of local directory, Spark versions whose entrypoints differ.
func edgeCases() []goldenCase {
	longName := "a" + strings.Repeat("b", 61) + "c" // 63 characters, the longest valid name
	return []goldenCase{
		{name: "new-long-name", setup: fresh(strings.Replace(sparkPi, "name: spark-pi", "name: "+longName, 1))},
		{name: "new-custom-pod-name", setup: fresh(strings.Replace(sparkPi, "    serviceAccount: spark\n",
			"    serviceAccount: spark\n    podName: etl-nightly-driver-0\n", 1))},
		{name: "new-secrets-every-type", setup: fresh(strings.Replace(sparkPi, "    serviceAccount: spark\n", `    serviceAccount: spark
    secrets:
      - {name: app-config, path: /etc/app, secretType: Generic}
      - {name: gcp-key, path: /etc/gcp, secretType: GCPServiceAccount}
      - {name: hadoop-token, path: /etc/hadoop-token, secretType: HadoopDelegationToken}
    envSecretKeyRefs:
      DB_PASSWORD: {name: db, key: password}
`, 1))},
		{name: "new-local-dir-hostpath", setup: fresh(withLocalDir(`      hostPath: {path: /mnt/fast-ssd, type: DirectoryOrCreate}`))},
		{name: "new-local-dir-pvc", setup: fresh(withLocalDir(`      persistentVolumeClaim: {claimName: spark-scratch}`))},
		{name: "new-local-dir-emptydir-memory", setup: fresh(withLocalDir(`      emptyDir: {medium: Memory, sizeLimit: 2Gi}`))},
		{name: "new-python-3-5", setup: fresh(strings.NewReplacer(
			"type: Scala", "type: Python",
			"  mainClass: org.apache.spark.examples.SparkPi\n", "  pythonVersion: \"3\"\n",
			"local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "local:///opt/spark/examples/src/main/python/pi.py",
		).Replace(sparkPi))},
		{name: "new-python-spark-2-4", setup: fresh(strings.NewReplacer(
			"type: Scala", "type: Python",
			"image: apache/spark:3.5.3", "image: gcr.io/spark-operator/spark-py:v2.4.5",
			"sparkVersion: 3.5.3", "sparkVersion: 2.4.5",
			"  mainClass: org.apache.spark.examples.SparkPi\n", "",
			"local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "local:///opt/spark/examples/src/main/python/pi.py",
			"    instances: 2\n", "    instances: 2\n    tolerations:\n      - {key: spark, operator: Exists, effect: NoSchedule}\n",
		).Replace(sparkPi))},
		{name: "new-r", setup: fresh(strings.NewReplacer(
			"type: Scala", "type: R",
			"  mainClass: org.apache.spark.examples.SparkPi\n", "",
			"local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "local:///opt/spark/examples/src/main/r/dataframe.R",
		).Replace(sparkPi))},
		{name: "new-spark-4", setup: fresh(strings.NewReplacer(
			"image: apache/spark:3.5.3", "image: apache/spark:4.0.1",
			"sparkVersion: 3.5.3", "sparkVersion: 4.0.1",
			"spark-examples_2.12-3.5.3.jar", "spark-examples_2.13-4.0.1.jar",
		).Replace(sparkPi))},
		{name: "new-volcano", setup: func(t *testing.T) *world {
			w := newWorld(t, sparkPi+"  batchScheduler: volcano\n  batchSchedulerOptions:\n    queue: analytics\n")
			w.children[keyPodGroup] = map[string]map[string]any{} // the Volcano registration
			return w
		}},
		{name: "new-volcano-podgroups-not-managed", setup: fresh(sparkPi + "  batchScheduler: volcano\n")},
		{name: "new-kube-scheduler-default", setup: then(fresh(sparkPi), kubeScheduler)},
		{name: "completed-kube-scheduler", setup: then(runningFrom(then(fresh(sparkPi), kubeScheduler), 2), func(w *world) {
			w.driverExited(0, "Completed")
			w.settle()
		})},
		{name: "new-event-log-default", setup: then(fresh(sparkPi), eventLogDefault(nil))},
		{name: "new-event-log-default-volume", setup: then(fresh(sparkPi), eventLogDefault(&corev1.Volume{VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "spark-events"}}}))},
		{name: "new-event-log-overridden", setup: then(fresh(sparkPi+`  sparkConf:
    spark.eventLog.dir: s3a://team-a-logs/events
    spark.eventLog.rolling.maxFileSize: 256m
`), eventLogDefault(nil))},
		{name: "completed-event-log-default", setup: then(runningFrom(then(fresh(sparkPi), eventLogDefault(nil)), 2), func(w *world) {
			w.driverExited(0, "Completed")
			w.settle()
		})},
		{name: "new-driver-ingress-options", setup: fresh(sparkPi + `  driverIngressOptions:
    - servicePort: 15002
      servicePortName: spark-connect
      ingressURLFormat: "{{$appName}}-connect.spark.example.com"
      ingressAnnotations: {nginx.ingress.kubernetes.io/backend-protocol: GRPC}
`)},
	}
}

// kubeScheduler makes the operator's default batch scheduler a kube-scheduler profile with the
// coscheduling plugin, under the registration that declares scheduler-plugins PodGroups.
func kubeScheduler(w *world) {
	w.cfg.Driver.KubeSchedulerNames = []string{"scheduler-plugins-scheduler"}
	w.cfg.Driver.DefaultBatchScheduler = "scheduler-plugins-scheduler"
	w.children[keyCoschedulingPodGroup] = map[string]map[string]any{}
}

// eventLogDefault sets the operator's default event log (--default-event-log-dir, on the volume
// of --default-event-log-volume when given) and its History Server (--history-server-url).
func eventLogDefault(vol *corev1.Volume) func(w *world) {
	return func(w *world) {
		w.cfg.Driver.EventLog.Dir = "s3a://spark-logs/events"
		if vol != nil {
			w.cfg.Driver.EventLog.Dir = "file:/spark-events"
			w.cfg.Driver.EventLog.Volume = vol
		}
		w.cfg.HistoryServerURL = "https://spark-history.example.com"
	}
}

// withLocalDir gives driver and executors a spark-local-dir-* volume of the given source.
func withLocalDir(source string) string {
	mount := "    volumeMounts:\n      - {name: spark-local-dir-scratch, mountPath: /scratch}\n"
	return strings.NewReplacer(
		"    serviceAccount: spark\n", "    serviceAccount: spark\n"+mount,
		"    instances: 2\n", "    instances: 2\n"+mount,
	).Replace(sparkPi) + "  volumes:\n    - name: spark-local-dir-scratch\n" + source + "\n"
}
