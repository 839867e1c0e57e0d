package sparkapp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// world is a small stand-in for the API server, Metacontroller and the kubelet: it applies each
// sync answer the way Metacontroller does (create missing children, delete undesired ones,
// never update an existing Pod or ConfigMap, replace the status) and lets a test move Pods
// through their phases.
type world struct {
	t        testing.TB
	cfg      Config
	now      time.Time
	app      *v1beta2.SparkApplication
	children coretest.Objects          // key → name → object
	execs    map[string]map[string]any // related executor Pods
	related  coretest.Objects          // other related objects: key → name → object
	// controller is the CompositeController the requests carry, none by default.
	controller json.RawMessage
	uids       int
	syncs      int
	last       *metacontroller.SyncResponse
	lastErr    error
	// events are the Events of every answered sync, in order.
	events  []event.Event
	created []string // "Kind/name" in creation order
	// rejectPods makes every Pod creation fail, as a quota or an admission webhook would.
	rejectPods bool
	deleted    []string
	// updated are the children rewritten because an answer differed from the one recorded at
	// creation; drifted the same for children Metacontroller never updates (OnDelete).
	updated, drifted []string
	// specEdit edits the parent's spec as JSON on its way to the hook, for values the Go types
	// cannot hold but the CRD lets through (inside the schemaless pod templates).
	specEdit func(spec map[string]any)
}

func newWorld(t testing.TB, appYAML string) *world {
	t.Helper()
	app := &v1beta2.SparkApplication{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(appYAML), app))
	app.APIVersion, app.Kind = v1beta2.GroupVersion.String(), v1beta2.KindSparkApplication
	if app.Namespace == "" {
		app.Namespace = "default"
	}
	app.UID = "6a1c7d2e-0000-4000-8000-000000000001"
	app.Generation = 1
	cfg := DefaultConfig()
	return &world{
		t: t, cfg: cfg, now: coretest.WorldStart, app: app,
		children: map[string]map[string]map[string]any{keyPod: {}, keyConfigMap: {}, keyService: {}, keyIngress: {}},
		execs:    map[string]map[string]any{},
	}
}

func (w *world) request(finalizing bool) *metacontroller.SyncRequest {
	w.t.Helper()
	app := w.app
	if finalizing && app.DeletionTimestamp == nil {
		// Metacontroller finalizes only a parent being deleted.
		app = app.DeepCopy()
		app.DeletionTimestamp = &metav1.Time{Time: w.now}
	}
	parent, err := json.Marshal(app)
	require.NoError(w.t, err)
	if w.specEdit != nil {
		var obj map[string]any
		require.NoError(w.t, json.Unmarshal(parent, &obj))
		w.specEdit(obj["spec"].(map[string]any))
		parent = coretest.MustJSON(w.t, obj)
	}
	req := coretest.Request(w.t, parent, w.children, coretest.Objects{keyPod: w.execs}, w.related)
	req.Controller, req.Finalizing = w.controller, finalizing
	return req
}

// sync runs the hook once and applies its answer. It returns the hook's error, after which
// nothing was applied, as with Metacontroller.
func (w *world) sync() error {
	w.t.Helper()
	w.syncs++
	req := w.request(false)
	resp, outcome, err := Sync(req, w.now, w.cfg)
	w.last, w.lastErr = resp, err
	if err != nil {
		return err
	}
	story, err := outcome.Story()
	require.NoError(w.t, err)
	w.events = append(w.events, story.Events...)
	w.apply(resp)
	return nil
}

// settle syncs until the answer stops changing anything, as Metacontroller would keep syncing
// on every status write and child event. A hook that never settles hot-loops in a cluster.
func (w *world) settle() {
	w.t.Helper()
	for i := 0; i < 20; i++ {
		before := w.snapshot()
		require.NoError(w.t, w.sync())
		if reflect.DeepEqual(before, w.snapshot()) {
			return
		}
	}
	w.t.Fatalf("no fixed point after 20 syncs: state %s, status %s", w.state(), coretest.MustJSON(w.t, w.app.Status))
}

func (w *world) snapshot() string {
	return string(coretest.MustJSON(w.t, w.app.Status)) + string(coretest.MustJSON(w.t, w.children))
}

