//go:build e2e

package localcluster

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
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
	ns, _ := newTestNamespace(t)
	cfg := testEnv.API.ClientConfig()
	cc, err := LoadCompositeController("../../../metacontroller/sparkapplication-controller.yaml", "http://127.0.0.1:1")
	require.NoError(t, err)
	ctl, err := NewContractController(cfg, cc, ControllerOptions{Namespace: ns})
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
	require.NoError(t, ctl.updateStatus(ctx, stale, status), "the write goes over the live object")
	got, err := apps.Get(ctx, "conflict", metav1.GetOptions{})
	require.NoError(t, err)
	state, _, _ := unstructured.NestedString(got.Object, "status", "applicationState", "state")
	assert.Equal(t, "SUBMITTED", state)
	assert.Equal(t, "yes", got.GetLabels()["touched"], "the other change stays")
	assert.Equal(t, 1, ctl.Stats(ns, "conflict").StatusWrites)
	assert.Empty(t, ctl.Stats(ns, "conflict").StaleWrites, "only the metadata changed since the read")

	// The same status again is no write at all.
	require.NoError(t, ctl.updateStatus(ctx, got, status))
	assert.Equal(t, 1, ctl.Stats(ns, "conflict").StatusWrites)

	// A status computed from the parent as it was before that write goes over it, as with
	// Metacontroller, and is reported.
	older := map[string]any{"applicationState": map[string]any{"state": "RUNNING"}, "driverInfo": map[string]any{}}
	require.NoError(t, ctl.updateStatus(ctx, stale, older))
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
	err = ctl.updateStatus(ctx, got, map[string]any{"applicationState": map[string]any{"state": "RUNNING"}, "driverInfo": map[string]any{}})
	assert.True(t, apierrors.IsNotFound(err), "want NotFound for a replaced parent, got %v", err)
}

// TestMatchesRuleLikeMetacontroller: namespaced related objects must share the parent's
// namespace; cluster-scoped ones (Kueue's ResourceFlavors, PriorityClasses) match from any
// namespaced parent, as Metacontroller's customize manager matches them for v1 hooks.
func TestMatchesRuleLikeMetacontroller(t *testing.T) {
	obj := func(ns, name string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(labels)
		return u
	}
	parent := obj("jobs", "app", nil)
	everything := &metav1.LabelSelector{}
	for _, tt := range []struct {
		name string
		obj  *unstructured.Unstructured
		rule relatedRule
		want bool
	}{
		{"namespaced, same namespace", obj("jobs", "p", nil), relatedRule{LabelSelector: everything}, true},
		{"namespaced, other namespace", obj("other", "p", nil), relatedRule{LabelSelector: everything}, false},
		{"cluster-scoped, by selector", obj("", "spot", nil), relatedRule{LabelSelector: everything}, true},
		{"cluster-scoped, selector not matching", obj("", "spot", nil), relatedRule{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}, false},
		{"cluster-scoped, by name", obj("", "batch-high", nil), relatedRule{Names: []string{"batch-high"}}, true},
		{"cluster-scoped, other name", obj("", "batch-low", nil), relatedRule{Names: []string{"batch-high"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := matchesRule(parent, tt.obj, tt.rule)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
