//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// These tests check the harness itself: the contract controller against a tiny in-test hook
// whose answers the test controls, so that the scenario tests can trust it.

// tinyApp is a SparkApplication the CRD accepts; the tiny hook ignores its spec.
const tinyApp = `
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: tiny
spec:
  type: Scala
  mode: cluster
  image: spark:4.0.0
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  sparkVersion: 4.0.0
  driver:
    cores: 1
    memory: 512m
  executor:
    instances: 1
    cores: 1
    memory: 512m
`

// tinyHook answers the SparkApplication hooks with a ConfigMap and a Service child and a
// status of the test's choosing, and remembers what it was asked.
type tinyHook struct {
	mu sync.Mutex
	// status is the status the sync hook returns.
	status map[string]any
	// serviceVersion is put in an annotation of the Service child, to see InPlace updates.
	serviceVersion string
	// failWith, when not 0, is the HTTP status every call gets.
	failWith int

	customizeCalls int
	finalizeCalls  int
	lastRelated    []string
}

func newTinyHook() *tinyHook {
	return &tinyHook{
		status:         map[string]any{"applicationState": map[string]any{"state": "RUNNING"}, "driverInfo": map[string]any{}},
		serviceVersion: "v1",
	}
}

func (h *tinyHook) set(change func(h *tinyHook)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	change(h)
}

