//go:build e2e

package mcstandin_test

import (
	"context"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/mcstandin"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

const conflictApp = `{
  "apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
  "metadata": {"name": "conflict"},
  "spec": {
    "type": "Scala", "sparkVersion": "3.5.3",
    "mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples.jar",
    "driver": {"cores": 1}, "executor": {"instances": 1}
  }
}`

// The status is written over the live object, as Metacontroller's AtomicStatusUpdate does: a
// parent that changed since the sync read it (here a label) does not lose the write, a status
// computed from a stale parent replaces a newer one (and is reported), and a parent replaced by
// a new object of the same name is left alone.
func TestStatusWriteSurvivesConflicts(t *testing.T) {
	cfg, ns := controlPlane(t)
	cc, err := mcstandin.LoadCompositeController("../../../metacontroller/sparkapplication-controller.yaml", "http://127.0.0.1:1")
	require.NoError(t, err)
	ctl, err := mcstandin.New(cfg, cc, mcstandin.Options{Namespace: ns})
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	apps := dyn.Resource(schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}).Namespace(ns)
	ctx := context.Background()

	stale, err := apps.Create(ctx, decodeObject(t, conflictApp), metav1.CreateOptions{})
	require.NoError(t, err)
	live := stale.DeepCopy()
	live.SetLabels(map[string]string{"touched": "yes"})
	_, err = apps.Update(ctx, live, metav1.UpdateOptions{})
	require.NoError(t, err)

	status := map[string]any{"applicationState": map[string]any{"state": "SUBMITTED"}, "driverInfo": map[string]any{}}
	require.NoError(t, ctl.UpdateStatus(ctx, stale, status), "the write goes over the live object")
	got, err := apps.Get(ctx, "conflict", metav1.GetOptions{})
	require.NoError(t, err)
	state, _, _ := unstructured.NestedString(got.Object, "status", "applicationState", "state")
	assert.Equal(t, "SUBMITTED", state)
	assert.Equal(t, "yes", got.GetLabels()["touched"], "the other change stays")
	assert.Equal(t, 1, ctl.Stats(ns, "conflict").StatusWrites)
	assert.Empty(t, ctl.Stats(ns, "conflict").StaleWrites, "only the metadata changed since the read")

	// The same status again is no write at all.
	require.NoError(t, ctl.UpdateStatus(ctx, got, status))
	assert.Equal(t, 1, ctl.Stats(ns, "conflict").StatusWrites)

	// A status computed from the parent as it was before that write goes over it, as with
	// Metacontroller, and is reported.
	older := map[string]any{"applicationState": map[string]any{"state": "RUNNING"}, "driverInfo": map[string]any{}}
	require.NoError(t, ctl.UpdateStatus(ctx, stale, older))
	got, err = apps.Get(ctx, "conflict", metav1.GetOptions{})
	require.NoError(t, err)
	state, _, _ = unstructured.NestedString(got.Object, "status", "applicationState", "state")
	assert.Equal(t, "RUNNING", state, "the stale answer wins, as with Metacontroller")
	stats := ctl.Stats(ns, "conflict")
	require.Len(t, stats.StaleWrites, 1)
	assert.Equal(t, []string{"applicationState"}, stats.StaleWrites[0].Fields)
	assert.Equal(t, stale.GetResourceVersion(), stats.StaleWrites[0].ReadVersion)
	assert.Contains(t, stats.StaleWrites[0].Description, `applicationState {"state":"SUBMITTED"} -> {"state":"RUNNING"}`)

	// A parent deleted and created again is another object: its status is not this sync's.
	require.NoError(t, apps.Delete(ctx, "conflict", metav1.DeleteOptions{}))
	_, err = apps.Create(ctx, decodeObject(t, conflictApp), metav1.CreateOptions{})
	require.NoError(t, err)
	err = ctl.UpdateStatus(ctx, got, map[string]any{"applicationState": map[string]any{"state": "RUNNING"}, "driverInfo": map[string]any{}})
	assert.True(t, apierrors.IsNotFound(err), "want NotFound for a replaced parent, got %v", err)
}

// controlPlane starts the real control plane with the project's CRDs, and a namespace.
func controlPlane(t *testing.T) (*restclient.Config, string) {
	t.Helper()
	binDir := os.Getenv("KUBE_BIN_DIR")
	if binDir == "" {
		t.Skip("KUBE_BIN_DIR is not set: build the control plane with make kube")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := stack.StartControlPlane(ctx, stack.ControlPlaneOptions{
		Dir: t.TempDir(), KubeBinDir: binDir, NodeIP: netip.MustParseAddr("192.0.2.1"), Now: time.Now(),
	})
	require.NoError(t, err)
	t.Cleanup(cp.Stop)
	require.NoError(t, cp.ApplyCRDs(ctx, "../../../crds"))
	client, err := kubernetes.NewForConfig(cp.Admin)
	require.NoError(t, err)
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "jobs"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return cp.Admin, "jobs"
}

func decodeObject(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(t, obj.UnmarshalJSON([]byte(s)))
	return obj
}
