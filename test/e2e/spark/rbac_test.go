//go:build e2e

package spark

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartRoleIsEnforced: drivers run with exactly the Role the chart gives the spark account
// (every other test proves it is enough). Without one verb of it, here get on pods, which the
// driver needs to read its own Pod at start, the API server refuses the driver and the
// application fails with the refusal. Spark 4.3 is the driver here because from 4.1 it writes the
// exception it dies of on its Pod, where the hook reads the cause; an older driver's cause sits
// above its stack trace, out of the log tail a Pod's status carries.
func TestChartRoleIsEnforced(t *testing.T) {
	n := newNamespace(t, "rbac")
	ctx := context.Background()
	roles := n.core.RbacV1().Roles(n.name)
	role, err := roles.Get(ctx, "sparkhooks-spark-driver", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's Role in a job namespace: %v", err)
	}
	removed := false
	for i, rule := range role.Rules {
		if slices.Contains(rule.Resources, "pods") && slices.Contains(rule.Verbs, "get") {
			role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "get" })
			removed = true
		}
	}
	if !removed {
		t.Fatalf("the chart's Role grants no get on pods: %v", role.Rules)
	}
	if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.applyExample("spark-pi-spark43.yaml")
	app := n.waitFor(sparkApplications, "spark-pi-spark43", "state FAILED", 3*time.Minute, func(u *unstructured.Unstructured) bool {
		return appState(u) == "FAILED"
	})
	logs := n.logs("spark-pi-spark43-driver", "")
	forbidden := `pods "spark-pi-spark43-driver" is forbidden: User "system:serviceaccount:` + n.name + `:spark" cannot get resource "pods"`
	if !strings.Contains(logs, forbidden) {
		t.Errorf("the driver's log does not show the refusal %q:\n%s", forbidden, tail(logs, 30))
	}
	if msg := nestedString(app, "status", "applicationState", "errorMessage"); !strings.Contains(msg, forbidden) {
		t.Errorf("errorMessage %q does not carry the refusal %q", msg, forbidden)
	}
}
