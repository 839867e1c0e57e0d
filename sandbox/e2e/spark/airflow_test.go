//go:build e2e

package spark

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// airflowDAGs are the DAGs the test runs, as a team writes them: Airflow's SparkKubernetesOperator
// and SparkKubernetesSensor with the connection AIRFLOW_CONN_SANDBOX (a kubeconfig), into the
// namespace SPARK_NAMESPACE.
const airflowDAGs = `
import copy, os, pathlib

import yaml
from airflow.sdk import DAG
from airflow.providers.cncf.kubernetes.operators.spark_kubernetes import SparkKubernetesOperator
from airflow.providers.cncf.kubernetes.sensors.spark_kubernetes import SparkKubernetesSensor

namespace = os.environ["SPARK_NAMESPACE"]
spark_pi_yaml = os.environ["SPARK_PI_YAML"]
spark_pi = yaml.safe_load(pathlib.Path(spark_pi_yaml).read_text())
common = dict(namespace=namespace, kubernetes_conn_id="sandbox", get_logs=True)

# examples/spark-pi.yaml as the application file (a template, found on the DAG's search path),
# and the sensor after it, as in Airflow's own example DAG; the application stays for the
# sensor, which reads its state and its driver's log.
with DAG("spark_pi", schedule=None, template_searchpath=[os.path.dirname(spark_pi_yaml)]):
    submit = SparkKubernetesOperator(task_id="submit", application_file=os.path.basename(spark_pi_yaml),
                                     random_name_suffix=False, delete_on_termination=False, **common)
    monitor = SparkKubernetesSensor(task_id="monitor", namespace=namespace, kubernetes_conn_id="sandbox",
                                    application_name="spark-pi", attach_log=True, poke_interval=5, timeout=300)
    submit >> monitor

# The template the provider's docs show (spark_job_template.yaml), with the image and the code
# given to the operator, as those docs do. It is written for a worker inside the cluster
# (in_cluster: true) whose driver may run as the namespace's default account; this worker is
# outside, with the connection's kubeconfig, and drivers of a job namespace run as the chart's
# spark account. Its sparkVersion, 3.0.0, would have sparkhooks start the driver as Spark 3.0's
# images want (docs/airflow.md): it says the image's version instead.
template = yaml.safe_load(pathlib.Path(os.environ["AIRFLOW_EXAMPLES"], "spark_job_template.yaml").read_text())
template["kubernetes"]["in_cluster"] = False
template["spark"]["spec"]["driver"]["serviceAccount"] = "spark"
template["spark"]["spec"]["sparkVersion"] = "4.0.1"
with DAG("template", schedule=None):
    SparkKubernetesOperator(task_id="pi", template_spec=template, image="apache/spark:4.0.1",
                            code_path="local:///opt/spark/examples/src/main/python/pi.py", **common)

# SparkPi with no slices: its driver fails at once, saying why.
failing = copy.deepcopy(spark_pi)
failing["spec"]["arguments"] = ["0"]
with DAG("failing", schedule=None):
    SparkKubernetesOperator(task_id="pi", template_spec=failing, **common)

# SparkPi with more slices than the test waits for: the task is killed while it runs.
endless = copy.deepcopy(spark_pi)
endless["spec"]["arguments"] = ["100000"]
with DAG("killed", schedule=None):
    SparkKubernetesOperator(task_id="pi", template_spec=endless, **common)
`

// airflow runs Airflow commands with one AIRFLOW_HOME: the DAGs above, the metadata database
// make airflow migrated, and a Kubernetes connection whose kubeconfig is a worker's
// ServiceAccount bound to the namespace's edit role.
type airflow struct {
	n    *namespace
	dir  string // what hack/airflow/build.sh prints
	home string
	env  []string
}

