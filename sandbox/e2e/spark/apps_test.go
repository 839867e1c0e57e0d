//go:build e2e

package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

func TestPySparkPi(t *testing.T) {
	parallelOnRealNode(t)
	for _, tc := range []struct{ example, app, version string }{
		{"pyspark-pi.yaml", "pyspark-pi", "3.5.3"},
		{"pyspark-pi-spark4.yaml", "pyspark-pi-spark4", "4.0.1"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			parallelOnRealNode(t)
			n := newNamespace(t, "pyspark")
			n.applyExample(tc.example)
			app := n.waitCompleted(tc.app, appTimeout)
			driver := harness.NestedString(app, "status", "driverInfo", "podName")
			log := n.logs(driver, "")
			if !strings.Contains(log, "Pi is roughly 3.1") {
				t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driver, harness.Tail(log, 30))
			}
			checkNoErrors(t, driver, log)
		})
	}
}

// TestFailingDriverIsRetriedThenFailed runs a driver whose main class does not exist, with one
// retry on failure: two real attempts, then FAILED with a message that says why.
func TestFailingDriverIsRetriedThenFailed(t *testing.T) {
	parallelOnRealNode(t)
	n := newNamespace(t, "failing")
	n.apply(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: no-such-class
spec:
  type: Scala
  sparkVersion: 3.5.3
  image: apache/spark:3.5.3
  mainClass: org.apache.spark.examples.NoSuchClass
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  restartPolicy:
    type: OnFailure
    onFailureRetries: 1
    onFailureRetryInterval: 1
  driver:
    cores: 1
    memory: 512m
    serviceAccount: spark
  executor:
    instances: 1
    cores: 1
    memory: 512m
`)
	app := n.waitAppState("no-such-class", "FAILED", appTimeout)
	if got, _, _ := unstructured.NestedInt64(app.Object, "status", "executionAttempts"); got != 2 {
		t.Errorf("status.executionAttempts = %d, want 2 (the first run and one retry)", got)
	}
	msg := harness.NestedString(app, "status", "applicationState", "errorMessage")
	for _, want := range []string{"exit code 101", "org.apache.spark.examples.NoSuchClass"} {
		if !strings.Contains(msg, want) {
			t.Errorf("errorMessage %q does not contain %q", msg, want)
		}
	}
	t.Logf("errorMessage: %s", msg)
}

// TestExitExceptionOnSpark43 runs a Spark 4.3 driver whose main method throws: the driver writes
// the exception on its own Pod (spark.kubernetes.driver.annotateExitException, which sparkhooks
// sets from 4.1) and the status says it.
func TestExitExceptionOnSpark43(t *testing.T) {
	n := newNamespace(t, "exit")
	n.apply(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: bad-argument
spec:
  type: Scala
  sparkVersion: 4.3.0
  image: apache/spark:4.3.0
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.13-4.3.0.jar
  arguments: ["not-a-number"]
  driver:
    cores: 1
    memory: 512m
    serviceAccount: spark
  executor:
    instances: 1
    cores: 1
    memory: 512m
`)
	app := n.waitAppState("bad-argument", "FAILED", appTimeout)
	driver, err := n.pod(harness.NestedString(app, "status", "driverInfo", "podName"))
	if err != nil {
		t.Fatal(err)
	}
	const exception = `java.lang.NumberFormatException: For input string: "not-a-number"`
	if annotation := driver.Annotations["spark.exit-exception"]; !strings.HasPrefix(annotation, exception) {
		t.Errorf("driver annotation spark.exit-exception = %q, want the exception %s with its stack", harness.Tail(annotation, 5), exception)
	}
	msg := harness.NestedString(app, "status", "applicationState", "errorMessage")
	if !strings.HasSuffix(msg, ": "+exception) {
		t.Errorf("errorMessage %q does not end with the exception %s", msg, exception)
	}
	t.Logf("errorMessage: %s", msg)
}

// TestSparkUI reads the Spark UI's REST API through the application's UI Service while SparkPi
// runs, as a user's port-forward or Ingress would.
func TestSparkUI(t *testing.T) {
	parallelOnRealNode(t)
	n := newNamespace(t, "ui")
	n.applyExample("spark-pi.yaml")
	var applications string
	var lastErr error
	var list []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	n.waitFor(sparkApplications, "spark-pi", "the UI to answer while running", appTimeout, func(app *unstructured.Unstructured) bool {
		if state := appState(app); state == "COMPLETED" || state == "FAILED" {
			t.Fatalf("spark-pi ended %s before its UI answered (last error: %v)", state, lastErr)
		}
		service := harness.NestedString(app, "status", "driverInfo", "webUIServiceName")
		if service == "" {
			return false
		}
		port, _, _ := unstructured.NestedInt64(app.Object, "status", "driverInfo", "webUIPort")
		base, err := n.serviceURL(service, int32(port))
		if err != nil {
			lastErr = err
			return false
		}
		applications, lastErr = httpGet(base + "/api/v1/applications")
		if lastErr != nil {
			return false
		}
		// While the SparkContext starts, the UI answers 200 with a plain-text "starting up".
		list = nil
		if lastErr = json.Unmarshal([]byte(applications), &list); lastErr != nil {
			lastErr = fmt.Errorf("%w: %s", lastErr, applications)
			return false
		}
		return true
	})
	if len(list) != 1 {
		t.Fatalf("/api/v1/applications lists %d applications, want 1: %s", len(list), applications)
	}
	app, err := n.get(sparkApplications, "spark-pi")
	if err != nil {
		t.Fatal(err)
	}
	if want := harness.NestedString(app, "status", "sparkApplicationId"); list[0].ID != want {
		t.Errorf("the UI serves application %q, want %q (status.sparkApplicationId)", list[0].ID, want)
	}
}

// serviceURL is how a Service's port reaches a pod from the host. On the real node, its cluster
// IP: the host routes the Service network to the node, where kube-proxy takes the connection to
// a ready endpoint. The process kubelet has no kube-proxy, so there, and for a headless Service
// (whose name the cluster DNS resolves to its endpoints), it is what kube-proxy or the DNS
// would choose: a ready pod the selector picks, at the target port.
func (n *namespace) serviceURL(name string, port int32) (string, error) {
	ctx := context.Background()
	svc, err := n.core.CoreV1().Services(n.name).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if ip := svc.Spec.ClusterIP; shared.stack.Node != nil && ip != "" && ip != corev1.ClusterIPNone {
		return "http://" + net.JoinHostPort(ip, strconv.Itoa(int(port))), nil
	}
	var target *intstr.IntOrString
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			target = &p.TargetPort
		}
	}
	if target == nil {
		return "", fmt.Errorf("service %s has no port %d", name, port)
	}
	pods, err := n.core.CoreV1().Pods(n.name).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return "", err
	}
	for _, pod := range pods.Items {
		if pod.Status.PodIP == "" || !podReady(&pod) {
			continue
		}
		targetPort := int(port)
		switch {
		case target.Type == intstr.Int && target.IntVal != 0:
			targetPort = int(target.IntVal)
		case target.Type == intstr.String:
			if targetPort = namedPort(&pod, target.StrVal); targetPort == 0 {
				continue
			}
		}
		return "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(targetPort)), nil
	}
	return "", fmt.Errorf("service %s selects no ready pod", name)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func namedPort(pod *corev1.Pod, name string) int {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return int(p.ContainerPort)
			}
		}
	}
	return 0
}

func httpGet(url string) (string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return string(body), nil
}