func (h *tinyHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failWith != 0 {
		http.Error(w, "tiny hook told to fail", h.failWith)
		return
	}
	var req struct {
		Parent     unstructured.Unstructured             `json:"parent"`
		Children   map[string]map[string]json.RawMessage `json:"children"`
		Related    map[string]map[string]json.RawMessage `json:"related"`
		Finalizing bool                                  `json:"finalizing"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	name := req.Parent.GetName()
	var resp any
	switch r.URL.Path {
	case "/sparkapplication/customize":
		h.customizeCalls++
		resp = map[string]any{"relatedResources": []any{map[string]any{
			"apiVersion": "v1", "resource": "pods",
			"labelSelector": map[string]any{"matchLabels": map[string]any{"tiny/app": name}},
		}}}
	case "/sparkapplication/sync":
		h.lastRelated = nil
		for related := range req.Related["Pod.v1"] {
			h.lastRelated = append(h.lastRelated, related)
		}
		resp = map[string]any{"status": h.status, "children": h.children(name)}
	case "/sparkapplication/finalize":
		h.finalizeCalls++
		left := len(req.Children["ConfigMap.v1"]) + len(req.Children["Service.v1"])
		resp = map[string]any{"status": h.status, "children": []any{}, "finalized": req.Finalizing && left == 0}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func (h *tinyHook) children(name string) []any {
	return []any{
		map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name + "-conf"},
			"data":     map[string]any{"spark.properties": "spark.app.name=" + name},
		},
		map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": name + "-ui", "annotations": map[string]any{"tiny/version": h.serviceVersion}},
			"spec": map[string]any{
				"selector": map[string]any{"tiny/app": name},
				"ports":    []any{map[string]any{"name": "ui", "port": 4040}},
			},
		},
	}
}

func startTinyHook(t *testing.T) (*tinyHook, string) {
	hook := newTinyHook()
	server := httptest.NewServer(hook)
	t.Cleanup(server.Close)
	return hook, server.URL
}

func TestStandInDrivesHookLikeMetacontroller(t *testing.T) {
	t.Parallel()
	hook, url := startTinyHook(t)
	w := newWorld(t, url, appController)
	_, err := w.apply(tinyApp)
	require.NoError(t, err)
	require.NoError(t, w.waitState("tiny", "RUNNING"))

	app, err := w.app("tiny")
	require.NoError(t, err)
	assert.Contains(t, app.GetFinalizers(), "metacontroller.io/compositecontroller-sparkhooks-sparkapplication",
		"the finalizer is added because a finalize hook is registered")

	cm, err := w.core.CoreV1().ConfigMaps(w.ns).Get(context.Background(), "tiny-conf", metav1.GetOptions{})
	require.NoError(t, err)
	ref := metav1.GetControllerOf(cm)
	require.NotNil(t, ref, "children carry a controller owner reference")
	assert.Equal(t, app.GetUID(), ref.UID)
	assert.Equal(t, string(app.GetUID()), cm.Labels["controller-uid"], "generateSelector labels every child")
	assert.Contains(t, cm.Annotations, "metacontroller.k8s.io/last-applied-configuration")

	t.Run("related objects come from the customize rules", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "tiny-executor", Labels: map[string]string{"tiny/app": "tiny"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "spark:4.0.0"}}},
		}
		_, err := w.core.CoreV1().Pods(w.ns).Create(context.Background(), pod, metav1.CreateOptions{})
		require.NoError(t, err)
		require.NoError(t, wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true,
			func(context.Context) (bool, error) {
				hook.mu.Lock()
				defer hook.mu.Unlock()
				// The registration's sync hook is version v2, whose requests file a namespaced
				// object as <namespace>/<name>.
				return len(hook.lastRelated) == 1 && hook.lastRelated[0] == w.ns+"/tiny-executor", nil
			}))
		hook.mu.Lock()
		assert.Equal(t, 1, hook.customizeCalls, "customize is asked once per parent generation")
		hook.mu.Unlock()
	})

	t.Run("InPlace children are updated by three-way merge", func(t *testing.T) {
		hook.set(func(h *tinyHook) { h.serviceVersion = "v2" })
		// Any change of the parent brings a sync; a label edit leaves the generation alone.
		_, err := w.kubectl("label", "sparkapplications.sparkoperator.k8s.io", "tiny", "touch=1")
		require.NoError(t, err)
		require.NoError(t, wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true,
			func(ctx context.Context) (bool, error) {
				svc, err := w.core.CoreV1().Services(w.ns).Get(ctx, "tiny-ui", metav1.GetOptions{})
				return err == nil && svc.Annotations["tiny/version"] == "v2", nil
			}))
	})

	t.Run("deletion goes through the finalize hook", func(t *testing.T) {
		_, err := w.kubectl("delete", "sparkapplications.sparkoperator.k8s.io", "tiny", "--wait=true", "--timeout=45s")
		require.NoError(t, err)
		_, err = w.app("tiny")
		assert.True(t, apierrors.IsNotFound(err), "the finalizer is gone once the hook says finalized")
		hook.mu.Lock()
		assert.Positive(t, hook.finalizeCalls)
		hook.mu.Unlock()
		_, err = w.core.CoreV1().ConfigMaps(w.ns).Get(context.Background(), "tiny-conf", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "children left out of the finalize answer are deleted")
	})
}

// A status the CRD does not allow must fail the end-to-end run with a message that names the
// field, not with a timeout that says nothing.
func TestStandInReportsStatusTheCRDRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status map[string]any
		want   string
	}{
		{
			name: "unknown field",
			status: map[string]any{
				"applicationState": map[string]any{"state": "RUNNING"}, "driverInfo": map[string]any{}, "bogusField": "x",
			},
			want: `unknown field "status.bogusField"`,
		},
		{
			name:   "wrong type",
			status: map[string]any{"applicationState": map[string]any{"state": "RUNNING"}, "driverInfo": map[string]any{}, "executionAttempts": "two"},
			want:   "status.executionAttempts: Invalid value",
		},
		{
			name:   "missing required field",
			status: map[string]any{"applicationState": map[string]any{"state": "RUNNING"}},
			want:   "status.driverInfo: Required value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hook, url := startTinyHook(t)
			hook.set(func(h *tinyHook) { h.status = tt.status })
			w := newWorld(t, url, appController)
			_, err := w.apply(tinyApp)
			require.NoError(t, err)

			err = w.waitState("tiny", "RUNNING")
			require.Error(t, err, "a status the CRD rejects never lands")
			assert.Contains(t, err.Error(), "can't update status for SparkApplication "+w.ns+"/tiny")
			assert.Contains(t, err.Error(), tt.want)
			t.Logf("the failure reads:\n%v", err)

			events, err := w.kubectl("get", "events", "--field-selector", "reason=SyncError,involvedObject.name=tiny",
				"-o", "jsonpath={.items[*].message}")
			require.NoError(t, err)
			assert.Contains(t, events, tt.want, "the error is also an event on the parent, as with Metacontroller")
		})
	}
}

// A hook that answers with an error changes nothing: children stay, status stays.
func TestStandInLeavesChildrenAloneWhenHookFails(t *testing.T) {
	t.Parallel()
	hook, url := startTinyHook(t)
	w := newWorld(t, url, appController)
	_, err := w.apply(tinyApp)
	require.NoError(t, err)
	require.NoError(t, w.waitState("tiny", "RUNNING"))

	hook.set(func(h *tinyHook) {
		h.failWith = http.StatusInternalServerError
		h.status = map[string]any{"applicationState": map[string]any{"state": "FAILED"}, "driverInfo": map[string]any{}}
	})
	_, err = w.kubectl("label", "sparkapplications.sparkoperator.k8s.io", "tiny", "touch=1")
	require.NoError(t, err)
	ctl := w.controllers["sparkhooks-sparkapplication"]
	require.NoError(t, wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true,
		func(context.Context) (bool, error) { return ctl.Stats(w.ns, "tiny").Errors >= 2, nil }))

	assert.Contains(t, ctl.Stats(w.ns, "tiny").LastError, "HTTP 500")
	_, err = w.core.CoreV1().ConfigMaps(w.ns).Get(context.Background(), "tiny-conf", metav1.GetOptions{})
	assert.NoError(t, err, "a failed sync deletes no child")
	app, err := w.app("tiny")
	require.NoError(t, err)
	assert.Equal(t, "RUNNING", appState(app), "a failed sync writes no status")
	assert.False(t, strings.Contains(ctl.Stats(w.ns, "tiny").LastError, "status"))
}
