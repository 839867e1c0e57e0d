//go:build e2e

package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// clusterTimeout bounds a standalone cluster's start: a master and three workers, each a JVM,
// started in order by the StatefulSet controller.
const clusterTimeout = 3 * time.Minute

// TestSparkClusterRunsSparkPi runs examples/spark-cluster.yaml (a real standalone master and
// three workers) to RunningHealthy, then examples/spark-pi-on-cluster.yaml on it: the driver is
// a Kubernetes pod, its executors are the workers' (the standalone master's, not ours).
//
// On the real node it runs alone, before the tests that run side by side: five JVMs on two cores
// beside other applications starved the master's UI past the 150 s its liveness probe allows.
func TestSparkClusterRunsSparkPi(t *testing.T) {
	n := newNamespace(t, "cluster")
	applied := time.Now()
	n.applyExample("spark-cluster.yaml")
	n.waitFor(sparkClusters, "spark-cluster", "RunningHealthy", clusterTimeout, func(c *unstructured.Unstructured) bool {
		return harness.NestedString(c, "status", "currentState", "currentStateSummary") == "RunningHealthy"
	})
	t.Logf("RunningHealthy %s after the apply", time.Since(applied).Round(100*time.Millisecond))
	masterURL, err := n.serviceURL("spark-cluster-master-svc", 8080)
	if err != nil {
		t.Fatal(err)
	}
	var master struct {
		AliveWorkers  int `json:"aliveworkers"`
		Cores         int `json:"cores"`
		CompletedApps []struct {
			Name  string `json:"name"`
			State string `json:"state"`
			Cores int    `json:"cores"`
		} `json:"completedapps"`
	}
	readMaster := func() error {
		body, err := httpGet(masterURL + "/json/")
		if err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(body), &master); err != nil {
			return fmt.Errorf("master /json/: %w: %s", err, body)
		}
		return nil
	}
	// A worker is ready only once it has registered with the master (its readiness probe needs
	// the connection it registered over), so at RunningHealthy the master already counts every
	// worker: the first answer of the master must, with no waiting for registrations.
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return readMaster() == nil, nil
	})
	if err != nil {
		t.Fatalf("the master's /json/ does not answer: %v", readMaster())
	}
	if master.AliveWorkers != 3 || master.Cores != 6 {
		t.Fatalf("at RunningHealthy the master counts %d workers with %d cores, want 3 with 6 (SPARK_WORKER_CORES=2)", master.AliveWorkers, master.Cores)
	}

	n.applyExample("spark-pi-on-cluster.yaml")
	app := n.waitCompleted("spark-pi-on-cluster", appTimeout)
	driver := harness.NestedString(app, "status", "driverInfo", "podName")
	log := n.logs(driver, "")
	if !strings.Contains(log, "Pi is roughly 3.1") {
		t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driver, harness.Tail(log, 30))
	}
	checkNoErrors(t, driver, log)
	if err := readMaster(); err != nil {
		t.Fatal(err)
	}
	if len(master.CompletedApps) != 1 || master.CompletedApps[0].Name != "Spark Pi" || master.CompletedApps[0].State != "FINISHED" {
		t.Errorf("the master's completed applications: %+v, want Spark Pi FINISHED", master.CompletedApps)
	}

	// A deleted cluster's daemons hear the kubelet's SIGTERM, the JVM being each container's
	// first process, and are gone in seconds. A first process that ignores SIGTERM (the bash of
	// sbin/spark-daemon.sh in the foreground) leaves them to the kill at the end of the 30 s
	// grace period.
	deleted := time.Now()
	if err := n.dyn.Resource(sparkClusters).Namespace(n.name).Delete(context.Background(), "spark-cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	const goneWithin = 25 * time.Second
	err = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, goneWithin, true, func(ctx context.Context) (bool, error) {
		pods, err := n.core.CoreV1().Pods(n.name).List(ctx, metav1.ListOptions{LabelSelector: "spark.operator/spark-cluster-name=spark-cluster"})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("the deleted cluster's pods are still there after %s (its pods' grace period is 30 s): the daemons did not stop on SIGTERM", goneWithin)
	}
	t.Logf("the deleted cluster's pods were gone after %s", time.Since(deleted).Round(100*time.Millisecond))
}

// TestSparkClusterBehindAUIFilter runs a cluster whose UIs let in only requests with a JSON Web
// Signature (spark.ui.filters with Spark's JWSFilter, as Apache's
// examples/cluster-with-jws-filter.yaml sets it). Its probes must not need the UI to let them in:
// an HTTP probe gets 403, and the daemons were never ready and were restarted over and over.
func TestSparkClusterBehindAUIFilter(t *testing.T) {
	n := newNamespace(t, "jws")
	applied := time.Now()
	n.apply(`
apiVersion: spark.apache.org/v1
kind: SparkCluster
metadata:
  name: jws
spec:
  runtimeVersions:
    sparkVersion: "4.0.1"
  clusterTolerations:
    instanceConfig: {initWorkers: 1, minWorkers: 1, maxWorkers: 1}
  sparkConf:
    spark.ui.filters: org.apache.spark.ui.JWSFilter
    spark.master.rest.enabled: "true"
    spark.master.rest.filters: org.apache.spark.ui.JWSFilter
    spark.org.apache.spark.ui.JWSFilter.param.secretKey: VmlzaXQgaHR0cHM6Ly9zcGFyay5hcGFjaGUub3JnIHRvIGRvd25sb2FkIEFwYWNoZSBTcGFyay4=
  workerSpec:
    statefulSetSpec:
      template:
        spec:
          containers:
            - name: worker
              env:
                - {name: SPARK_WORKER_CORES, value: "1"}
                - {name: SPARK_WORKER_MEMORY, value: 1g}
`)
	n.waitFor(sparkClusters, "jws", "RunningHealthy", clusterTimeout, func(c *unstructured.Unstructured) bool {
		return harness.NestedString(c, "status", "currentState", "currentStateSummary") == "RunningHealthy"
	})
	t.Logf("RunningHealthy %s after the apply", time.Since(applied).Round(100*time.Millisecond))
	// The filter is on: the UI refuses a request without a token.
	masterURL, err := n.serviceURL("jws-master-svc", 8080)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpGet(masterURL + "/json/"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("the master's UI answered a request without a token with %v, want 403 Forbidden: the filter is not on", err)
	}
	pods, err := n.core.CoreV1().Pods(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "spark.operator/spark-cluster-name=jws"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		for _, c := range pod.Status.ContainerStatuses {
			if c.RestartCount > 0 || !c.Ready {
				t.Errorf("Pod %s, container %s: ready %v, %d restarts (last state %+v)", pod.Name, c.Name, c.Ready, c.RestartCount, c.LastTerminationState)
			}
		}
	}
}
