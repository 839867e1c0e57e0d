package apacheapp

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// TestNeverDropsALivePod mutates every golden request and checks each answer against an oracle
// written apart from the core's checkLivePodsKept: a 200 answer to a sync of an application not
// being deleted keeps every observed Pod that has not terminated, unless the Pod belongs to the
// attempt the observed status names and the answer gives that attempt up (its core state goes
// from an active one to a releasing one, or was releasing already).
func TestNeverDropsALivePod(t *testing.T) {
	cfg := sparkapp.DefaultConfig()
	total, answered := coretest.EachMutated(t, filepath.Join(goldenDir, "*", "request.json"), mutations(), func(label string, raw []byte, req *metacontroller.SyncRequest) bool {
		resp, _, err := Sync(req, coretest.WorldStart.Add(time.Hour), cfg)
		if !coretest.Answered(t, label, err) {
			return false
		}
		droppable := droppablePods(t, raw, resp)
		kept := coretest.AnsweredNames(t, resp, "Pod")
		for name, mayGo := range droppable {
			assert.True(t, mayGo || kept[name], "%s: live Pod %s left out of a 200 answer", label, name)
		}
		return true
	})
	assert.Greater(t, answered, total/2)
}

// releasing are the core's states in which the attempt's children are let go.
var releasing = map[string]bool{
	"FAILING": true, "PENDING_RERUN": true, "COMPLETED": true, "FAILED": true, "INVALIDATING": true,
	"SUSPENDING": true, "SUSPENDED": true, "RESUMING": true,
}

// droppablePods maps each live observed Pod to whether the answer may leave it out.
func droppablePods(t *testing.T, raw []byte, resp *metacontroller.SyncResponse) map[string]bool {
	t.Helper()
	type pod struct {
		Metadata struct {
			Labels            map[string]string `json:"labels"`
			DeletionTimestamp any               `json:"deletionTimestamp"`
		} `json:"metadata"`
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	type attempt struct {
		AppState struct {
			State string `json:"state"`
		} `json:"applicationState"`
		SubmissionID string `json:"submissionID"`
	}
	var req struct {
		Finalizing bool `json:"finalizing"`
		Parent     struct {
			Metadata struct {
				DeletionTimestamp any `json:"deletionTimestamp"`
			} `json:"metadata"`
			Status struct {
				Attempt *attempt `json:"attempt"`
			} `json:"status"`
		} `json:"parent"`
		Children map[string]map[string]*pod `json:"children"`
	}
	require.NoError(t, json.Unmarshal(raw, &req))
	var answered struct {
		Attempt *attempt `json:"attempt"`
	}
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, resp.Status), &answered))
	deleting := req.Finalizing || req.Parent.Metadata.DeletionTimestamp != nil
	var observed attempt
	if req.Parent.Status.Attempt != nil {
		observed = *req.Parent.Status.Attempt
	}
	gives := answered.Attempt != nil && releasing[answered.Attempt.AppState.State]
	out := map[string]bool{}
	for name, p := range req.Children["Pod.v1"] {
		if p == nil || p.Metadata.DeletionTimestamp != nil || p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
			continue
		}
		sub := p.Metadata.Labels[sparkpod.LabelSubmissionID]
		out[name] = deleting || gives && sub != "" && sub == observed.SubmissionID
	}
	return out
}

