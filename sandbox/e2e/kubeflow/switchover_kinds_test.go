//go:build e2e

package kubeflow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// The switch-over's other kinds (issue 41): a ScheduledSparkApplication whose runs go on across
// both switches, and a SparkConnect server Kubeflow's operator made, followed by sparkhooks.

var (
	scheduledApps = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "scheduledsparkapplications"}
	sparkConnects = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1alpha1", Resource: "sparkconnects"}
)

const (
	scheduleName = "every-minute"
	// schedulePeriod is scheduleName's period: short, so that Kubeflow's first run is in
	// progress at the first switch; a run (napSeconds and a JVM's start) ends about when the
	// next starts. The history limits keep every run the test makes.
	schedulePeriod = time.Minute
	napSeconds     = 40
	connectName    = "connect-kubeflow"
)

// napper is a run of the schedule: a Python driver that sleeps without starting Spark, so a
// run is one driver Pod and costs the machine one JVM's start.
const napper = `import sys, time
time.sleep(int(sys.argv[1]))
print("napped")
`

func scheduledApp(account string) string {
	return fmt.Sprintf(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata:
  name: %s
spec:
  schedule: "@every %s"
  concurrencyPolicy: Allow
  successfulRunHistoryLimit: 20
  failedRunHistoryLimit: 20
  template:
    type: Python
    pythonVersion: "3"
    mode: cluster
    sparkVersion: 3.5.3
    image: apache/spark:3.5.3
    mainApplicationFile: local:///opt/switchover/nap.py
    arguments: ["%d"]
    volumes:
      - name: sleeper
        configMap:
          name: %s
    driver:
      cores: 1
      memory: 512m
      serviceAccount: %s
      volumeMounts:
        - name: sleeper
          mountPath: /opt/switchover
    executor:
      instances: 1
      cores: 1
      memory: 512m
`, scheduleName, schedulePeriod, napSeconds, sleeperConfigMap, account)
}

// startConnectServer is what Kubeflow's server Pod runs, ${SPARK_HOME}/sbin/start-connect-server.sh,
// which the sandbox's Spark images leave out (they carry what spark-submit needs): the same
// command Spark's script runs with SPARK_NO_DAEMONIZE, the server in the foreground.
const startConnectServer = `#!/bin/bash
exec "${SPARK_HOME}/bin/spark-submit" --class org.apache.spark.sql.connect.service.SparkConnectServer --name "Spark Connect server" "$@" spark-internal
`

func connectServer(account string) string {
	return fmt.Sprintf(`apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata:
  name: %s
spec:
  sparkVersion: 4.0.1
  image: apache/spark:4.0.1
  sparkConf:
    spark.connect.grpc.binding.address: 0.0.0.0
  server:
    cores: 1
    memory: 1g
    template:
      spec:
        serviceAccountName: %s
        volumes:
          - name: sbin
            configMap:
              name: %s
              defaultMode: 0755
              items: [{key: start-connect-server.sh, path: start-connect-server.sh}]
        containers:
          - name: spark-kubernetes-driver
            volumeMounts:
              - {name: sbin, mountPath: /opt/spark/sbin}
  executor:
    instances: 1
    cores: 1
    memory: 512m
`, connectName, account, sleeperConfigMap)
}

// scheduleStatus is what the test reads of the schedule.
type scheduleStatus struct {
	lastRun, nextRun time.Time
	lastRunName      string
	succeeded        []string
	runs             []string // the runs that exist, by the label both operators put on them
}

func readSchedule(t *testing.T, dyn dynamic.Interface) scheduleStatus {
	t.Helper()
	ctx := context.Background()
	obj, err := dyn.Resource(scheduledApps).Namespace(namespace).Get(ctx, scheduleName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var s scheduleStatus
	parse := func(field string) time.Time {
		v, _, _ := unstructured.NestedString(obj.Object, "status", field)
		at, _ := time.Parse(time.RFC3339, v)
		return at
	}
	s.lastRun, s.nextRun = parse("lastRun"), parse("nextRun")
	s.lastRunName, _, _ = unstructured.NestedString(obj.Object, "status", "lastRunName")
	s.succeeded, _, _ = unstructured.NestedStringSlice(obj.Object, "status", "pastSuccessfulRunNames")
	runs, err := dyn.Resource(sparkApplications).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: "sparkoperator.k8s.io/scheduled-app-name=" + scheduleName})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs.Items {
		s.runs = append(s.runs, r.GetName())
	}
	slices.Sort(s.runs)
	return s
}

// waitNextRun waits for the schedule's run after the one named last, and checks that it came
// at the time the schedule gave before (due), as one run, made by the operator by (its run
// names tell: Kubeflow's end in nanoseconds, sparkhooks' in seconds): created within a sync's
// delay of due, or of up, when the operator came up, for a time that fell in the switch; status.nextRun
// a period after status.lastRun, and no other new run.
func waitNextRun(t *testing.T, dyn dynamic.Interface, last string, due, up time.Time, before []string, by stack.Operator) scheduleStatus {
	t.Helper()
	var s scheduleStatus
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Until(due)+2*time.Minute, true, func(context.Context) (bool, error) {
		s = readSchedule(t, dyn)
		return s.lastRunName != "" && s.lastRunName != last, nil
	})
	if err != nil {
		out, _ := adminKubectl("get", "scheduledsparkapplications.sparkoperator.k8s.io", scheduleName, "--namespace", namespace, "-o", "yaml")
		t.Fatalf("no run after %s, due at %s: %v\n%s", last, due.Format(time.RFC3339), err, out)
	}
	run, err := dyn.Resource(sparkApplications).Namespace(namespace).Get(context.Background(), s.lastRunName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := run.GetCreationTimestamp().Time
	latest := due
	if up.After(latest) {
		latest = up
	}
	if created.Before(due.Add(-time.Second)) || created.After(latest.Add(30*time.Second)) {
		t.Errorf("run %s created at %s, due at %s (operator up at %s)", s.lastRunName, created.Format(time.RFC3339), due.Format(time.RFC3339), up.Format(time.RFC3339))
	}
	if s.lastRun.Before(due) || s.lastRun.After(latest.Add(30*time.Second)) {
		t.Errorf("status.lastRun %s, due at %s", s.lastRun.Format(time.RFC3339), due.Format(time.RFC3339))
	}
	digits := len(s.lastRunName) - len(scheduleName+"-")
	if made := map[bool]stack.Operator{true: stack.OperatorKubeflow, false: stack.OperatorSparkhooks}[digits > 10]; made != by {
		t.Errorf("run %s was made by %s, want %s", s.lastRunName, made, by)
	}
	if next := s.nextRun.Sub(s.lastRun); next != schedulePeriod {
		t.Errorf("status.nextRun %s is %s after status.lastRun %s, want %s", s.nextRun.Format(time.RFC3339), next, s.lastRun.Format(time.RFC3339), schedulePeriod)
	}
	if want := append(slices.Clone(before), s.lastRunName); !sameSet(s.runs, want) {
		t.Errorf("runs %v, want %v: one new run per scheduled time", s.runs, want)
	}
	t.Logf("run %s created at %s, due at %s; next at %s; succeeded %v", s.lastRunName, created.Format(time.RFC3339), due.Format(time.RFC3339), s.nextRun.Format(time.RFC3339), s.succeeded)
	return s
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// waitFirstRunRunning waits until Kubeflow's operator has started the schedule's first run and
// its driver runs, so that the switch finds a run in progress.
func waitFirstRunRunning(t *testing.T, dyn dynamic.Interface) scheduleStatus {
	t.Helper()
	var s scheduleStatus
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, schedulePeriod+3*time.Minute, true, func(context.Context) (bool, error) {
		s = readSchedule(t, dyn)
		return s.lastRunName != "" && appState(t, dyn, s.lastRunName) == "RUNNING", nil
	})
	if err != nil {
		out, _ := adminKubectl("get", "scheduledsparkapplications.sparkoperator.k8s.io,sparkapplications.sparkoperator.k8s.io", "--namespace", namespace, "-o", "yaml")
		t.Fatalf("the schedule's first run is not RUNNING: %v\n%s", err, out)
	}
	return s
}

// server is the SparkConnect's server Pod as the test tracks it: the same Pod, never
// restarted, must serve across both switches.
type server struct {
	uid      string
	restarts int32
	started  time.Time
}

func serverPod(t *testing.T, core kubernetes.Interface) server {
	t.Helper()
	pod, err := core.CoreV1().Pods(namespace).Get(context.Background(), connectName+"-server", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := server{uid: string(pod.UID)}
	for _, c := range pod.Status.ContainerStatuses {
		s.restarts += c.RestartCount
		if c.State.Running != nil {
			s.started = c.State.Running.StartedAt.Time
		}
	}
	return s
}

// waitConnect waits until the SparkConnect's status says Ready with a running executor, and
// done accepts the status.
func waitConnect(t *testing.T, dyn dynamic.Interface, timeout time.Duration, done func(status map[string]any) bool) map[string]any {
	t.Helper()
	var status map[string]any
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(sparkConnects).Namespace(namespace).Get(ctx, connectName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		status, _, _ = unstructured.NestedMap(obj.Object, "status")
		state, _, _ := unstructured.NestedString(status, "state")
		running, _, _ := unstructured.NestedInt64(status, "executors", "running")
		return state == "Ready" && running >= 1 && done(status), nil
	})
	if err != nil {
		out, _ := adminKubectl("get", "sparkconnects.sparkoperator.k8s.io", connectName, "--namespace", namespace, "-o", "yaml")
		pods, _ := adminKubectl("get", "pods", "--namespace", namespace, "-o", "wide")
		t.Fatalf("%s: %v\n%s\n%s", connectName, err, out, pods)
	}
	return status
}

func anyStatus(map[string]any) bool { return true }

// adoptedBy is a waitConnect condition: the Adopted condition has the reason.
func adoptedBy(reason string) func(map[string]any) bool {
	return func(status map[string]any) bool {
		conditions, _, _ := unstructured.NestedSlice(status, "conditions")
		for _, c := range conditions {
			if c, _ := c.(map[string]any); c["type"] == "Adopted" {
				return c["reason"] == reason
			}
		}
		return false
	}
}

// checkServerKept wants the server Pod the test saw first: the same uid, its container never
// restarted.
func checkServerKept(t *testing.T, core kubernetes.Interface, first server, when string) {
	t.Helper()
	now := serverPod(t, core)
	if now != first {
		t.Errorf("%s: server Pod %s-server was %+v, is %+v: replaced or restarted", when, connectName, first, now)
	}
}

// checkKinds wants, of the Pods the ledger saw: one server Pod and one executor Pod of
// the SparkConnect, neither deleted; one driver Pod per run of the schedule that ended.
func (l *podLedger) checkKinds(t *testing.T, runs []string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var connect []string
	for _, id := range l.created[""] {
		if strings.Contains(id, "/"+connectName+"-") {
			connect = append(connect, id)
		}
	}
	roles := map[string]int{}
	for _, id := range connect {
		roles[strings.SplitN(id, "/", 2)[0]]++
	}
	if roles["connect-server"] != 1 || roles["executor"] != 1 {
		t.Errorf("%s: Pods created %v, want one server and one executor", connectName, connect)
	}
	for _, id := range l.deleted {
		if strings.Contains(id, "/"+connectName+"-") {
			t.Errorf("%s: Pod deleted: %s", connectName, id)
		}
	}
	for _, run := range runs {
		if drivers := l.created[run]; len(drivers) != 1 || !strings.HasPrefix(drivers[0], "driver/") {
			t.Errorf("run %s: Pods created %v, want one driver", run, drivers)
		}
	}
}
