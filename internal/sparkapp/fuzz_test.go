package sparkapp

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/driver"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// endsAttempt are the states in which giving up the current driver is a decision, not an
// accident.
var endsAttempt = map[v1beta2.ApplicationStateType]bool{
	v1beta2.ApplicationStateInvalidating: true, v1beta2.ApplicationStateSuspending: true,
	v1beta2.ApplicationStateSuspended: true, v1beta2.ApplicationStateFailing: true,
	v1beta2.ApplicationStateFailed: true, v1beta2.ApplicationStatePendingRerun: true,
	v1beta2.ApplicationStateCompleted: true, v1beta2.ApplicationStateSubmitted: true,
}

// FuzzSync feeds arbitrary request bodies to the sync hook. It must never panic, and whenever
// it answers, a live driver Pod it drops must be the attempt its status says it ends.
func FuzzSync(f *testing.F) {
	w := newWorld(f, sparkPi)
	f.Add(mustJSON(f, w.request(false)))
	w.settle()
	w.driverRunning(true)
	w.settle()
	f.Add(mustJSON(f, w.request(false)))
	w.addExecutors(3, corev1.PodRunning)
	f.Add(mustJSON(f, w.request(false)))
	f.Add([]byte(`{"parent":{"kind":"SparkApplication","metadata":{"name":"a","uid":"u"},"status":{"applicationState":{"state":"RUNNING"},"submissionID":"s"}},"children":{"Pod.v1":{"a-driver":{"metadata":{"name":"a-driver","labels":{"spark-role":"driver","sparkoperator.k8s.io/submission-id":"x"}},"status":{"phase":"Running"}}}}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"parent":null,"children":null}`))
	cfg := DefaultConfig()

	f.Fuzz(func(t *testing.T, body []byte) {
		var req metacontroller.SyncRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		resp, _, err := Sync(&req, worldStart, cfg)
		if err != nil {
			return
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("response does not encode: %v", err)
		}
		var parent v1beta2.SparkApplication
		_ = json.Unmarshal(req.Parent, &parent)
		desired := map[string]bool{}
		for _, c := range resp.Children {
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			_ = json.Unmarshal(mustJSON(t, c), &obj)
			if obj.Kind == "Pod" {
				desired[obj.Metadata.Name] = true
			}
		}
		next := resp.Status.(*v1beta2.SparkApplicationStatus)
		for name, raw := range req.Children[keyPod] {
			var pod podView
			if json.Unmarshal(raw, &pod) != nil || pod.Metadata.Labels[driver.LabelSparkRole] != "driver" {
				continue
			}
			if terminatedPod(&pod) || pod.Metadata.DeletionTimestamp != nil || desired[name] {
				continue
			}
			ours := pod.Metadata.Labels[driver.LabelSubmissionID] == parent.Status.SubmissionID && parent.Status.SubmissionID != ""
			if !ours || !endsAttempt[next.AppState.State] {
				t.Fatalf("live driver Pod %s dropped: submission %q, status submission %q, next state %s",
					name, pod.Metadata.Labels[driver.LabelSubmissionID], parent.Status.SubmissionID, next.AppState.State)
			}
		}
	})
}
