//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// defaultScale is how many applications TestAPIWritesPerApplication runs in CI;
// SPARKHOOKS_E2E_SCALE=300 measures at the scale.
const defaultScale = 20

// TestAPIWritesPerApplication runs N small SparkApplications to COMPLETED at once in a job
// namespace, with the Events sparkhooks records, and reports what each cost the API server:
// status writes, children created and Events. Each application gets each of its Events once:
// none is lost to the recorder's rate limit or repeated by a resync.
func TestAPIWritesPerApplication(t *testing.T) {
	n := defaultScale
	if v := os.Getenv("SPARKHOOKS_E2E_SCALE"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "SPARKHOOKS_E2E_SCALE")
	}
	w := newJobWorld(t, hooksURL, appController)
	var manifest strings.Builder
	for i := range n {
		// Requests small enough for N drivers on the fake node at once.
		fmt.Fprintf(&manifest, `---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: app-%03d
spec:
  type: Scala
  image: apache/spark:3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  sparkVersion: 3.5.3
  restartPolicy: {type: Never}
  driver: {cores: 1, coreRequest: 10m, memory: 64m, serviceAccount: spark}
  executor: {instances: 1, cores: 1, coreRequest: 10m, memory: 64m}
`, i)
	}
	out, err := w.apply(manifest.String())
	require.NoError(t, err, out)

	started := time.Now()
	ctx := context.Background()
	// The test plays the drivers: started once bound, succeeded once their application runs.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		apps, err := w.dyn.Resource(sparkApplications).Namespace(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pods, err := w.core.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		byName := map[string]corev1.Pod{}
		for _, p := range pods.Items {
			byName[p.Name] = p
		}
		completed := 0
		for _, app := range apps.Items {
			pod, ok := byName[app.GetName()+"-driver"]
			switch state := appState(&app); {
			case state == "COMPLETED":
				completed++
			case state == "FAILED":
				return false, fmt.Errorf("%s FAILED: %s", app.GetName(), describeApp(&app))
			case ok && pod.Spec.NodeName != "" && pod.Status.Phase == corev1.PodPending:
				if err := w.kubelet.Start(ctx, pod.Name); err != nil {
					return false, err
				}
			case ok && state == "RUNNING" && pod.Status.Phase == corev1.PodRunning:
				if err := w.kubelet.Succeed(ctx, pod.Name); err != nil {
					return false, err
				}
			}
		}
		return completed == n, nil
	})
	require.NoError(t, err, "%d SparkApplications to COMPLETED", n)
	elapsed := time.Since(started)

	// The recorder writes after answering, at its own pace: give the last Events a moment.
	var reasons map[string]map[string]int
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := w.core.EventsV1().Events(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		reasons = map[string]map[string]int{}
		for _, e := range list.Items {
			if e.ReportingController != "sparkhooks" {
				continue
			}
			if reasons[e.Regarding.Name] == nil {
				reasons[e.Regarding.Name] = map[string]int{}
			}
			reasons[e.Regarding.Name][e.Reason]++
		}
		for i := range n {
			if reasons[fmt.Sprintf("app-%03d", i)]["SparkApplicationCompleted"] == 0 {
				return false, nil
			}
		}
		return true, nil
	}), "every application's SparkApplicationCompleted Event")

	var statusWrites, children, events int
	for i := range n {
		name := fmt.Sprintf("app-%03d", i)
		statusWrites += w.writes.statusWrites(t, sparkApplications, name)
		created, updated := w.writes.children(t, "SparkApplication", name)
		require.Empty(t, updated, "children of %s rewritten", name)
		children += created
		for _, reason := range []string{"SparkApplicationSubmitted", "SparkDriverRunning", "SparkApplicationCompleted"} {
			require.Equal(t, 1, reasons[name][reason], "%s: Event %s once; all: %v", name, reason, reasons[name])
		}
		for reason, count := range reasons[name] {
			require.Equal(t, 1, count, "%s: Event %s once, or as a series", name, reason)
			events += count
		}
	}
	perApp := func(total int) string { return strconv.FormatFloat(float64(total)/float64(n), 'f', 2, 64) }
	t.Logf("%d applications to COMPLETED in %s under %s; per application: %s status writes, %s children created, %s Events (%s API writes in all)",
		n, elapsed.Round(100*time.Millisecond), controllerName(), perApp(statusWrites), perApp(children), perApp(events), perApp(statusWrites+children+events))
}

func controllerName() string {
	if shared.metacontroller {
		return "Metacontroller"
	}
	return "the stand-in"
}
