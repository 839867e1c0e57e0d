package schedule

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// created is when the test ScheduledSparkApplications were created.
var created = time.Date(2024, 6, 3, 9, 58, 12, 0, time.UTC)

func sparkPi() v1beta2.SparkApplicationSpec {
	return v1beta2.SparkApplicationSpec{
		Type:                v1beta2.SparkApplicationTypeScala,
		SparkVersion:        "3.5.5",
		Mode:                v1beta2.DeployModeCluster,
		Image:               ptr.To("spark:3.5.5"),
		MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
		MainApplicationFile: ptr.To("local:///opt/spark/examples/jars/spark-examples.jar"),
		Driver: v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{
			Cores: ptr.To[int32](1), Memory: ptr.To("512m"), ServiceAccount: ptr.To("spark"),
		}},
		Executor: v1beta2.ExecutorSpec{
			SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")},
			Instances:    ptr.To[int32](1),
		},
	}
}

// newParent is a ScheduledSparkApplication as the API server stores it, without status.
func newParent(schedule string) *v1beta2.ScheduledSparkApplication {
	return &v1beta2.ScheduledSparkApplication{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindScheduledSparkApplication},
		ObjectMeta: metav1.ObjectMeta{
			Name: "nightly-pi", Namespace: "spark-jobs", UID: "5f1c7c5e-2b0a-4d8e-9a55-0c3b6f1e2d11",
			Generation: 1, CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{"team": "analytics"},
		},
		Spec: v1beta2.ScheduledSparkApplicationSpec{
			Schedule: schedule,
			Template: sparkPi(),
		},
	}
}

// observedRun is a run as Metacontroller reports it.
type observedRun struct {
	name    string
	labels  map[string]string
	annots  map[string]string
	created time.Time
	state   v1beta2.ApplicationStateType
	deleted *time.Time // metadata.deletionTimestamp
}

