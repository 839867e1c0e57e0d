//go:build e2e

package kubeflow

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// sleeper is the application of the switch-over: one task on one executor sleeps for the
// seconds of its argument, so that the application is RUNNING, with its executor, for as long as
// the test needs and costs the machine nothing meanwhile.
const sleeper = `import sys, time
from pyspark.sql import SparkSession

seconds = int(sys.argv[1])
spark = SparkSession.builder.getOrCreate()
n = spark.sparkContext.parallelize([seconds], 1).map(lambda s: time.sleep(s) or s).count()
print("slept", seconds, "seconds in", n, "task")
spark.stop()
`

const sleeperConfigMap = "switchover-sleeper"

func sleeperApp(name, account string, seconds int) string {
	return fmt.Sprintf(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: %s
spec:
  type: Python
  pythonVersion: "3"
  mode: cluster
  sparkVersion: 3.5.3
  image: apache/spark:3.5.3
  mainApplicationFile: local:///opt/switchover/sleeper.py
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
    memoryOverhead: 512m
`, name, seconds, sleeperConfigMap, account)
}

// TestSwitchOverWithRunningApplications hands a cluster from the Kubeflow Spark Operator to
// sparkhooks and back while applications run (issue 41), with the steps and scripts of
// docs/migrate-from-kubeflow.md: long-kubeflow runs across both switches, short-kubeflow ends
// under sparkhooks, unlabelled-kubeflow too although its driver Pod missed the adoption label
// (an administrator's slip), and from-sparkhooks starts under sparkhooks and ends under Kubeflow. No
// driver or executor Pod may be deleted or created by a switch, every application must end
// COMPLETED, and its status must go on from what the other operator wrote. Beside them a
// schedule runs every minute, its first run by Kubeflow in progress at the first switch, its
// next by sparkhooks and, after the switch back, the next by Kubeflow again, each on time and
// alone, its history going on; and a SparkConnect server Kubeflow made serves throughout, adopted by sparkhooks,
// never deleted nor restarted.
func TestSwitchOverWithRunningApplications(t *testing.T) {
	ctx := context.Background()
	core, dyn := adminClients(t)
	if err := switchTo(t, core, stack.OperatorKubeflow); err != nil {
		t.Fatalf("installing Kubeflow's operator: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: sleeperConfigMap}, Data: map[string]string{"sleeper.py": sleeper, "nap.py": napper, "start-connect-server.sh": startConnectServer}}
	if _, err := core.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ledger, err := watchSparkPods(ctx, core)
	if err != nil {
		t.Fatal(err)
	}
	defer ledger.stop()
	apps := []string{"long-kubeflow", "short-kubeflow", "unlabelled-kubeflow", "from-sparkhooks"}
	defer cleanUpSwitchOver(t, core, dyn, apps)

	kubeflowAccount := driverAccounts[stack.OperatorKubeflow]
	apply(t, scheduledApp(kubeflowAccount))
	apply(t, connectServer(kubeflowAccount))
	apply(t, sleeperApp("long-kubeflow", kubeflowAccount, 300))
	apply(t, sleeperApp("short-kubeflow", kubeflowAccount, 130))
	apply(t, sleeperApp("unlabelled-kubeflow", kubeflowAccount, 130))
	before := map[string]map[string]any{}
	for _, name := range []string{"long-kubeflow", "short-kubeflow", "unlabelled-kubeflow"} {
		before[name] = waitExecutorRunning(t, dyn, name)
	}
	waitConnect(t, dyn, 5*time.Minute, anyStatus)
	srv := serverPod(t, core)
	first := waitFirstRunRunning(t, dyn)

	accounts := map[string]string{}
	began := time.Now()
	accounts[kubeflowAccount] = accountUID(t, core, kubeflowAccount)
	toSparkhooks(t, core)
	up := time.Now()
	t.Logf("Kubeflow to sparkhooks in %s", up.Sub(began).Round(100*time.Millisecond))
	waitConnect(t, dyn, 2*time.Minute, adoptedBy("KubeflowServerAdopted"))
	checkEvent(t, connectName, "SparkConnectAdopted")
	checkServerKept(t, core, srv, "under sparkhooks")
	apply(t, sleeperApp("from-sparkhooks", driverAccounts[stack.OperatorSparkhooks], 150))
	before["from-sparkhooks"] = waitExecutorRunning(t, dyn, "from-sparkhooks")
	// short-kubeflow and unlabelled-kubeflow end under sparkhooks, the others run on.
	for name, reason := range map[string]string{"short-kubeflow": "KubeflowDriverAdopted", "unlabelled-kubeflow": "KubeflowDriverNotOwned"} {
		final := waitCompleted(t, dyn, name)
		checkContinued(t, name, before[name], final, true)
		checkAdopted(t, name, final, reason)
	}
	// The schedule's first run, Kubeflow's, ends under sparkhooks, which starts the next one at
	// the time Kubeflow had set.
	checkAdopted(t, first.lastRunName, waitCompleted(t, dyn, first.lastRunName), "KubeflowDriverAdopted")
	ours := waitNextRun(t, dyn, first.lastRunName, first.nextRun, up, first.runs, stack.OperatorSparkhooks)
	if !slices.Contains(ours.succeeded, first.lastRunName) {
		t.Errorf("under sparkhooks, the schedule's history %v lacks Kubeflow's run %s", ours.succeeded, first.lastRunName)
	}
	for _, name := range []string{"long-kubeflow", "from-sparkhooks"} {
		if state := appState(t, dyn, name); state != "RUNNING" {
			t.Fatalf("%s is %s under sparkhooks at the switch back, want RUNNING", name, state)
		}
	}

	began = time.Now()
	accounts[driverAccounts[stack.OperatorSparkhooks]] = accountUID(t, core, driverAccounts[stack.OperatorSparkhooks])
	toKubeflow(t, core)
	up = time.Now()
	t.Logf("sparkhooks to Kubeflow in %s", up.Sub(began).Round(100*time.Millisecond))
	// Kubeflow's operator starts the schedule's next run at the time sparkhooks set.
	back := readSchedule(t, dyn)
	third := waitNextRun(t, dyn, back.lastRunName, back.nextRun, up, back.runs, stack.OperatorKubeflow)
	for _, run := range []string{first.lastRunName, ours.lastRunName} {
		if !slices.Contains(third.succeeded, run) {
			t.Errorf("back under Kubeflow, the schedule's history %v lacks run %s", third.succeeded, run)
		}
	}
	// Kubeflow's status message tells that its operator has taken the server back.
	waitConnect(t, dyn, 2*time.Minute, func(status map[string]any) bool {
		conditions, _, _ := unstructured.NestedSlice(status, "conditions")
		for _, c := range conditions {
			if c, _ := c.(map[string]any); c["type"] == "ServerPodReady" {
				return c["message"] == "Server pod is ready"
			}
		}
		return false
	})
	checkServerKept(t, core, srv, "back under Kubeflow")

	for _, name := range []string{"long-kubeflow", "from-sparkhooks"} {
		checkContinued(t, name, before[name], waitCompleted(t, dyn, name), false)
	}
	ledger.check(t, apps)
	ledger.checkKinds(t, []string{first.lastRunName, ours.lastRunName})
	// The drivers' tokens are bound to their ServiceAccounts: the same ones, not new ones of the
	// same name, must have outlived both charts.
	for name, uid := range accounts {
		if now := accountUID(t, core, name); now != uid {
			t.Errorf("ServiceAccount %s was replaced (uid %s, now %s): the drivers that ran as it lost their tokens", name, uid, now)
		}
	}
}

func accountUID(t *testing.T, core kubernetes.Interface, name string) string {
	t.Helper()
	sa, err := core.CoreV1().ServiceAccounts(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the drivers' ServiceAccount %s: %v", name, err)
	}
	return string(sa.UID)
}

// toSparkhooks is docs/migrate-from-kubeflow.md's way from Kubeflow to sparkhooks: keep the
// drivers' account past the uninstall, uninstall Kubeflow's chart, label what it made for
// adoption, install sparkhooks' chart.
func toSparkhooks(t *testing.T, core kubernetes.Interface) {
	ctx := context.Background()
	s := shared.stack
	if err := s.SetKubeflowValues(ctx, keepDriverAccount...); err != nil {
		t.Fatal(err)
	}
	if err := s.UninstallOperator(ctx); err != nil {
		t.Fatal(err)
	}
	runScript(t, "adopt-kubeflow-children.sh")
	// The slip: one driver Pod is not labelled, so Metacontroller releases it.
	if out, err := adminKubectl("label", "pod", "unlabelled-kubeflow-driver", "--namespace", namespace, "controller-uid-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The suite's own account of sparkhooks' name (switchTo) goes before the chart makes it.
	if err := removeExtraAccount(ctx, core); err != nil {
		t.Fatal(err)
	}
	if err := s.InstallSparkhooks(ctx); err != nil {
		t.Fatal(err)
	}
}

// toKubeflow is the way back: keep the drivers' account, uninstall sparkhooks' and
// Metacontroller's charts, take Metacontroller's finalizers off, install Kubeflow's chart.
func toKubeflow(t *testing.T, core kubernetes.Interface) {
	ctx := context.Background()
	s := shared.stack
	if err := s.SetChartValues(ctx, keepDriverAccount...); err != nil {
		t.Fatal(err)
	}
	if err := s.UninstallOperator(ctx); err != nil {
		t.Fatal(err)
	}
	runScript(t, "remove-metacontroller-finalizers.sh")
	if err := s.InstallKubeflow(ctx, shared.kubeflow); err != nil {
		t.Fatal(err)
	}
}

// keepDriverAccount keeps the driver's ServiceAccount, Role and RoleBinding when the chart goes:
// a running driver's token is bound to its ServiceAccount, and dies with it. Both charts take the
// same values.
var keepDriverAccount = []string{
	`spark.serviceAccount.annotations={"helm.sh/resource-policy":"keep"}`,
	`spark.rbac.annotations={"helm.sh/resource-policy":"keep"}`,
}

// runScript runs one of deploy/migrate's scripts as an administrator would, with kubectl on PATH.
func runScript(t *testing.T, name string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(repoRoot, "deploy", "migrate", name))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", script)
	kubeconfig := shared.stack.Kubeconfig
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "KUBECACHEDIR="+filepath.Join(filepath.Dir(kubeconfig), "kubectl-cache"))
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", name, out)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func apply(t *testing.T, manifest string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := adminKubectl("apply", "--namespace", namespace, "-f", file); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func appState(t *testing.T, dyn dynamic.Interface, name string) string {
	t.Helper()
	app, err := dyn.Resource(sparkApplications).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state")
	return state
}

// waitExecutorRunning waits until the application is RUNNING with its executor running, and
// returns its status then.
func waitExecutorRunning(t *testing.T, dyn dynamic.Interface, name string) map[string]any {
	t.Helper()
	return waitStatus(t, dyn, name, 5*time.Minute, func(status map[string]any) bool {
		state, _, _ := unstructured.NestedString(status, "applicationState", "state")
		executors, _, _ := unstructured.NestedStringMap(status, "executorState")
		for _, s := range executors {
			if s == "RUNNING" {
				return state == "RUNNING"
			}
		}
		return false
	})
}

func waitCompleted(t *testing.T, dyn dynamic.Interface, name string) map[string]any {
	t.Helper()
	return waitStatus(t, dyn, name, 10*time.Minute, func(status map[string]any) bool {
		state, _, _ := unstructured.NestedString(status, "applicationState", "state")
		if state == "FAILED" || state == "SUBMISSION_FAILED" {
			t.Fatalf("%s ended %s: %v", name, state, status)
		}
		executors, _, _ := unstructured.NestedStringMap(status, "executorState")
		for _, s := range executors {
			if s == "RUNNING" || s == "PENDING" {
				return false // the executors' last states land a sync after the driver's end
			}
		}
		return state == "COMPLETED"
	})
}

func waitStatus(t *testing.T, dyn dynamic.Interface, name string, timeout time.Duration, done func(map[string]any) bool) map[string]any {
	t.Helper()
	var status map[string]any
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		app, err := dyn.Resource(sparkApplications).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		status, _, _ = unstructured.NestedMap(app.Object, "status")
		return done(status), nil
	})
	if err != nil {
		out, _ := adminKubectl("get", "sparkapplications.sparkoperator.k8s.io", name, "--namespace", namespace, "-o", "yaml")
		pods, _ := adminKubectl("get", "pods", "--namespace", namespace, "-o", "wide")
		t.Fatalf("%s: %v\n%s\n%s", name, err, out, pods)
	}
	return status
}

// checkContinued compares an application's final status with the one seen while it ran under
// the operator that submitted it: the same attempt, counted the same, ended, with the same
// executors. Kubeflow's operator may settle an executor that ended well as FAILED: Spark deletes
// its executors' Pods as it stops, often before Kubeflow has read their last phase, and Kubeflow
// takes an executor Pod gone while the application still runs for a failure, whoever submitted
// it. So an executor must end COMPLETED only where sparkhooks saw the end (endedUnderSparkhooks).
func checkContinued(t *testing.T, name string, running, final map[string]any, endedUnderSparkhooks bool) {
	t.Helper()
	for _, path := range [][]string{
		{"submissionID"}, {"sparkApplicationId"}, {"lastSubmissionAttemptTime"},
		{"submissionAttempts"}, {"executionAttempts"}, {"driverInfo", "podName"},
	} {
		was, _, _ := unstructured.NestedFieldNoCopy(running, path...)
		is, _, _ := unstructured.NestedFieldNoCopy(final, path...)
		if fmt.Sprint(was) != fmt.Sprint(is) {
			t.Errorf("%s: status.%s was %v while it ran, is %v at the end", name, strings.Join(path, "."), was, is)
		}
	}
	if n, _, _ := unstructured.NestedInt64(final, "executionAttempts"); n != 1 {
		t.Errorf("%s: executionAttempts %d, want 1", name, n)
	}
	if end, _, _ := unstructured.NestedString(final, "terminationTime"); end == "" {
		t.Errorf("%s: no terminationTime", name)
	}
	executors, _, _ := unstructured.NestedStringMap(final, "executorState")
	ran, _, _ := unstructured.NestedStringMap(running, "executorState")
	for pod := range ran {
		switch executors[pod] {
		case "COMPLETED":
		case "FAILED":
			if !endedUnderSparkhooks {
				t.Logf("%s: executor %s ends FAILED under Kubeflow's operator, which missed its last phase", name, pod)
				continue
			}
			fallthrough
		default:
			t.Errorf("%s: executor %s ends %q, want COMPLETED (executorState %v)", name, pod, executors[pod], executors)
		}
	}
	t.Logf("%s: %v", name, final)
}

// checkAdopted wants the Adopted condition sparkhooks sets on an attempt Kubeflow submitted, with
// the reason that says how its driver Pod was followed, and the Event that told it.
func checkAdopted(t *testing.T, name string, status map[string]any, reason string) {
	t.Helper()
	conditions, _, _ := unstructured.NestedSlice(status, "conditions")
	found := false
	for _, c := range conditions {
		c, _ := c.(map[string]any)
		if c["type"] == "Adopted" {
			found = true
			if c["reason"] != reason {
				t.Errorf("%s: Adopted condition %v, want reason %s", name, c, reason)
			}
		}
	}
	if !found {
		t.Errorf("%s: no Adopted condition in %v", name, conditions)
	}
	checkEvent(t, name, map[string]string{"KubeflowDriverAdopted": "SparkApplicationAdopted", "KubeflowDriverNotOwned": "SparkDriverNotOwned"}[reason])
}

func checkEvent(t *testing.T, name, reason string) {
	t.Helper()
	out, err := adminKubectl("get", "events", "--namespace", namespace, "--field-selector", "involvedObject.name="+name+",reason="+reason, "-o", "name")
	if err != nil || strings.TrimSpace(out) == "" {
		t.Errorf("%s: no %s Event (%v)", name, reason, err)
	}
}

// podLedger records every Spark Pod created or deleted in the namespace while the test runs.
type podLedger struct {
	mu      sync.Mutex
	created map[string][]string // app → "role/name/uid"
	deleted []string
	errs    []error
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

func watchSparkPods(ctx context.Context, core kubernetes.Interface) (*podLedger, error) {
	ctx, cancel := context.WithCancel(ctx)
	l := &podLedger{created: map[string][]string{}, cancel: cancel}
	opts := metav1.ListOptions{LabelSelector: "spark-role"}
	list, err := core.CoreV1().Pods(namespace).List(ctx, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	known := map[string]bool{}
	for _, p := range list.Items {
		known[string(p.UID)] = true
	}
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		version := list.ResourceVersion
		for ctx.Err() == nil {
			w, err := core.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector, ResourceVersion: version})
			if err != nil {
				if ctx.Err() == nil {
					l.fail(err)
				}
				return
			}
			for e := range w.ResultChan() {
				pod, ok := e.Object.(*corev1.Pod)
				if !ok {
					if e.Type == watch.Error {
						l.fail(fmt.Errorf("watching pods: %v", e.Object))
						return
					}
					continue
				}
				version = pod.ResourceVersion
				l.seen(e.Type, pod, known)
			}
			w.Stop()
		}
	}()
	return l, nil
}

func (l *podLedger) seen(typ watch.EventType, pod *corev1.Pod, known map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := pod.Labels["spark-role"] + "/" + pod.Name + "/" + string(pod.UID)
	switch {
	case typ == watch.Added && !known[string(pod.UID)]:
		known[string(pod.UID)] = true
		app := pod.Labels["sparkoperator.k8s.io/app-name"]
		l.created[app] = append(l.created[app], id)
	case typ == watch.Deleted:
		l.deleted = append(l.deleted, id)
	}
}

func (l *podLedger) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *podLedger) stop() {
	l.cancel()
	l.done.Wait()
}

// check wants one driver and one executor Pod created per application, and none deleted: Spark
// deletes its executors as it ends, so executors may be gone, but only once their application is.
func (l *podLedger) check(t *testing.T, apps []string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range l.errs {
		t.Error(err)
	}
	for _, app := range apps {
		var drivers, executors []string
		for _, id := range l.created[app] {
			if strings.HasPrefix(id, "driver/") {
				drivers = append(drivers, id)
			} else {
				executors = append(executors, id)
			}
		}
		if len(drivers) != 1 || len(executors) != 1 {
			t.Errorf("%s: Pods created: %v; want one driver and one executor", app, l.created[app])
		}
	}
	for _, id := range l.deleted {
		if strings.HasPrefix(id, "driver/") {
			t.Errorf("driver Pod deleted: %s", id)
		}
	}
	sort.Strings(l.deleted)
	t.Logf("Spark Pods created: %v; deleted (executors, by their drivers at the end): %v", l.created, l.deleted)
}

// cleanUpSwitchOver deletes the applications and what the test made, and the driver account
// sparkhooks' chart left behind (kept by keepDriverAccount), as the document's last step does.
func cleanUpSwitchOver(t *testing.T, core kubernetes.Interface, dyn dynamic.Interface, apps []string) {
	ctx := context.Background()
	for _, name := range apps {
		if err := dyn.Resource(sparkApplications).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", name, err)
		}
	}
	// The schedule's runs and the server's Pods go with them.
	for gvr, name := range map[schema.GroupVersionResource]string{scheduledApps: scheduleName, sparkConnects: connectName} {
		if err := dyn.Resource(gvr).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", name, err)
		}
	}
	// Released by Metacontroller, the unlabelled driver Pod outlives its application, as its
	// Adopted condition said: it is deleted by hand.
	if err := core.CoreV1().Pods(namespace).Delete(ctx, "unlabelled-kubeflow-driver", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
	if err := core.CoreV1().ConfigMaps(namespace).Delete(ctx, sleeperConfigMap, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
	if out, err := adminKubectl("delete", "serviceaccount,role,rolebinding", "--namespace", namespace, "--ignore-not-found",
		"--selector", "app.kubernetes.io/instance=sparkhooks"); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		left, err := core.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(left.Items) == 0, nil
	})
	if err != nil {
		out, _ := adminKubectl("get", "all,sparkapplications.sparkoperator.k8s.io", "--namespace", namespace)
		t.Errorf("not all gone after 2 minutes:\n%s", out)
	}
}
