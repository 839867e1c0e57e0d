package sparkconnect

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// TestNeverDropsALiveServer mutates every golden sync request field by field and checks each
// answer against an oracle written apart from checkServersKept: a 200 answer keeps every live
// server Pod by name, unless the Pod runs the submission the status names and the spec is no
// longer the one that submission was made from (a restart), or the Pod is the one Kubeflow's
// operator made, adopted at an earlier generation of the spec.
func TestNeverDropsALiveServer(t *testing.T) {
	total, answered := coretest.EachMutated(t, filepath.Join(goldenDir, "sync", "*", "request.json"), mutations(), func(label string, raw []byte, req *metacontroller.SyncRequest) bool {
		resp, _, err := Sync(req, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), Config{})
		return checkServersKeptOracle(t, label, raw, resp, err)
	})
	assert.Greater(t, answered, total/2)
}

// checkServersKeptOracle judges one answer to the request raw: an error must be a refusal or a
// request error, never a fault; a 200 must keep every live server Pod the request does not allow
// to go. It reports whether the answer was a 200.
func checkServersKeptOracle(t *testing.T, label string, raw []byte, resp *metacontroller.SyncResponse, err error) bool {
	t.Helper()
	if !coretest.Answered(t, label, err) {
		return false
	}
	kept := coretest.AnsweredNames(t, resp, "Pod")
	live := liveServers(t, raw)
	for name, mayGo := range live {
		assert.True(t, kept[name] || mayGo, "%s: live server Pod %s left out of a 200 answer", label, name)
	}
	if queued, admitted, _ := queueOf(t, raw); queued && !admitted {
		for name := range kept {
			_, running := live[name]
			assert.True(t, running, "%s: server Pod %s started without an admitted Workload", label, name)
		}
	}
	return true
}

// queueOf reads whether a request is queued with Kueue, whether its Workload is admitted (and
// not evicted, finished or being deleted), and whether the status says the running server
// started under an admission.
func queueOf(t *testing.T, raw []byte) (queued, admitted, startedAdmitted bool) {
	t.Helper()
	var req struct {
		Parent struct {
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		} `json:"parent"`
		Children map[string]map[string]json.RawMessage `json:"children"`
	}
	require.NoError(t, json.Unmarshal(raw, &req))
	workloads, enabled := req.Children["Workload.kueue.x-k8s.io/v1beta2"]
	if !enabled || req.Parent.Metadata.Labels["kueue.x-k8s.io/queue-name"] == "" {
		return false, false, false
	}
	for _, c := range req.Parent.Status.Conditions {
		startedAdmitted = startedAdmitted || c.Type == "Queued" && c.Status == metav1.ConditionFalse && c.Reason == "Admitted"
	}
	var wl struct {
		Metadata struct {
			DeletionTimestamp any `json:"deletionTimestamp"`
		} `json:"metadata"`
		Status struct {
			Conditions []metav1.Condition `json:"conditions"`
			Admission  any                `json:"admission"`
		} `json:"status"`
	}
	body := workloads["sparkconnect-"+req.Parent.Metadata.Name]
	if body == nil || json.Unmarshal(body, &wl) != nil || wl.Metadata.DeletionTimestamp != nil || wl.Status.Admission == nil {
		return true, false, startedAdmitted
	}
	truth := map[string]bool{}
	for _, c := range wl.Status.Conditions {
		truth[c.Type] = c.Status == metav1.ConditionTrue
	}
	return true, truth["Admitted"] && !truth["Evicted"] && !truth["Finished"], startedAdmitted
}

