//go:build e2e

package kubeflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/compat"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// namespace is where every case runs: both charts make it a job namespace by default, and the
// examples name it.
const namespace = "default"

// appTimeout bounds one application's run, from kubectl apply to a terminal state.
const appTimeout = 8 * time.Minute

// compatTable is the table of differences the suite accepts.
const compatTable = repoRoot + "/docs/kubeflow-compat.md"

// TestSameApplicationsUnderBothOperators runs the corpus under sparkhooks, then the same files
// under Kubeflow's operator, one application at a time, and fails on every difference between
// the two that docs/kubeflow-compat.md does not list. Run over the whole corpus, it also fails on
// a row that explains no difference any more.
func TestSameApplicationsUnderBothOperators(t *testing.T) {
	cases, all, err := corpusCases()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(compatTable)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := compat.ParseTable(doc)
	if err != nil {
		t.Fatalf("%s: %v", compatTable, err)
	}
	core, dyn := adminClients(t)
	captures := map[stack.Operator]map[string]compat.Capture{}
	for _, operator := range []stack.Operator{stack.OperatorSparkhooks, stack.OperatorKubeflow} {
		began := time.Now()
		if err := switchTo(t, core, operator); err != nil {
			t.Fatalf("installing %s: %v", operator, err)
		}
		t.Logf("%s installed in %s", operator, time.Since(began).Round(100*time.Millisecond))
		captures[operator] = map[string]compat.Capture{}
		for _, c := range cases {
			t.Run(string(operator)+"/"+c.name, func(t *testing.T) {
				captures[operator][c.name] = run(t, core, dyn, c)
				keep(t, operator, c, captures[operator][c.name])
			})
		}
	}
	used := map[int]int{}
	for _, c := range cases {
		t.Run("compare/"+c.name, func(t *testing.T) {
			kubeflow, kok := captures[stack.OperatorKubeflow][c.name]
			sparkhooks, sok := captures[stack.OperatorSparkhooks][c.name]
			if !kok || !sok {
				t.Skip("a run failed: nothing to compare")
			}
			diffs, err := compat.Compare(kubeflow, sparkhooks)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("states: Kubeflow %v, sparkhooks %v", kubeflow.States, sparkhooks.States)
			unexplained := compat.Unexplained(rows, c.name, diffs, used)
			t.Logf("%d differences, %d of them in %s", len(diffs), len(diffs)-len(unexplained), compatTable)
			for _, d := range unexplained {
				t.Errorf("not in the table: %s", d)
			}
			if len(unexplained) > 0 {
				t.Logf("as rows (fill in why, or fix the product):\n%s", asRows(c.name, unexplained))
			}
		})
	}
	for i, r := range rows {
		if used[i] == 0 {
			if all {
				t.Errorf("%s:%d: the row %s / %s explains no difference of the whole corpus: remove it", compatTable, r.Line, r.Object, r.Field)
			} else {
				t.Logf("%s:%d: the row %s / %s explains no difference of this subset", compatTable, r.Line, r.Object, r.Field)
			}
		}
	}
}

// adminClients are cluster-admin clients without client-side rate limits: the suite's watches
// and polls must not queue behind each other.
func adminClients(t *testing.T) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	cfg := restclient.CopyConfig(shared.stack.Admin)
	cfg.QPS, cfg.Burst = -1, 0
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return core, dyn
}