func (w *world) apply(resp *metacontroller.SyncResponse) {
	w.t.Helper()
	desired := map[string]map[string]coretest.Child{}
	for _, c := range coretest.Children(w.t, resp) {
		require.Contains(w.t, w.children, c.Key, "child of an undeclared type %s", c.Key)
		if desired[c.Key] == nil {
			desired[c.Key] = map[string]coretest.Child{}
		}
		require.NotContains(w.t, desired[c.Key], c.Name, "child %s/%s returned twice", c.Key, c.Name)
		desired[c.Key][c.Name] = c
	}
	for key, objs := range w.children {
		for name := range objs {
			if _, ok := desired[key][name]; !ok {
				delete(objs, name)
				w.deleted = append(w.deleted, key+"/"+name)
			}
		}
	}
	for _, key := range sortedNames(desired) {
		objs := desired[key]
		for _, name := range sortedNames(objs) {
			c := objs[name]
			// This world records the answer re-encoded from its decoded form (keys sorted), as
			// Metacontroller does; its goldens and scenarios hold that form.
			c.Answered = string(coretest.MustJSON(w.t, c.Obj))
			if existing, exists := w.children[key][name]; exists {
				// Metacontroller writes a child whose answer differs from the one it recorded
				// (InPlace kinds); OnDelete kinds are left alone, but their drift is counted too.
				md := existing["metadata"].(map[string]any)
				ann, _ := md["annotations"].(map[string]any)
				if ann[metacontroller.LastAppliedAnnotation] == c.Answered {
					continue
				}
				if key == keyService || key == keyIngress {
					w.updated = append(w.updated, key+"/"+name)
					coretest.SetLastApplied(md, c.Answered)
					existing["spec"] = c.Obj["spec"]
				} else {
					w.drifted = append(w.drifted, key+"/"+name)
				}
				continue
			}
			if key == keyPod && w.rejectPods {
				continue
			}
			w.uids++
			coretest.CreatedAt(c, w.uids, w.now)
			if key == keyPod {
				c.Obj["status"] = map[string]any{"phase": "Pending"}
			}
			if key == keyService {
				spec := c.Obj["spec"].(map[string]any)
				if spec["clusterIP"] == nil {
					spec["clusterIP"] = fmt.Sprintf("10.0.0.%d", w.uids)
				}
			}
			w.children[key][name] = c.Obj
			w.created = append(w.created, key+"/"+name)
		}
	}
	statusJSON := coretest.MustJSON(w.t, resp.Status)
	w.checkSchema(statusJSON)
	st := v1beta2.SparkApplicationStatus{}
	require.NoError(w.t, json.Unmarshal(statusJSON, &st))
	st.ObservedGeneration = w.app.Generation
	w.app.Status = st
}

// checkSchema rejects a status the CRD would reject: in a cluster, Metacontroller's status
// write would fail and every later sync with it.
func (w *world) checkSchema(status []byte) {
	w.t.Helper()
	checkStatus(w.t, w.app, status)
}

var checkStatus = coretest.StatusSchema(filepath.Join("..", "..", "crds", "sparkoperator.k8s.io_sparkapplications.yaml"))

func (w *world) advance(d time.Duration) { w.now = w.now.Add(d) }

func (w *world) state() v1beta2.ApplicationStateType { return w.app.Status.AppState.State }

// driverPod returns the observed driver Pod, failing the test when there is none.
func (w *world) driverPod() map[string]any {
	w.t.Helper()
	for _, obj := range w.children[keyPod] {
		return obj
	}
	w.t.Fatalf("no driver Pod; children deleted so far: %v", w.deleted)
	return nil
}

func (w *world) hasDriver() bool { return len(w.children[keyPod]) > 0 }

// setDriverStatus replaces the driver Pod's status, as the kubelet would.
func (w *world) setDriverStatus(st corev1.PodStatus) {
	w.t.Helper()
	pod := w.driverPod()
	obj := map[string]any{}
	require.NoError(w.t, json.Unmarshal(coretest.MustJSON(w.t, st), &obj))
	pod["status"] = obj
}

func (w *world) driverRunning(ready bool) {
	start := metav1.NewTime(w.now)
	st := corev1.PodStatus{
		Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: driverContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
		}},
	}
	if ready {
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start}}
	}
	w.setDriverStatus(st)
}

func (w *world) driverExited(code int32, reason string) {
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
	}
	w.setDriverStatus(corev1.PodStatus{
		Phase: phase,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: driverContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(w.now.Add(-time.Minute)), FinishedAt: metav1.NewTime(w.now),
			}},
		}},
	})
}

// addExecutors creates n executor Pods of the current attempt in the given phase.
func (w *world) addExecutors(n int, phase corev1.PodPhase) {
	w.t.Helper()
	for i := 1; i <= n; i++ {
		w.addExecutor(i, phase)
	}
}

// addExecutor creates the executor Pod with Spark's executor id of the current attempt.
func (w *world) addExecutor(id int, phase corev1.PodPhase) {
	w.t.Helper()
	appID := w.app.Status.SparkApplicationID
	require.NotEmpty(w.t, appID)
	name := fmt.Sprintf("%s-exec-%d", w.app.Name, id)
	w.execs[name] = map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": w.app.Namespace, "labels": map[string]any{
			sparkpod.LabelSparkRole: "executor", sparkpod.LabelAppSelector: appID, "spark-exec-id": fmt.Sprint(id),
			sparkpod.LabelAppName: w.app.Name,
		}},
		"status": map[string]any{"phase": string(phase)},
	}
}

func (w *world) editSpec(edit func(spec *v1beta2.SparkApplicationSpec)) {
	edit(&w.app.Spec)
	w.app.Generation++
}