func (o *observedRun) raw(namespace string) json.RawMessage {
	obj := map[string]any{
		"apiVersion": v1beta2.GroupVersion.String(),
		"kind":       v1beta2.KindSparkApplication,
		"metadata": map[string]any{
			"name": o.name, "namespace": namespace, "labels": o.labels, "annotations": o.annots,
			"uid": "uid-" + o.name, "resourceVersion": "42", "generation": 1,
			"creationTimestamp": o.created.UTC().Format(time.RFC3339),
		},
		"spec": sparkPi(),
	}
	if o.state != "" {
		obj["status"] = map[string]any{"applicationState": map[string]any{"state": o.state}}
	}
	if o.deleted != nil {
		obj["metadata"].(map[string]any)["deletionTimestamp"] = o.deleted.UTC().Format(time.RFC3339)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return data
}

// runAt is an observed run of nightly-pi scheduled at at, created then, in the given state.
func runAt(at time.Time, state v1beta2.ApplicationStateType) *observedRun {
	name := runName("nightly-pi", at)
	return &observedRun{
		name:    name,
		labels:  map[string]string{LabelScheduledAppName: "nightly-pi", "team": "analytics"},
		annots:  map[string]string{AnnotationScheduledTime: at.UTC().Format(time.RFC3339)},
		created: at,
		state:   state,
	}
}

func request(t testing.TB, p *v1beta2.ScheduledSparkApplication, runs ...*observedRun) *metacontroller.SyncRequest {
	t.Helper()
	parent, err := json.Marshal(p)
	require.NoError(t, err)
	req := &metacontroller.SyncRequest{Parent: parent, Children: metacontroller.ChildMap{ChildKey: {}}}
	for _, r := range runs {
		req.Children[ChildKey][r.name] = r.raw(p.Namespace)
	}
	return req
}

// world plays Metacontroller and the API server around Sync: it stores the status, creates the
// runs asked for, deletes the ones left out, and checks on every sync that syncing again at
// once changes nothing.
type world struct {
	t      *testing.T
	parent *v1beta2.ScheduledSparkApplication
	runs   map[string]*observedRun
	now    time.Time
	cfg    Config
	// created and createdAt list every run ever created and its scheduled time, in order.
	created   []string
	createdAt []time.Time
}

func newWorld(t *testing.T, p *v1beta2.ScheduledSparkApplication, now time.Time) *world {
	return &world{t: t, parent: p, runs: map[string]*observedRun{}, now: now}
}

func (w *world) request() *metacontroller.SyncRequest {
	return request(w.t, w.parent, slices.Collect(maps.Values(w.runs))...)
}

// sync runs one sync at w.now, applies it and checks that it is a fixed point.
func (w *world) sync() (*metacontroller.SyncResponse, hook.Outcome) {
	w.t.Helper()
	resp, res, err := Sync(w.request(), w.now, w.cfg)
	require.NoError(w.t, err)
	w.apply(resp)

	again, res2, err := Sync(w.request(), w.now, w.cfg)
	require.NoError(w.t, err)
	require.Equal(w.t, string(coretest.MustJSON(w.t, resp.Status)), string(coretest.MustJSON(w.t, again.Status)), "a second sync at %s must not change the status", w.now)
	require.Equal(w.t, w.runNames(), childNames(again), "a second sync at %s must keep the runs", w.now)
	require.False(w.t, res2.Submitted, "a second sync at %s created a run", w.now)
	return resp, res
}

func (w *world) apply(resp *metacontroller.SyncResponse) {
	w.t.Helper()
	var status v1beta2.ScheduledSparkApplicationStatus
	require.NoError(w.t, json.Unmarshal(coretest.MustJSON(w.t, resp.Status), &status))
	w.parent.Status = status
	desired := map[string]bool{}
	for _, c := range resp.Children {
		obj := c.(*runObject)
		desired[obj.Metadata.Name] = true
		if _, ok := w.runs[obj.Metadata.Name]; !ok {
			w.runs[obj.Metadata.Name] = &observedRun{
				name: obj.Metadata.Name, labels: obj.Metadata.Labels, annots: obj.Metadata.Annotations, created: w.now,
			}
			at, err := time.Parse(time.RFC3339, obj.Metadata.Annotations[AnnotationScheduledTime])
			require.NoError(w.t, err)
			w.created = append(w.created, obj.Metadata.Name)
			w.createdAt = append(w.createdAt, at)
		}
	}
	for name := range w.runs {
		if !desired[name] {
			delete(w.runs, name)
		}
	}
}

// syncEvery syncs at each step from w.now until end (inclusive), calling before each sync.
func (w *world) syncEvery(step time.Duration, end time.Time, before func(w *world)) {
	w.t.Helper()
	for ; !w.now.After(end); w.now = w.now.Add(step) {
		if before != nil {
			before(w)
		}
		w.sync()
	}
}

func (w *world) finish(name string, state v1beta2.ApplicationStateType) {
	w.t.Helper()
	r, ok := w.runs[name]
	require.True(w.t, ok, "no run %s", name)
	r.state = state
}

func (w *world) runNames() []string {
	return slices.Sorted(maps.Keys(w.runs))
}

func childNames(resp *metacontroller.SyncResponse) []string {
	var names []string
	for _, c := range resp.Children {
		switch obj := c.(type) {
		case *runObject:
			names = append(names, obj.Metadata.Name)
		case *foreignObject:
			names = append(names, obj.Metadata.Name)
		}
	}
	slices.Sort(names)
	return names
}

// scheduledTimes are the scheduled times of the runs created, in loc.
func (w *world) scheduledTimes(loc *time.Location) []string {
	out := make([]string, 0, len(w.created))
	for _, at := range w.createdAt {
		out = append(out, at.In(loc).Format("2006-01-02 15:04 MST"))
	}
	return out
}

func status(resp *metacontroller.SyncResponse) *v1beta2.ScheduledSparkApplicationStatus {
	return resp.Status.(*v1beta2.ScheduledSparkApplicationStatus)
}

func metaTime(s string) metav1.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return metav1.NewTime(t)
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func jsonRoundTrip(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

func decodeSyncRequest(t testing.TB, m map[string]any) *metacontroller.SyncRequest {
	t.Helper()
	var req metacontroller.SyncRequest
	require.NoError(t, jsonRoundTrip(m, &req))
	return &req
}
