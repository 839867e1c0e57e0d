package sparkconnect

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// connectYAML is the Kubeflow example's shape: a server and executors on the stock image.
const connectYAML = `
apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata:
  name: spark-connect
spec:
  sparkVersion: 4.0.1
  image: apache/spark:4.0.1
  server:
    cores: 1
    memory: 512m
    template:
      spec:
        serviceAccountName: spark
  executor:
    instances: 2
    cores: 1
    memory: 512m
`

// world plays Metacontroller for one SparkConnect: it applies each answer (status, children
// created and deleted, each created child remembered as answered) and plays the kubelet.
type world struct {
	t        testing.TB
	cfg      Config
	now      time.Time
	sc       *v1alpha1.SparkConnect
	children coretest.Objects
	execs    map[string]map[string]any
	related  coretest.Objects // other related objects: key → name → object
	last     *metacontroller.SyncResponse
	lastErr  error
	uids     int
}

func newWorld(t testing.TB, doc string) *world {
	t.Helper()
	sc := &v1alpha1.SparkConnect{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), sc))
	sc.Namespace = "notebooks"
	sc.UID = "5c0e1d2e-0000-4000-8000-0000000000c1"
	sc.Generation = 1
	sc.CreationTimestamp = metav1.NewTime(coretest.WorldStart)
	return &world{
		t: t, now: coretest.WorldStart, sc: sc, execs: map[string]map[string]any{},
		children: map[string]map[string]map[string]any{keyPod: {}, keyConfigMap: {}, keyService: {}},
	}
}

func (w *world) request() *metacontroller.SyncRequest {
	return coretest.Request(w.t, coretest.MustJSON(w.t, w.sc), w.children, coretest.Objects{keyPod: w.execs}, w.related)
}

// sync runs the hook once and applies its answer: children it leaves out go, new ones are
// created Pending, existing ones are kept as observed.
func (w *world) sync() error {
	w.t.Helper()
	resp, _, err := Sync(w.request(), w.now, w.cfg)
	w.last, w.lastErr = resp, err
	if err != nil {
		return err
	}
	var status v1alpha1.SparkConnectStatus
	require.NoError(w.t, json.Unmarshal(coretest.MustJSON(w.t, resp.Status), &status))
	w.sc.Status = status
	w.children.Apply(w.t, resp, &w.uids, w.now, nil)
	return nil
}

// settle syncs until an answer changes nothing.
func (w *world) settle() {
	w.t.Helper()
	for range 10 {
		before := coretest.MustJSON(w.t, w.children)
		beforeStatus := coretest.MustJSON(w.t, w.sc.Status)
		require.NoError(w.t, w.sync())
		if string(before) == string(coretest.MustJSON(w.t, w.children)) && string(beforeStatus) == string(coretest.MustJSON(w.t, w.sc.Status)) {
			return
		}
	}
	w.t.Fatal("the hook did not settle")
}

func (w *world) serverPod() map[string]any {
	pod := w.children[keyPod][v1alpha1.ServerPodName(w.sc)]
	require.NotNil(w.t, pod, "no server Pod")
	return pod
}

// serverRunning marks the server Pod running, ready or not.
func (w *world) serverRunning(ready bool) {
	status := "False"
	if ready {
		status = "True"
	}
	w.serverPod()["status"] = map[string]any{
		"phase": "Running", "podIP": "10.1.2.3",
		"conditions": []any{map[string]any{"type": "Ready", "status": status, "lastTransitionTime": w.now.Format(time.RFC3339)}},
	}
}

func (w *world) serverExited(phase string) {
	w.serverPod()["status"] = map[string]any{"phase": phase, "reason": "Error"}
}

func (w *world) addExecutors(phases ...string) {
	for i, phase := range phases {
		name := fmt.Sprintf("spark-connect-exec-%d", i+1)
		w.execs[name] = map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": w.sc.Namespace, "labels": executorSelector(w.sc)},
			"status":   map[string]any{"phase": phase},
		}
	}
}

func (w *world) editSpec(edit func(*v1alpha1.SparkConnectSpec)) {
	edit(&w.sc.Spec)
	w.sc.Generation++
}

func (w *world) advance(d time.Duration) { w.now = w.now.Add(d) }
