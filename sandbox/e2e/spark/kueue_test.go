//go:build e2e

package spark

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
)

// TestKueueAdmitsOneAtATime is Kueue admission with real Spark: the real Kueue controller, the
// chart's metacontroller.kueue turned on with helm upgrade as an administrator would, and a
// ClusterQueue whose CPU quota fits one SparkPi (examples/spark-pi.yaml) of two. One runs to
// COMPLETED while the other waits SUSPENDED with Kueue's message and no driver; the first's
// completion frees the quota, and Kueue admits the other, which completes too.
//
// It runs alone, never beside the parallel tests (no parallelOnRealNode): the helm upgrade
// changes the registrations of every application, and Metacontroller restarts their controllers.
func TestKueueAdmitsOneAtATime(t *testing.T) {
	ctx := context.Background()
	if err := harness.InstallKueueCRDs(shared.stack.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	harness.StartKueue(t, shared.stack.Kubeconfig, shared.dir)
	if err := shared.stack.SetChartValues(ctx, "metacontroller.kueue=true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := shared.stack.SetChartValues(ctx, "metacontroller.kueue=null"); err != nil {
			t.Errorf("restoring the chart's values: %v", err)
		}
	})

	n := newNamespace(t, "kueue")
	queue := "pi-" + n.name
	// Each SparkPi asks for a driver and two executors of realNodeCoreRequest (100m) on the real
	// node, exampleCoreRequest elsewhere: the quota holds one application and not two.
	request := resource.MustParse(exampleCoreRequest())
	one := 3 * request.MilliValue()
	n.apply(fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: %[1]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: %[1]s
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: %[1]s
          resources:
            - {name: cpu, nominalQuota: "%[2]dm"}
            - {name: memory, nominalQuota: 64Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team
spec:
  clusterQueue: %[1]s
`, queue, one+one/2))
	t.Cleanup(func() {
		_, _ = kubectl.Run(context.Background(), shared.stack.Kubeconfig, "delete", "clusterqueue/"+queue, "resourceflavor/"+queue, "--wait=false")
	})

	apps := []string{"queued-pi-1", "queued-pi-2"}
	for _, name := range apps {
		n.applyEditedExampleObject("spark-pi.yaml", func(app *unstructured.Unstructured) {
			app.SetName(name)
			app.SetLabels(map[string]string{"kueue.x-k8s.io/queue-name": "team"})
		})
	}
	// Kueue admits one, whichever its queue orders first (their Workloads are created in the
	// same sync round), and the other waits.
	var running, waiting string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, appTimeout, true, func(context.Context) (bool, error) {
		running, waiting = "", ""
		for _, name := range apps {
			app, err := n.get(sparkApplications, name)
			if err != nil {
				return false, nil
			}
			status, message := queuedCondition(app)
			switch {
			case appState(app) == "SUSPENDED" && status == "True" && strings.Contains(message, "insufficient unused quota"):
				waiting = name
			case appState(app) != "SUSPENDED" && appState(app) != "":
				running = name
			}
		}
		return running != "" && waiting != "", nil
	})
	if err != nil {
		t.Fatalf("want one application admitted and running, the other SUSPENDED with Kueue's message (running %q, waiting %q): %v", running, waiting, err)
	}
	app, err := n.get(sparkApplications, waiting)
	if err != nil {
		t.Fatal(err)
	}
	_, message := queuedCondition(app)
	t.Logf("%s runs; Kueue's message for %s: %s", running, waiting, message)
	if _, err := n.pod(waiting + "-driver"); !apierrors.IsNotFound(err) {
		t.Errorf("%s has a driver Pod before Kueue admitted it (%v)", waiting, err)
	}

	for _, name := range []string{running, waiting} {
		app := n.waitAppState(name, "COMPLETED", 2*appTimeout)
		driver := harness.NestedString(app, "status", "driverInfo", "podName")
		if log := n.logs(driver, ""); !strings.Contains(log, "Pi is roughly 3.1") {
			t.Errorf("driver log of %s has no \"Pi is roughly 3.1\":\n%s", driver, harness.Tail(log, 30))
		}
	}
}

// queuedCondition is the status and message of the application's Queued condition.
func queuedCondition(app *unstructured.Unstructured) (status, message string) {
	conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Queued" {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["message"])
		}
	}
	return "", ""
}