// keep writes a capture into the work directory (kept with SPARKHOOKS_E2E_KEEP=1), to read what
// an operator made beyond the differences.
func keep(t *testing.T, operator stack.Operator, c corpusCase, capture compat.Capture) {
	data, err := json.MarshalIndent(capture, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(shared.dir, "captures", string(operator), strings.NewReplacer(":", "-", "/", "-").Replace(c.name)+".json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// asRows writes differences as rows of the table, for the one who fills it in.
func asRows(name string, diffs []compat.Difference) string {
	var b strings.Builder
	for _, d := range diffs {
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | `%s` | `%s` | ? |\n", d.Object, d.Field, name, cell(d.Kubeflow), cell(d.Sparkhooks))
	}
	return b.String()
}

func cell(v string) string {
	v = strings.ReplaceAll(v, "|", "\\|")
	if len(v) > 120 {
		v = v[:117] + "..."
	}
	return v
}

// run applies one case, waits for its end, captures what the operator made of it and deletes it
// again, waiting until nothing of it is left.
func run(t *testing.T, core kubernetes.Interface, dyn dynamic.Interface, c corpusCase) compat.Capture {
	ctx := context.Background()
	for _, name := range c.configMaps {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := core.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := record(dyn, namespace, c.app)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanUp(t, core, dyn, c)
	defer r.stop()
	applied := time.Now()
	if out, err := adminKubectl("apply", "--namespace", namespace, "-f", c.path); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	states, err := r.waitForEnd(appTimeout)
	if err != nil {
		out, _ := adminKubectl("get", "sparkapplications.sparkoperator.k8s.io", c.app, "--namespace", namespace, "-o", "yaml")
		pods, _ := adminKubectl("get", "pods", "--namespace", namespace, "-o", "wide")
		t.Fatalf("%v\n%s\n%s", err, out, pods)
	}
	// What an operator writes after the terminal state (the executors' last states) lands
	// within a sync or two.
	time.Sleep(3 * time.Second)
	t.Logf("%s after %s", strings.Join(states, " "), time.Since(applied).Round(100*time.Millisecond))
	return r.capture()
}

// cleanUp deletes the application and the ConfigMaps made for it, and waits until its Pods,
// Services and ConfigMaps are gone, so that the next case starts from the same namespace.
func cleanUp(t *testing.T, core kubernetes.Interface, dyn dynamic.Interface, c corpusCase) {
	ctx := context.Background()
	if err := dyn.Resource(sparkApplications).Namespace(namespace).Delete(ctx, c.app, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting %s: %v", c.app, err)
	}
	for _, name := range c.configMaps {
		if err := core.CoreV1().ConfigMaps(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting ConfigMap %s: %v", name, err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := dyn.Resource(sparkApplications).Namespace(namespace).Get(ctx, c.app, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, nil
		}
		left, err := core.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(left.Items) > 0 {
			return false, nil
		}
		svcs, err := core.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, svc := range svcs.Items {
			if svc.Name != "kubernetes" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		out, _ := adminKubectl("get", "all,configmaps", "--namespace", namespace)
		t.Errorf("%s: not all gone after 2 minutes:\n%s", c.app, out)
	}
}

// The driver accounts the examples name: each chart makes one of them in its job namespaces, and
// the suite gives the other the same Role, as a user of that chart would.
var driverAccounts = map[stack.Operator]string{stack.OperatorSparkhooks: "spark", stack.OperatorKubeflow: "spark-operator-spark"}

// extraAccount is the name of what the suite adds for the other chart's account.
const extraAccount = "differential-suite"

// switchTo hands the cluster to operator if another one runs it: the suite's account of the other
// chart goes, then the installed chart (stack.UninstallOperator), then operator's chart goes in
// and the account of the other chart is made again, bound to its driver Role.
func switchTo(t *testing.T, core kubernetes.Interface, operator stack.Operator) error {
	ctx := context.Background()
	s := shared.stack
	if s.Operator() != operator {
		if err := removeExtraAccount(ctx, core); err != nil {
			return err
		}
		if err := s.UninstallOperator(ctx); err != nil {
			return err
		}
		var err error
		switch operator {
		case stack.OperatorKubeflow:
			err = s.InstallKubeflow(ctx, shared.kubeflow)
		case stack.OperatorSparkhooks:
			err = s.InstallSparkhooks(ctx)
		}
		if err != nil {
			return err
		}
	}
	own := driverAccounts[operator]
	var role *rbacv1.RoleRef
	bindings, err := core.RbacV1().RoleBindings(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, b := range bindings.Items {
		for _, subject := range b.Subjects {
			if subject.Kind == rbacv1.ServiceAccountKind && subject.Name == own {
				role = &b.RoleRef
			}
		}
	}
	if role == nil {
		return fmt.Errorf("%s's chart binds no Role to its driver account %s", operator, own)
	}
	for other, account := range driverAccounts {
		if other == operator {
			continue
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account, Labels: map[string]string{"app.kubernetes.io/managed-by": extraAccount}}}
		// Made already when the operator was installed by an earlier test.
		if _, err := core.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: extraAccount + "-" + account, Labels: sa.Labels},
			RoleRef:    *role,
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: namespace}},
		}
		if _, err := core.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// removeExtraAccount deletes what switchTo made, before the chart that makes that account goes in.
func removeExtraAccount(ctx context.Context, core kubernetes.Interface) error {
	selector := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + extraAccount}
	return errors.Join(
		core.CoreV1().ServiceAccounts(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, selector),
		core.RbacV1().RoleBindings(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, selector),
	)
}

func adminKubectl(args ...string) (string, error) {
	return kubectl.Run(context.Background(), shared.stack.Kubeconfig, args...)
}
