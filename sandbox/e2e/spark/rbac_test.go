//go:build e2e

package spark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestChartRoleIsEnforced: drivers run with exactly the Role the chart gives the spark account
// (every other test proves it is enough). Without one verb of it, here get on pods, which the
// driver needs to read its own Pod at start, the API server refuses the driver and the
// application fails with the refusal. Spark 4.3 is the driver here because from 4.1 it writes the
// exception it dies of on its Pod, where the hook reads the cause; an older driver's cause sits
// above its stack trace, out of the log tail a Pod's status carries.
func TestChartRoleIsEnforced(t *testing.T) {
	// Not a job namespace of the release: Helm owns the Role there and would find it edited at
	// its next upgrade (server-side apply conflict). This one holds what the chart gives a job
	// namespace, copied from the release's own objects in default, with one verb less.
	n := makeNamespace(t, "rbac", func(ctx context.Context, name string) error {
		return copyJobNamespaceWithout(ctx, name, "pods", "get")
	})
	n.applyExample("spark-pi-spark43.yaml")
	app := n.waitFor(sparkApplications, "spark-pi-spark43", "state FAILED", 3*time.Minute, func(u *unstructured.Unstructured) bool {
		return appState(u) == "FAILED"
	})
	logs := n.logs("spark-pi-spark43-driver", "")
	forbidden := `pods "spark-pi-spark43-driver" is forbidden: User "system:serviceaccount:` + n.name + `:spark" cannot get resource "pods"`
	if !strings.Contains(logs, forbidden) {
		t.Errorf("the driver's log does not show the refusal %q:\n%s", forbidden, harness.Tail(logs, 30))
	}
	if msg := harness.NestedString(app, "status", "applicationState", "errorMessage"); !strings.Contains(msg, forbidden) {
		t.Errorf("errorMessage %q does not carry the refusal %q", msg, forbidden)
	}
}

// copyJobNamespaceWithout makes namespace name hold what the chart's release made in the job
// namespace default (the spark ServiceAccount, the driver's Role and its RoleBinding), with verb
// taken out of the Role's rules for resource.
func copyJobNamespaceWithout(ctx context.Context, name, resource, verb string) error {
	core, err := kubernetes.NewForConfig(shared.stack.Admin)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{podSecurityEnforce: "baseline"}}}
	if _, err := core.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding, err := core.RbacV1().RoleBindings(metav1.NamespaceDefault).Get(ctx, "sparkhooks-spark-driver", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the chart's RoleBinding in default: %w", err)
	}
	role, err := core.RbacV1().Roles(metav1.NamespaceDefault).Get(ctx, binding.RoleRef.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the chart's Role in default: %w", err)
	}
	removed := false
	for i, rule := range role.Rules {
		if slices.Contains(rule.Resources, resource) && slices.Contains(rule.Verbs, verb) {
			role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == verb })
			removed = true
		}
	}
	if !removed {
		return fmt.Errorf("the chart's Role grants no %s on %s: %v", verb, resource, role.Rules)
	}
	objects := []func() error{
		func() error {
			_, err := core.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: binding.Subjects[0].Name}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.RbacV1().Roles(name).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role.Name}, Rules: role.Rules}, metav1.CreateOptions{})
			return err
		},
		func() error {
			subjects := slices.Clone(binding.Subjects)
			for i := range subjects {
				subjects[i].Namespace = name
			}
			_, err := core.RbacV1().RoleBindings(name).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name}, RoleRef: binding.RoleRef, Subjects: subjects}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objects {
		if err := create(); err != nil {
			return err
		}
	}
	return nil
}