func newAirflow(t *testing.T, n *namespace) *airflow {
	t.Helper()
	dir := os.Getenv("SPARKHOOKS_AIRFLOW_DIR")
	if dir == "" {
		t.Fatal("SPARKHOOKS_AIRFLOW_DIR is not set: make airflow (hack/airflow/build.sh) installs Airflow, make e2e exports it")
	}
	home := t.TempDir()
	db, err := os.ReadFile(filepath.Join(dir, "airflow.db"))
	if err != nil {
		t.Fatalf("%v (make airflow)", err)
	}
	dags := filepath.Join(home, "dags")
	if err := os.Mkdir(dags, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"airflow.db": db, "dags/spark.py": []byte(airflowDAGs)} {
		if err := os.WriteFile(filepath.Join(home, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(home, "kubeconfig")
	writeWorkerKubeconfig(t, n, kubeconfig)
	conn, err := json.Marshal(map[string]any{"conn_type": "kubernetes", "extra": map[string]string{"kube_config_path": kubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs(filepath.Join(repoRoot, "examples", "spark-pi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return &airflow{n: n, dir: dir, home: home, env: append(os.Environ(),
		"AIRFLOW_HOME="+home,
		"AIRFLOW__CORE__DAGS_FOLDER="+dags,
		"AIRFLOW__CORE__LOAD_EXAMPLES=False",
		"AIRFLOW_CONN_SANDBOX="+string(conn),
		"SPARK_NAMESPACE="+n.name,
		"SPARK_PI_YAML="+examples,
		"AIRFLOW_EXAMPLES="+filepath.Join(dir, "examples"),
	)}
}

// writeWorkerKubeconfig writes a kubeconfig for the ServiceAccount airflow-worker, which may do
// in the namespace what its edit role allows, as an Airflow worker given a namespace to run
// Spark in.
func writeWorkerKubeconfig(t *testing.T, n *namespace, path string) {
	t.Helper()
	ctx := context.Background()
	if _, err := n.core.CoreV1().ServiceAccounts(n.name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "airflow-worker"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "airflow-worker-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "airflow-worker", Namespace: n.name}},
	}
	if _, err := n.core.RbacV1().RoleBindings(n.name).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := n.core.CoreV1().ServiceAccounts(n.name).CreateToken(ctx, "airflow-worker", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin := shared.stack.Admin
	ca := admin.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["sandbox"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: ca}
	config.AuthInfos["airflow-worker"] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	config.Contexts["airflow-worker"] = &clientcmdapi.Context{Cluster: "sandbox", AuthInfo: "airflow-worker", Namespace: n.name}
	config.CurrentContext = "airflow-worker"
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
}

// command is `airflow args...` with the test's home; its output goes to out.
func (a *airflow) command(out *harness.LockedBuffer, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(a.dir, "venv", "bin", "airflow"), args...)
	cmd.Env, cmd.Dir = a.env, a.home
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// run runs `airflow args...` to its end, within timeout, and returns its output and exit error.
func (a *airflow) run(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	var out harness.LockedBuffer
	cmd := a.command(&out, args...)
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Logf("airflow %s: %s (%v)", strings.Join(args, " "), time.Since(begin).Round(100*time.Millisecond), err)
		return out.String(), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("airflow %s still running after %s:\n%s", strings.Join(args, " "), timeout, harness.Tail(out.String(), 60))
		return "", nil
	}
}

// TestAirflow runs Apache Airflow's SparkKubernetesOperator and SparkKubernetesSensor
// (apache-airflow-providers-cncf-kubernetes 10.25.0 on Airflow 3.3.2, installed from PyPI by make
// airflow) as Airflow runs tasks, with no scheduler: `airflow dags test` of one DAG per case (it
// exits 1 when the run failed; `airflow tasks test` exits 0 whatever the task did), against
// sparkhooks, as a worker bound to the namespace's edit role. examples/spark-pi.yaml and the
// template of the provider's docs succeed with the driver's log in the task's; a failing
// application fails its task with the driver's error; a task killed (SIGTERM, as a worker is
// stopped) deletes its application in on_kill. The cases run side by side, each in a namespace
// and an Airflow home of its own, as workers of one Airflow would: most of a case is waiting for
// Airflow's start and for pods.
func TestAirflow(t *testing.T) {
	newCase := func(t *testing.T) *airflow {
		t.Parallel()
		return newAirflow(t, newNamespace(t, "airflow"))
	}

	t.Run("spark-pi", func(t *testing.T) {
		a := newCase(t)
		out, err := a.run(t, 5*time.Minute, "dags", "test", "spark_pi")
		if err != nil || !strings.Contains(out, "Pi is roughly 3.1") {
			t.Fatalf("airflow dags test spark_pi: %v; want success with the driver's \"Pi is roughly 3.1\":\n%s", err, harness.Tail(out, 80))
		}
		// The run succeeded, so both tasks did; the sensor, once COMPLETED, attaches the
		// driver's log too.
		if got := strings.Count(out, "Pi is roughly 3.1"); got < 2 {
			t.Errorf("the driver's Pi line is in the output %d times, want twice (operator and sensor):\n%s", got, harness.Tail(out, 80))
		}
		// The operator was told to leave it (delete_on_termination=False) for the sensor.
		if err := a.n.dyn.Resource(sparkApplications).Namespace(a.n.name).Delete(context.Background(), "spark-pi", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting the SparkApplication the operator left: %v", err)
		}
		requireNoSparkApplications(t, a.n, time.Minute)
	})

	t.Run("template", func(t *testing.T) {
		a := newCase(t)
		out, err := a.run(t, 5*time.Minute, "dags", "test", "template")
		if err != nil || !strings.Contains(out, "Pi is roughly 3.1") {
			t.Fatalf("airflow dags test template: %v; want success with the driver's \"Pi is roughly 3.1\":\n%s", err, harness.Tail(out, 80))
		}
		// delete_on_termination (the default): the task deletes its application when it ends.
		requireNoSparkApplications(t, a.n, time.Minute)
	})

	t.Run("failing", func(t *testing.T) {
		a := newCase(t)
		out, err := a.run(t, 5*time.Minute, "dags", "test", "failing")
		const cause = "the number of slices must be positive, got 0"
		if err == nil || !strings.Contains(out, cause) {
			t.Fatalf("airflow dags test failing: %v; want a failed task saying %q:\n%s", err, cause, harness.Tail(out, 80))
		}
		// Airflow leaves a failed application: its cleanup looks for the driver with a field
		// selector that excludes Failed pods, so it deletes one only when it reads the driver
		// before its phase turns Failed. Delete it as a user would, and see the finalize hook
		// release the driver.
		if err := a.n.dyn.Resource(sparkApplications).Namespace(a.n.name).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatalf("delete the failed application: %v", err)
		}
		requireNoSparkApplications(t, a.n, time.Minute)
	})

	t.Run("killed", func(t *testing.T) {
		a := newCase(t)
		var out harness.LockedBuffer
		cmd := a.command(&out, "dags", "test", "killed")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// exited closes once the process has been waited for, which the test and its cleanup
		// both wait on.
		var waitErr error
		exited := make(chan struct{})
		go func() {
			waitErr = cmd.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		// Killed once Airflow streams the running driver's log, as it does until the end.
		if err := wait.PollUntilContextTimeout(context.Background(), time.Second, 4*time.Minute, true, func(context.Context) (bool, error) {
			return strings.Contains(out.String(), "Running Spark version"), nil
		}); err != nil {
			t.Fatalf("the task never streamed the driver's log:\n%s", harness.Tail(out.String(), 60))
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		requireNoSparkApplications(t, a.n, time.Minute)
		if !strings.Contains(out.String(), "Deleting spark job for task pi") {
			t.Errorf("the application is gone, but not by on_kill:\n%s", harness.Tail(out.String(), 60))
		}
		select {
		case <-exited:
			t.Logf("the killed task ended: %v", waitErr)
		case <-time.After(2 * time.Minute):
			t.Errorf("the killed task still runs 2 minutes after SIGTERM:\n%s", harness.Tail(out.String(), 40))
		}
	})
}

// requireNoSparkApplications waits until the namespace has no SparkApplication, and its driver
// pods are gone too (the garbage collector deletes them with their application).
func requireNoSparkApplications(t *testing.T, n *namespace, timeout time.Duration) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		left = nil
		apps, err := n.dyn.Resource(sparkApplications).Namespace(n.name).List(ctx, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		for _, app := range apps.Items {
			left = append(left, "SparkApplication "+app.GetName())
		}
		pods, err := n.core.CoreV1().Pods(n.name).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=driver"})
		if err != nil {
			return false, err
		}
		for _, pod := range pods.Items {
			left = append(left, "pod "+pod.Name)
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("want no SparkApplication and no driver left within %s: %v; left %v", timeout, err, left)
	}
}
