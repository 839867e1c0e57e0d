//go:build e2e

package spark

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestApacheSparkPi runs examples/apache/apache-spark-pi.yaml and apache-pyspark-pi.yaml, the
// Apache operator's pi.yaml and pi-python.yaml in their spark.apache.org/v1 form (Spark 4.0.1,
// the images as the sandbox names them), to the end Apache's own e2e assertion expects: the
// history Submitted, DriverRequested, DriverStarted, DriverReady, RunningHealthy, Succeeded,
// ResourceReleased, the driver released (resourceRetainPolicy OnFailure), and for the one with
// ttlAfterStopMillis the Expired condition sparkhooks gc deletes it on.
func TestApacheSparkPi(t *testing.T) {
	for _, name := range []string{"apache-spark-pi", "apache-pyspark-pi"} {
		t.Run(name, func(t *testing.T) { runApachePi(t, name) })
	}
}

func runApachePi(t *testing.T, name string) {
	n := newNamespace(t, "apache")
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "apache", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.applyManifest(data); err != nil {
		t.Fatal(err)
	}
	var driver string
	logChecked := false
	released := n.waitFor(apacheApplications, name, "ResourceReleased", appTimeout, func(app *unstructured.Unstructured) bool {
		if name := harness.NestedString(app, "status", "attempt", "driverInfo", "podName"); name != "" && driver == "" {
			driver = name
		}
		if driver != "" && !logChecked {
			// Read while the driver is there: OnFailure releases it once it succeeded.
			if pod, err := n.pod(driver); err == nil && pod.Status.Phase == "Succeeded" {
				if log, err := n.kubectl("logs", driver); err == nil {
					logChecked = true
					if !strings.Contains(log, "Pi is roughly 3.1") {
						t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driver, harness.Tail(log, 30))
					}
				}
			}
		}
		return harness.NestedString(app, "status", "currentState", "currentStateSummary") == "ResourceReleased"
	})
	want := []string{"Submitted", "DriverRequested", "DriverStarted", "DriverReady", "RunningHealthy", "Succeeded", "ResourceReleased"}
	if got := history(t, released); !slices.Equal(got, want) {
		t.Errorf("stateTransitionHistory = %v, want Apache's %v", got, want)
	}
	if driver != "" {
		if _, err := n.pod(driver); err == nil {
			t.Errorf("driver Pod %s is still there after ResourceReleased", driver)
		}
	}
	if ttl, _, _ := unstructured.NestedInt64(released.Object, "spec", "applicationTolerations", "ttlAfterStopMillis"); ttl <= 0 {
		return
	}
	n.waitFor(apacheApplications, name, "Expired", appTimeout, func(app *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Expired" && m["status"] == "True" {
				return true
			}
		}
		return false
	})
}

// history is an Apache status's stateTransitionHistory in key order.
func history(t *testing.T, app *unstructured.Unstructured) []string {
	t.Helper()
	h, _, _ := unstructured.NestedMap(app.Object, "status", "stateTransitionHistory")
	keys := make([]int, 0, len(h))
	for k := range h {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatalf("history key %q is not a number", k)
		}
		keys = append(keys, n)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		entry, _ := h[strconv.Itoa(k)].(map[string]any)
		s, _ := entry["currentStateSummary"].(string)
		out = append(out, s)
	}
	return out
}
