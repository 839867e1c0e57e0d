//go:build e2e

package local

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// apacheHistory is the history Apache's own e2e assertion
// (tests/e2e/assertions/spark-application/spark-state-transition.yaml) expects of an application
// that succeeds.
var apacheHistory = []string{"Submitted", "DriverRequested", "DriverStarted", "DriverReady", "RunningHealthy", "Succeeded", "ResourceReleased"}

// checkApacheExamples is the acceptance run of Apache's kind in make run APACHE=1:
// kubectl apply -f of Apache's examples/pi.yaml and pi-python.yaml from release, unchanged (they
// name apache/spark:4.2.0-scala and -python3, which the sandbox prepares as any release), end
// Succeeded then ResourceReleased with Apache's history; pi.yaml's ttlAfterStopMillis (10 s)
// then deletes it within Apache's e2e minute.
func (s *started) checkApacheExamples(t *testing.T, release string) {
	t.Helper()
	examples := map[string]string{"pi": "pi.yaml", "pi-python": "pi-python.yaml"}
	for _, file := range examples {
		if out, err := s.kubectl("apply", "-f", filepath.Join(release, "examples", file)); err != nil {
			t.Fatalf("kubectl apply -f %s: %v\n%s", file, err, out)
		}
	}
	const apps = "sparkapplications.spark.apache.org"
	started := time.Now()
	released := map[string]time.Time{}
	for name := range examples {
		for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
			out, err := s.kubectl("get", apps, name, "-o", "json")
			if err != nil {
				t.Fatalf("kubectl get %s %s: %v\n%s", apps, name, err, out)
			}
			var app apacheApplication
			if err := json.Unmarshal([]byte(out), &app); err != nil {
				t.Fatalf("kubectl get %s %s: %v", apps, name, err)
			}
			if app.Status.CurrentState.CurrentStateSummary == "ResourceReleased" {
				released[name] = time.Now()
				if got := app.history(); !slices.Equal(got, apacheHistory) {
					t.Errorf("%s: stateTransitionHistory %v, want Apache's %v", name, got, apacheHistory)
				}
				t.Logf("%s: ResourceReleased after %s, history %v", name, time.Since(started).Round(time.Second), app.history())
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is %s after 5 minutes, want ResourceReleased:\n%s", name, app.Status.CurrentState.CurrentStateSummary, out)
			}
		}
	}
	// Apache's e2e waits 60 s for the deletion after the release (resource-retain-duration).
	for deadline := released["pi"].Add(time.Minute); ; time.Sleep(time.Second) {
		out, err := s.kubectl("get", apps, "pi", "-o", "name", "--ignore-not-found")
		if err == nil && strings.TrimSpace(out) == "" {
			t.Logf("pi: deleted %s after ResourceReleased (ttlAfterStopMillis 10000)", time.Since(released["pi"]).Round(time.Second))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pi is still there a minute after ResourceReleased, with ttlAfterStopMillis 10000: %v %s", err, out)
		}
	}
}

// apacheApplication is what the check reads of an Apache SparkApplication.
type apacheApplication struct {
	Status struct {
		CurrentState           apacheState            `json:"currentState"`
		StateTransitionHistory map[string]apacheState `json:"stateTransitionHistory"`
	} `json:"status"`
}

type apacheState struct {
	CurrentStateSummary string `json:"currentStateSummary"`
}

// history is the states of the history in key order.
func (a *apacheApplication) history() []string {
	keys := make([]int, 0, len(a.Status.StateTransitionHistory))
	for k := range a.Status.StateTransitionHistory {
		n, err := strconv.Atoi(k)
		if err != nil {
			return []string{"key " + k + " is not a number"}
		}
		keys = append(keys, n)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, a.Status.StateTransitionHistory[strconv.Itoa(k)].CurrentStateSummary)
	}
	return out
}
