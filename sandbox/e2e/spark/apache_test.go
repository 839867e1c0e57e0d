//go:build e2e

package spark

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestApacheSparkPi runs examples/apache/apache-spark-pi.yaml and apache-pyspark-pi.yaml, the
// Apache operator's pi.yaml and pi-python.yaml in their spark.apache.org/v1 form (Spark 4.0.1,
// the images as the sandbox names them), to the end Apache's own e2e assertion expects: the
// history Submitted, DriverRequested, DriverStarted, DriverReady, RunningHealthy, Succeeded,
// ResourceReleased, the driver released (resourceRetainPolicy OnFailure), and the one with
// ttlAfterStopMillis deleted by the chart's gc within the minute Apache's e2e allows.
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
	ttl, _, _ := unstructured.NestedInt64(released.Object, "spec", "applicationTolerations", "ttlAfterStopMillis")
	if ttl <= 0 {
		return
	}
	// Apache's e2e allows a minute after the release (resource-retain-duration); the chart's gc
	// watches, and deletes once the hook marks the application Expired.
	releasedAt := time.Now()
	err = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := n.get(apacheApplications, name)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%s is still there a minute after ResourceReleased, with ttlAfterStopMillis %d", name, ttl)
	}
	t.Logf("%s deleted %s after ResourceReleased (ttlAfterStopMillis %d)", name, time.Since(releasedAt).Round(100*time.Millisecond), ttl)
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
