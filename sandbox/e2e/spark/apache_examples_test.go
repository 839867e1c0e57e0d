//go:build e2e

package spark

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// Apache's histories: of an application that succeeds (its e2e assertion
// spark-state-transition.yaml), of a server (an application that runs until deleted) and of a
// cluster (spark-cluster-state-transition.yaml).
var (
	apacheSucceeded = []string{"Submitted", "DriverRequested", "DriverStarted", "DriverReady", "RunningHealthy", "Succeeded", "ResourceReleased"}
	apacheServing   = []string{"Submitted", "DriverRequested", "DriverStarted", "DriverReady", "RunningHealthy"}
	apacheCluster   = []string{"Submitted", "RunningHealthy"}
)

// apacheExample is one of the Apache operator 1.0.0's examples (APACHE_SPARK_OPERATOR's
// examples/) and the end its documentation gives it.
type apacheExample struct {
	file, name string
	gvr        schema.GroupVersionResource
	history    []string
	// needs is an example applied first in the same namespace and waited for: what this one
	// addresses by name.
	needs *apacheExample
	// driverLog is what the driver's log (Pod <name>-0-driver) shows once the application does
	// what its example is for, beyond its state.
	driverLog string
	// slow ends as documented, but make e2e cannot afford its time: minutes of two cores, or a
	// SparkCluster that adds workers to what qa's covers. make e2e-apache
	// (SPARKHOOKS_APACHE_E2E=all) runs it, make e2e does not.
	slow bool
}

// apacheProd is prod-cluster-with-three-workers.yaml, the cluster
// spark-connect-server-with-spark-cluster.yaml's server runs its executors on.
var apacheProd = &apacheExample{file: "prod-cluster-with-three-workers.yaml", name: "prod", gvr: sparkClusters, history: apacheCluster}

// apacheExamples are the examples TestApacheExamples runs unchanged. pi.yaml and pi-python.yaml
// run in make run's own test (sandbox/e2e/local). docs/apache.md lists the others and why they
// do not run here.
var apacheExamples = []apacheExample{
	{file: "pi-java17.yaml", name: "pi-java17", gvr: apacheApplications, history: apacheSucceeded},
	{file: "pi-v1beta1.yaml", name: "pi-v1beta1", gvr: apacheApplications, history: apacheSucceeded},
	{file: "pi-with-template.yaml", name: "pi-with-template", gvr: apacheApplications, history: apacheSucceeded},
	{file: "sql.yaml", name: "sql", gvr: apacheApplications, history: apacheSucceeded},
	{file: "word-count.yaml", name: "word-count", gvr: apacheApplications, history: apacheSucceeded},
	{file: "spark-connect-server.yaml", name: "spark-connect-server", gvr: apacheApplications, history: apacheServing},
	{file: "spark-thrift-server.yaml", name: "spark-thrift-server", gvr: apacheApplications, history: apacheServing},
	{file: "qa-cluster-with-one-worker.yaml", name: "qa", gvr: sparkClusters, history: apacheCluster},
	{file: "pi-statefulset.yaml", name: "pi-statefulset", gvr: apacheApplications, history: apacheSucceeded, slow: true},
	{file: "cluster.yaml", name: "cluster", gvr: sparkClusters, history: apacheCluster, slow: true},
	{file: "cluster-with-hpa.yaml", name: "cluster-with-hpa", gvr: sparkClusters, history: apacheCluster, slow: true},
	{file: "cluster-with-hpa-template.yaml", name: "cluster-with-hpa-template", gvr: sparkClusters, history: apacheCluster, slow: true},
	{file: "spark-connect-server-with-spark-cluster.yaml", name: "spark-connect-server", gvr: apacheApplications, history: apacheServing, needs: apacheProd, slow: true,
		// Its executors run on prod's workers: the standalone master takes the application.
		driverLog: "Connected to Spark cluster with app ID "},
}

// TestApacheExamples applies each of apacheExamples, as a user of Apache's operator would, in a
// namespace of its own, two at a time (their JVMs share two cores), and waits for the history its
// documentation gives it.
func TestApacheExamples(t *testing.T) {
	release := os.Getenv("APACHE_SPARK_OPERATOR")
	if release == "" {
		t.Skip("APACHE_SPARK_OPERATOR names no Apache Spark Kubernetes Operator 1.0.0 source tree (make sets it when ../shared/apache-spark-kubernetes-operator/1.0.0 exists)")
	}
	began := time.Now()
	var ran atomic.Int32
	t.Cleanup(func() { t.Logf("%d examples in %s", ran.Load(), time.Since(began).Round(time.Second)) })
	slots := make(chan struct{}, 2)
	all := os.Getenv("SPARKHOOKS_APACHE_E2E") == "all"
	for _, ex := range apacheExamples {
		if ex.slow && !all {
			continue
		}
		t.Run(ex.file, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			ran.Add(1)
			n := newNamespace(t, "apache-example")
			if ex.needs != nil {
				runApacheExample(t, n, release, *ex.needs)
			}
			runApacheExample(t, n, release, ex)
		})
	}
}

// runApacheExample applies ex in n, as a user of Apache's operator would, and waits for the end
// of the history its documentation gives it.
func runApacheExample(t *testing.T, n *namespace, release string, ex apacheExample) {
	t.Helper()
	started := time.Now()
	data, err := os.ReadFile(filepath.Join(release, "examples", ex.file))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := n.applyManifest(data); err != nil {
		t.Fatalf("kubectl apply -f %s: %v\n%s", ex.file, err, out)
	}
	end := ex.history[len(ex.history)-1]
	timeout := appTimeout
	if ex.slow {
		timeout *= 4
	}
	done := n.waitFor(ex.gvr, ex.name, end, timeout, func(obj *unstructured.Unstructured) bool {
		return harness.NestedString(obj, "status", "currentState", "currentStateSummary") == end
	})
	if got := history(t, done); !slices.Equal(got, ex.history) {
		t.Errorf("%s: stateTransitionHistory %v, want %v", ex.file, got, ex.history)
	}
	t.Logf("%s: %s after %s", ex.file, end, time.Since(started).Round(100*time.Millisecond))
	if ex.driverLog != "" {
		driver, log := ex.name+"-0-driver", ""
		err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(context.Context) (bool, error) {
			log, _ = n.kubectl("logs", driver)
			return strings.Contains(log, ex.driverLog), nil
		})
		if err != nil {
			t.Errorf("%s: the log of %s has no %q:\n%s", ex.file, driver, ex.driverLog, harness.Tail(log, 30))
		} else {
			t.Logf("%s: %q in the driver's log after %s", ex.file, ex.driverLog, time.Since(started).Round(100*time.Millisecond))
		}
	}
}