func mutations() []coretest.Mutation {
	pods := func(r map[string]any) map[string]any { return coretest.Group(r, "Pod.v1") }
	eachPod := func(edit func(pod map[string]any)) func(map[string]any) { return coretest.EachChild("Pod.v1", edit) }
	attempt := func(r map[string]any) map[string]any { return coretest.Obj(coretest.Status(r), "attempt") }
	conf := func(r map[string]any) map[string]any { return coretest.Obj(coretest.Spec(r), "sparkConf") }
	return []coretest.Mutation{
		{Name: "unchanged", Apply: func(map[string]any) {}},
		{Name: "status-erased", Apply: func(r map[string]any) { delete(coretest.Parent(r), "status") }},
		{Name: "attempt-erased", Apply: func(r map[string]any) { delete(coretest.Status(r), "attempt") }},
		{Name: "apache-state-erased", Apply: func(r map[string]any) { delete(coretest.Status(r), "currentState") }},
		{Name: "apache-state-succeeded", Apply: func(r map[string]any) {
			coretest.Obj(coretest.Status(r), "currentState")["currentStateSummary"] = "Succeeded"
		}},
		{Name: "history-erased", Apply: func(r map[string]any) { delete(coretest.Status(r), "stateTransitionHistory") }},
		{Name: "core-state-completed", Apply: func(r map[string]any) { coretest.Obj(attempt(r), "applicationState")["state"] = "COMPLETED" }},
		{Name: "core-state-unknown", Apply: func(r map[string]any) { coretest.Obj(attempt(r), "applicationState")["state"] = "NOT_A_STATE" }},
		{Name: "core-submission-other", Apply: func(r map[string]any) { attempt(r)["submissionID"] = "00000000-0000-5000-8000-000000000000" }},
		{Name: "core-hash-other", Apply: func(r map[string]any) { attempt(r)["submittedSpecHash"] = "0000000000000000" }},
		{Name: "conditions-erased", Apply: func(r map[string]any) { delete(coretest.Status(r), "conditions") }},
		{Name: "spec-jar-edited", Apply: func(r map[string]any) { coretest.Spec(r)["jars"] = "local:///opt/other.jar" }},
		{Name: "spec-client-mode", Apply: func(r map[string]any) { coretest.Spec(r)["deploymentMode"] = "ClientMode" }},
		{Name: "spec-image-removed", Apply: func(r map[string]any) { delete(conf(r), "spark.kubernetes.container.image") }},
		{Name: "spec-does-not-decode", Apply: func(r map[string]any) { coretest.Spec(r)["driverArgs"] = "x" }},
		{Name: "spec-retain-always", Apply: func(r map[string]any) {
			coretest.Obj(coretest.Spec(r), "applicationTolerations")["resourceRetainPolicy"] = "Always"
		}},
		{Name: "spec-restart-on-failure", Apply: func(r map[string]any) {
			coretest.Obj(coretest.Spec(r), "applicationTolerations")["restartConfig"] = map[string]any{"restartPolicy": "OnFailure"}
		}},
		{Name: "spec-removed", Apply: func(r map[string]any) { delete(coretest.Parent(r), "spec") }},
		// An extra child named as one of the attempt's own: the spec turns invalid mid-attempt.
		{Name: "spec-extra-named-as-own", Apply: func(r map[string]any) {
			name, _ := coretest.Obj(coretest.Parent(r), "metadata")["name"].(string)
			coretest.Spec(r)["configMapSpecs"] = []any{map[string]any{"name": name + "-0-spark-drv-conf-map"}}
		}},
		// A registration without the Gateway API routes, where a spec that asks for them is
		// invalid.
		{Name: "routes-undeclared", Apply: func(r map[string]any) {
			children := coretest.Obj(r, "children")
			delete(children, "HTTPRoute.gateway.networking.k8s.io/v1")
			delete(children, "GRPCRoute.gateway.networking.k8s.io/v1")
		}},
		{Name: "spec-extras-removed", Apply: func(r map[string]any) {
			for _, f := range []string{"configMapSpecs", "driverServiceIngressList", "driverHttpRouteList", "driverGrpcRouteList"} {
				delete(coretest.Spec(r), f)
			}
		}},
		{Name: "pod-submission-label-other", Apply: eachPod(func(pod map[string]any) { coretest.Labels(pod)[sparkpod.LabelSubmissionID] = "other" })},
		{Name: "pod-submission-label-removed", Apply: eachPod(func(pod map[string]any) { delete(coretest.Labels(pod), sparkpod.LabelSubmissionID) })},
		{Name: "pod-running-ready", Apply: eachPod(func(pod map[string]any) {
			pod["status"] = map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		})},
		{Name: "pod-failed", Apply: eachPod(func(pod map[string]any) { pod["status"] = map[string]any{"phase": "Failed"} })},
		{Name: "pod-being-deleted", Apply: eachPod(func(pod map[string]any) { coretest.Obj(pod, "metadata")["deletionTimestamp"] = "2026-03-08T06:00:00Z" })},
		{Name: "second-live-pod", Apply: func(r map[string]any) {
			pods(r)["intruder"] = map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "intruder", "labels": map[string]any{sparkpod.LabelSubmissionID: "x"}},
				"status":   map[string]any{"phase": "Running"}}
		}},
		{Name: "finalizing", Apply: func(r map[string]any) { r["finalizing"] = true }},
	}
}