// liveServers maps each live observed Pod to whether the request allows its deletion.
func liveServers(t *testing.T, raw []byte) map[string]bool {
	t.Helper()
	var req struct {
		Parent struct {
			Metadata struct {
				Name              string `json:"name"`
				UID               string `json:"uid"`
				Generation        int64  `json:"generation"`
				DeletionTimestamp any    `json:"deletionTimestamp"`
			} `json:"metadata"`
			Spec   json.RawMessage `json:"spec"`
			Status struct {
				SubmissionID string             `json:"submissionID"`
				Conditions   []metav1.Condition `json:"conditions"`
			} `json:"status"`
		} `json:"parent"`
		Children map[string]map[string]*struct {
			Metadata struct {
				DeletionTimestamp any               `json:"deletionTimestamp"`
				Labels            map[string]string `json:"labels"`
			} `json:"metadata"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"children"`
	}
	require.NoError(t, json.Unmarshal(raw, &req))
	var spec v1alpha1.SparkConnectSpec
	specChanged := true
	if json.Unmarshal(req.Parent.Spec, &spec) == nil {
		b, _ := json.Marshal(&spec)
		sum := sha256.Sum256(b)
		current := children.NewSubmission(types.UID(req.Parent.Metadata.UID+"/"+hex.EncodeToString(sum[:8])), 1)
		specChanged = current.SubmissionID != req.Parent.Status.SubmissionID
	}
	queued, admitted, startedAdmitted := queueOf(t, raw)
	lostAdmission := queued && startedAdmitted && !admitted
	// A server Kubeflow's operator made may go once the spec moved on from the generation it
	// was adopted at.
	kubeflowEdited := false
	for _, c := range req.Parent.Status.Conditions {
		kubeflowEdited = kubeflowEdited || c.Type == "Adopted" && c.Status == metav1.ConditionTrue && c.ObservedGeneration != req.Parent.Metadata.Generation
	}
	out := map[string]bool{}
	for name, pod := range req.Children["Pod.v1"] {
		if pod == nil || pod.Metadata.DeletionTimestamp != nil || pod.Status.Phase == "Succeeded" || pod.Status.Phase == "Failed" {
			continue
		}
		sub := pod.Metadata.Labels[sparkpod.LabelSubmissionID]
		kubeflows := sub == "" && req.Parent.Status.SubmissionID == "" && name == req.Parent.Metadata.Name+"-server" &&
			pod.Metadata.Labels[sparkpod.LabelSparkRole] == "connect-server"
		out[name] = sub != "" && sub == req.Parent.Status.SubmissionID && (specChanged || lostAdmission) || kubeflows && kubeflowEdited
	}
	return out
}

func mutations() []coretest.Mutation {
	pods := func(r map[string]any) map[string]any { return coretest.Group(r, "Pod.v1") }
	eachPod := func(edit func(pod map[string]any)) func(map[string]any) { return coretest.EachChild("Pod.v1", edit) }
	ms := []coretest.Mutation{
		{Name: "unchanged", Apply: func(map[string]any) {}},
		{Name: "status-erased", Apply: func(r map[string]any) { delete(coretest.Parent(r), "status") }},
		{Name: "status-submission-other", Apply: func(r map[string]any) { coretest.Status(r)["submissionID"] = "00000000-0000-5000-8000-000000000000" }},
		{Name: "status-submission-removed", Apply: func(r map[string]any) { delete(coretest.Status(r), "submissionID") }},
		{Name: "status-hash-other", Apply: func(r map[string]any) { coretest.Status(r)["submittedSpecHash"] = "0000000000000000" }},
		{Name: "status-state-failed", Apply: func(r map[string]any) { coretest.Status(r)["state"] = "Failed" }},
		{Name: "spec-image-edited", Apply: func(r map[string]any) { coretest.Spec(r)["image"] = "apache/spark:9.9.9" }},
		{Name: "spec-invalid", Apply: func(r map[string]any) { coretest.Obj(coretest.Spec(r), "server")["memory"] = "lots" }},
		{Name: "spec-does-not-decode", Apply: func(r map[string]any) {
			coretest.Obj(coretest.Spec(r), "server")["template"] = map[string]any{"spec": map[string]any{"containers": "x"}}
		}},
		{Name: "spec-removed", Apply: func(r map[string]any) { delete(coretest.Parent(r), "spec") }},
		{Name: "uid-other", Apply: func(r map[string]any) { coretest.Obj(coretest.Parent(r), "metadata")["uid"] = "another-uid" }},
		{Name: "pod-submission-label-removed", Apply: eachPod(func(pod map[string]any) { delete(coretest.Labels(pod), sparkpod.LabelSubmissionID) })},
		{Name: "pod-submission-label-other", Apply: eachPod(func(pod map[string]any) { coretest.Labels(pod)[sparkpod.LabelSubmissionID] = "other" })},
		{Name: "pod-role-executor", Apply: eachPod(func(pod map[string]any) { coretest.Labels(pod)[sparkpod.LabelSparkRole] = sparkpod.RoleExecutor })},
		// As Kubeflow's operator makes and labels a server, under our status or its own.
		{Name: "pod-made-by-kubeflow", Apply: eachPod(func(pod map[string]any) {
			delete(coretest.Labels(pod), sparkpod.LabelSubmissionID)
			coretest.Labels(pod)[sparkpod.LabelSparkRole] = RoleConnectServer
		})},
		{Name: "status-kubeflows", Apply: func(r map[string]any) {
			delete(coretest.Status(r), "submissionID")
			delete(coretest.Status(r), "submittedSpecHash")
			for _, pod := range pods(r) {
				if pod, ok := pod.(map[string]any); ok {
					delete(coretest.Labels(pod), sparkpod.LabelSubmissionID)
					coretest.Labels(pod)[sparkpod.LabelSparkRole] = RoleConnectServer
				}
			}
		}},
		{Name: "adopted-generation-other", Apply: func(r map[string]any) {
			conds, _ := coretest.Status(r)["conditions"].([]any)
			coretest.Status(r)["conditions"] = append(conds, map[string]any{"type": "Adopted", "status": "True", "reason": "KubeflowServerAdopted",
				"message": "mutated", "observedGeneration": 99, "lastTransitionTime": "2026-03-08T06:00:00Z"})
		}},
		{Name: "pod-running-ready", Apply: eachPod(func(pod map[string]any) {
			pod["status"] = map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		})},
		{Name: "pod-failed", Apply: eachPod(func(pod map[string]any) { pod["status"] = map[string]any{"phase": "Failed"} })},
		{Name: "pod-being-deleted", Apply: eachPod(func(pod map[string]any) { coretest.Obj(pod, "metadata")["deletionTimestamp"] = "2026-03-08T06:00:00Z" })},
		{Name: "pod-null", Apply: func(r map[string]any) {
			for name := range pods(r) {
				pods(r)[name] = nil
			}
		}},
		{Name: "second-live-pod", Apply: func(r map[string]any) {
			pods(r)["intruder"] = map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "intruder", "labels": map[string]any{sparkpod.LabelSubmissionID: "x"}},
				"status":   map[string]any{"phase": "Running"}}
		}},
		{Name: "configmaps-gone", Apply: func(r map[string]any) { delete(coretest.Obj(r, "children"), "ConfigMap.v1") }},
		{Name: "finalizing", Apply: func(r map[string]any) { r["finalizing"] = true }},
	}
	const workload = "Workload.kueue.x-k8s.io/v1beta2"
	workloads := func(r map[string]any) map[string]any { return coretest.Group(r, workload) }
	eachWorkload := func(edit func(wl map[string]any)) func(map[string]any) { return coretest.EachChild(workload, edit) }
	setCond := func(typ, st string) func(map[string]any) {
		return eachWorkload(func(wl map[string]any) {
			var out []any
			conds, _ := coretest.Obj(wl, "status")["conditions"].([]any)
			for _, c := range conds {
				if c.(map[string]any)["type"] != typ {
					out = append(out, c)
				}
			}
			coretest.Obj(wl, "status")["conditions"] = append(out, map[string]any{"type": typ, "status": st, "reason": "Test", "message": "mutated", "lastTransitionTime": "2026-03-08T06:00:00Z"})
		})
	}
	ms = append(ms,
		coretest.Mutation{Name: "workload-removed", Apply: func(r map[string]any) { clear(workloads(r)) }},
		coretest.Mutation{Name: "workload-evicted", Apply: setCond("Evicted", "True")},
		coretest.Mutation{Name: "workload-finished", Apply: setCond("Finished", "True")},
		coretest.Mutation{Name: "workload-admitted", Apply: setCond("Admitted", "True")},
		coretest.Mutation{Name: "workload-not-admitted", Apply: setCond("Admitted", "False")},
		coretest.Mutation{Name: "workload-no-admission", Apply: eachWorkload(func(wl map[string]any) { delete(coretest.Obj(wl, "status"), "admission") })},
		coretest.Mutation{Name: "workload-deleting", Apply: eachWorkload(func(wl map[string]any) { coretest.Obj(wl, "metadata")["deletionTimestamp"] = "2026-03-08T06:00:00Z" })},
		coretest.Mutation{Name: "workload-queue-other", Apply: eachWorkload(func(wl map[string]any) { coretest.Obj(wl, "spec")["queueName"] = "other" })},
		coretest.Mutation{Name: "kueue-disabled", Apply: func(r map[string]any) { delete(coretest.Obj(r, "children"), "Workload.kueue.x-k8s.io/v1beta2") }},
		coretest.Mutation{Name: "kueue-enabled", Apply: func(r map[string]any) {
			workloads(r)
			coretest.Obj(coretest.Obj(coretest.Parent(r), "metadata"), "labels")["kueue.x-k8s.io/queue-name"] = "notebooks"
		}},
		coretest.Mutation{Name: "queue-label-removed", Apply: func(r map[string]any) {
			delete(coretest.Obj(coretest.Obj(coretest.Parent(r), "metadata"), "labels"), "kueue.x-k8s.io/queue-name")
		}},
		coretest.Mutation{Name: "flavors-gone", Apply: func(r map[string]any) { delete(coretest.Obj(r, "related"), "ResourceFlavor.kueue.x-k8s.io/v1beta2") }},
	)
	return ms
}
