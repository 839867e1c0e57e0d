//go:build e2e

package sparkctl

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/simkubelet"
)

// TestSimulated runs the commands against one simulated sandbox: the hooks and the controller
// stand-in are real, the pods' phases are played.
func TestSimulated(t *testing.T) {
	s := startSandbox(t, "--simulate", "--images", t.TempDir())

	t.Run("create --follow to COMPLETED, then list, status, log, event, delete", func(t *testing.T) {
		begin := time.Now()
		r := s.spark(t, "create", "-f", "examples/spark-pi.yaml", "--follow")
		t.Logf("create --follow: %s", time.Since(begin).Round(100*time.Millisecond))
		if !strings.Contains(r.stdout, "sparkapplication.sparkoperator.k8s.io/spark-pi created") || !strings.Contains(r.stdout, "nothing was executed") {
			t.Fatalf("create --follow printed no creation or no driver log:\n%s", r)
		}
		if !strings.Contains(r.stderr, "spark-pi: COMPLETED") {
			t.Errorf("create --follow did not report COMPLETED:\n%s", r)
		}
		list := s.spark(t, "list")
		if !regexpLine(list.stdout, "spark-pi", "COMPLETED", "1", "1") {
			t.Errorf("list:\n%s", list)
		}
		status := s.spark(t, "status", "spark-pi")
		for _, want := range []string{"State:", "COMPLETED", "Driver:", "spark-pi-driver (Succeeded", "1 run(s), 1 submission(s)"} {
			if !strings.Contains(status.stdout, want) {
				t.Errorf("status lacks %q:\n%s", want, status)
			}
		}
		if log := s.spark(t, "log", "spark-pi"); log.stdout != simkubelet.SimulatedLog {
			t.Errorf("log:\n%s", log)
		}
		// Same command, in kubectl's flag forms.
		if r := s.kubectl(t, nil, "spark", "list", "-A", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"name": "spark-pi"`) {
			t.Errorf("list -A -o json:\n%s", r)
		}
		if r := s.kubectl(t, nil, "spark", "-n", "nowhere", "list"); r.code != 0 || !strings.Contains(r.stderr, "No sparkapplications found in namespace nowhere") {
			t.Errorf("-n nowhere list:\n%s", r)
		}
		if r := s.spark(t, "event", "spark-pi"); r.stdout == "" && !strings.Contains(r.stderr, "No events for SparkApplication spark-pi") {
			t.Errorf("event:\n%s", r)
		}
		s.spark(t, "delete", "spark-pi", "--wait")
		if r := s.kubectl(t, nil, "get", "pod", "spark-pi-driver"); r.code == 0 {
			t.Errorf("the driver pod outlived its application:\n%s", r)
		}
	})

	t.Run("one-line errors and exit codes", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"status", "nope"}, 1, `error: SparkApplication "nope" not found in namespace "default"`},
			{[]string{"create", "-f", "examples/nope.yaml"}, 1, "error: reading examples/nope.yaml: open examples/nope.yaml: no such file or directory"},
			{[]string{"log", "nope"}, 1, `error: SparkApplication "nope" not found in namespace "default"`},
			{[]string{"create", "nope-run", "--from", "nope"}, 1, `error: ScheduledSparkApplication "nope" not found in namespace "default"`},
			{[]string{"list", "--bogus"}, 2, "error: unknown flag: --bogus"},
			{[]string{"list", "-o", "wide"}, 2, `error: --output "wide": want json or yaml`},
			{[]string{"list", "--context", "nope"}, 1, `error: loading the kubeconfig: context "nope" does not exist`},
		} {
			r := s.kubectl(t, nil, append([]string{"spark"}, tc.args...)...)
			if r.code != tc.code || strings.TrimSpace(r.stderr) != tc.want {
				t.Errorf("kubectl spark %s: want exit %d and %q, got %s", strings.Join(tc.args, " "), tc.code, tc.want, r)
			}
		}
	})

	t.Run("create --from makes a run the schedule keeps in its history", func(t *testing.T) {
		ssa := writeFile(t, filepath.Join(t.TempDir(), "yearly.yaml"), `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata:
  name: yearly-pi
  labels: {team: analytics}
spec:
  schedule: "0 0 1 1 *"
  concurrencyPolicy: Forbid
  template:
    type: Scala
    mode: cluster
    sparkVersion: 3.5.3
    image: apache/spark:3.5.3
    mainClass: org.apache.spark.examples.SparkPi
    mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
    driver: {cores: 1, memory: 512m, serviceAccount: spark}
    executor: {instances: 1, cores: 1, memory: 512m}
`)
		s.spark(t, "create", "-f", ssa)
		waitFor(t, 30*time.Second, "the schedule to be Scheduled", func() bool {
			return s.jsonpath(t, "scheduledsparkapp/yearly-pi", "{.status.scheduleState}") == "Scheduled"
		})
		r := s.spark(t, "create", "--from", "yearly-pi", "--follow")
		run := strings.TrimSuffix(strings.TrimPrefix(firstLine(r.stdout), "sparkapplication.sparkoperator.k8s.io/"), " created")
		if !strings.HasPrefix(run, "yearly-pi-") {
			t.Fatalf("create --from:\n%s", r)
		}
		waitFor(t, 30*time.Second, "the run in the schedule's history", func() bool {
			return s.jsonpath(t, "scheduledsparkapp/yearly-pi", "{.status.pastSuccessfulRunNames}") == fmt.Sprintf(`["%s"]`, run)
		})
		owner := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/"+run, "{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}")
		if owner != "ScheduledSparkApplication/yearly-pi/true" {
			t.Errorf("the run's owner: %s", owner)
		}
		if team := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/"+run, "{.metadata.labels.team}"); team != "analytics" {
			t.Errorf("the run lacks the schedule's labels: team=%q", team)
		}
		st := s.spark(t, "status", "scheduled/yearly-pi")
		if !strings.Contains(st.stdout, "Succeeded runs:  "+run) {
			t.Errorf("status of the schedule:\n%s", st)
		}
		// Deleting the schedule takes its runs along.
		s.spark(t, "delete", "scheduled/yearly-pi", "--wait")
		waitFor(t, 30*time.Second, "the run to go with its schedule", func() bool {
			return s.kubectl(t, nil, "get", "sparkapplications.sparkoperator.k8s.io", run).code != 0
		})
	})

	t.Run("staging to S3 and GCS", func(t *testing.T) { testStaging(t, s) })

	t.Run("HADOOP_CONF_DIR becomes a mounted ConfigMap that goes with the application", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "hadoop", "core-site.xml"), "<configuration><property><name>fs.defaultFS</name><value>hdfs://namenode:8020</value></property></configuration>\n")
		writeFile(t, filepath.Join(dir, "hadoop", "hdfs-site.xml"), "<configuration/>\n")
		app := writeFile(t, filepath.Join(dir, "app.yaml"), strings.Replace(readFile(t, "examples/spark-pi.yaml"), "name: spark-pi", "name: pi-hadoop", 1))
		r := s.kubectl(t, []string{"HADOOP_CONF_DIR=" + filepath.Join(dir, "hadoop")}, "spark", "create", "-f", app)
		if r.code != 0 {
			t.Fatalf("create: %s", r)
		}
		if got := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/pi-hadoop", "{.spec.hadoopConfigMap}"); got != "pi-hadoop-hadoop-config" {
			t.Fatalf("spec.hadoopConfigMap = %q", got)
		}
		if got := s.jsonpath(t, "configmap/pi-hadoop-hadoop-config", "{.data.core-site\\.xml}"); !strings.Contains(got, "hdfs://namenode:8020") {
			t.Errorf("the ConfigMap's core-site.xml: %q", got)
		}
		var pod corev1.Pod
		waitFor(t, 30*time.Second, "the driver pod", func() bool {
			out := s.kubectl(t, nil, "get", "pod", "pi-hadoop-driver", "-o", "json")
			return out.code == 0 && json.Unmarshal([]byte(out.stdout), &pod) == nil
		})
		i := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
			return v.ConfigMap != nil && v.ConfigMap.Name == "pi-hadoop-hadoop-config"
		})
		if i < 0 {
			t.Fatalf("the driver pod mounts no volume of the ConfigMap: %+v", pod.Spec.Volumes)
		}
		mounted := false
		for _, c := range pod.Spec.Containers {
			for _, m := range c.VolumeMounts {
				mounted = mounted || (m.Name == pod.Spec.Volumes[i].Name && m.MountPath == "/etc/hadoop/conf")
			}
		}
		if !mounted {
			t.Errorf("the ConfigMap is not mounted at /etc/hadoop/conf: %+v", pod.Spec.Containers)
		}
		waitFor(t, 30*time.Second, "COMPLETED", func() bool {
			return s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/pi-hadoop", "{.status.applicationState.state}") == "COMPLETED"
		})
		if got := s.jsonpath(t, "configmap/pi-hadoop-hadoop-config", "{.metadata.name}"); got == "" {
			t.Errorf("Metacontroller's stand-in deleted the ConfigMap it does not control")
		}
		s.spark(t, "delete", "pi-hadoop", "--wait")
		waitFor(t, 30*time.Second, "the garbage collector to delete the ConfigMap", func() bool {
			return s.kubectl(t, nil, "get", "configmap", "pi-hadoop-hadoop-config").code != 0
		})
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// regexpLine reports whether one line of out holds the fields in order.
func regexpLine(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		got := strings.Fields(line)
		if len(got) >= len(fields) && slices.Equal(got[:len(fields)], fields) {
			return true
		}
	}
	return false
}
