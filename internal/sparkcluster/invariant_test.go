package sparkcluster

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// TestNeverDropsAStatefulSet mutates every golden request field by field and checks each
// answer against an oracle written apart from checkStatefulSetsKept: a 200 answer to a sync of
// a cluster not being deleted keeps every observed StatefulSet by name.
func TestNeverDropsAStatefulSet(t *testing.T) {
	total, answered := coretest.EachMutated(t, filepath.Join(goldenDir, "*", "request.json"), clusterMutations(), func(label string, raw []byte, req *metacontroller.SyncRequest) bool {
		resp, _, err := Sync(req, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC))
		return checkStatefulSetsKeptOracle(t, label, raw, resp, err)
	})
	assert.Greater(t, answered, total/2)
}

// checkStatefulSetsKeptOracle judges one answer to the request raw: an error must be a refusal
// or a request error, never a fault; a 200 to a sync of a cluster not being deleted must keep
// every observed StatefulSet, but for the cluster's own master and worker when the answer
// suspends it (spec.suspend is true and the state answered is Suspended). It reports whether
// the answer was a 200.
func checkStatefulSetsKeptOracle(t *testing.T, label string, raw []byte, resp *metacontroller.SyncResponse, err error) bool {
	t.Helper()
	if !coretest.Answered(t, label, err) {
		return false
	}
	observed, deleting := observedStatefulSets(t, raw)
	if deleting {
		return true
	}
	var parent struct {
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			Suspend any `json:"suspend"`
		} `json:"spec"`
	}
	var req struct {
		Parent json.RawMessage `json:"parent"`
	}
	require.NoError(t, json.Unmarshal(raw, &req))
	require.NoError(t, json.Unmarshal(req.Parent, &parent))
	var status struct {
		CurrentState struct {
			CurrentStateSummary string `json:"currentStateSummary"`
		} `json:"currentState"`
	}
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, resp.Status), &status))
	suspends := parent.Spec.Suspend == true && status.CurrentState.CurrentStateSummary == "Suspended"
	kept := coretest.AnsweredNames(t, resp, "StatefulSet")
	for _, n := range observed {
		if suspends && (n == parent.Metadata.Name+"-master" || n == parent.Metadata.Name+"-worker") {
			continue
		}
		assert.True(t, kept[n], "%s: StatefulSet %s left out of a 200 answer", label, n)
	}
	return true
}

func observedStatefulSets(t *testing.T, raw []byte) (names []string, deleting bool) {
	t.Helper()
	var req struct {
		Finalizing bool `json:"finalizing"`
		Parent     struct {
			Metadata struct {
				DeletionTimestamp any `json:"deletionTimestamp"`
			} `json:"metadata"`
		} `json:"parent"`
		Children map[string]map[string]json.RawMessage `json:"children"`
	}
	require.NoError(t, json.Unmarshal(raw, &req))
	for n, obj := range req.Children["StatefulSet.apps/v1"] {
		if string(obj) != "null" {
			names = append(names, n)
		}
	}
	return names, req.Finalizing && req.Parent.Metadata.DeletionTimestamp != nil
}

func clusterMutations() []coretest.Mutation {
	ic := func(r map[string]any) map[string]any {
		return coretest.Obj(coretest.Obj(coretest.Spec(r), "clusterTolerations"), "instanceConfig")
	}
	sets := func(r map[string]any) map[string]any { return coretest.Group(r, "StatefulSet.apps/v1") }
	return []coretest.Mutation{
		{Name: "unchanged", Apply: func(map[string]any) {}},
		{Name: "status-erased", Apply: func(r map[string]any) { delete(coretest.Parent(r), "status") }},
		{Name: "spec-removed", Apply: func(r map[string]any) { delete(coretest.Parent(r), "spec") }},
		{Name: "spec-invalid-bounds", Apply: func(r map[string]any) { ic(r)["minWorkers"] = 10 }},
		{Name: "spec-negative", Apply: func(r map[string]any) { ic(r)["initWorkers"] = -1 }},
		{Name: "spec-does-not-decode", Apply: func(r map[string]any) {
			coretest.Obj(coretest.Spec(r), "masterSpec")["statefulSetSpec"] = map[string]any{"replicas": "one"}
		}},
		{Name: "spec-version-removed", Apply: func(r map[string]any) { coretest.Obj(coretest.Spec(r), "runtimeVersions")["sparkVersion"] = "" }},
		{Name: "name-too-long", Apply: func(r map[string]any) {
			coretest.Obj(coretest.Parent(r), "metadata")["name"] = "a-cluster-name-that-is-far-too-long-for-statefulsets"
		}},
		{Name: "name-changed", Apply: func(r map[string]any) { coretest.Obj(coretest.Parent(r), "metadata")["name"] = "other" }},
		{Name: "autoscaled", Apply: func(r map[string]any) { ic(r)["maxWorkers"] = 10 }},
		{Name: "workers-zero", Apply: func(r map[string]any) { ic(r)["initWorkers"] = 0; ic(r)["minWorkers"] = 0; ic(r)["maxWorkers"] = 0 }},
		{Name: "foreign-statefulset", Apply: func(r map[string]any) {
			sets(r)["legacy"] = map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "legacy"}}
		}},
		{Name: "statefulset-null", Apply: func(r map[string]any) {
			for n := range sets(r) {
				sets(r)[n] = nil
			}
		}},
		{Name: "suspended", Apply: func(r map[string]any) { coretest.Spec(r)["suspend"] = true }},
		{Name: "resumed", Apply: func(r map[string]any) { coretest.Spec(r)["suspend"] = false }},
		{Name: "suspend-not-a-bool", Apply: func(r map[string]any) { coretest.Spec(r)["suspend"] = "yes" }},
		{Name: "suspended-invalid", Apply: func(r map[string]any) { coretest.Spec(r)["suspend"] = true; ic(r)["minWorkers"] = 10 }},
		{Name: "suspended-renamed", Apply: func(r map[string]any) {
			coretest.Spec(r)["suspend"] = true
			coretest.Obj(coretest.Parent(r), "metadata")["name"] = "other"
		}},
		{Name: "suspended-foreign-statefulset", Apply: func(r map[string]any) {
			coretest.Spec(r)["suspend"] = true
			sets(r)["legacy"] = map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "legacy"}}
		}},
		{Name: "finalizing", Apply: func(r map[string]any) { r["finalizing"] = true }},
		{Name: "being-deleted", Apply: func(r map[string]any) {
			coretest.Obj(coretest.Parent(r), "metadata")["deletionTimestamp"] = "2026-03-08T06:00:00Z"
		}},
	}
}

// The check lets the cluster's own StatefulSets go only with the decision that suspends it:
// spec.suspend true and the state answered Suspended; a StatefulSet that is not the cluster's
// own is never let go.
func TestCheckStatefulSetsKeptAllowsOnlyTheSuspendingDecision(t *testing.T) {
	w := newWorld(t, clusterYAML)
	healthy(w)
	w.children[keyStatefulSet]["legacy"] = map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "legacy"}}
	legacy := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "legacy"}}
	for _, tt := range []struct {
		name     string
		suspend  bool
		state    string
		children []any
		refused  bool
	}{
		{"suspending", true, sparkv1.StateSuspended, []any{legacy}, false},
		{"suspend asked, another state answered", true, sparkv1.StateRunningHealthy, []any{legacy}, true},
		{"Suspended answered, suspend not asked", false, sparkv1.StateSuspended, []any{legacy}, true},
		{"suspending drops a foreign StatefulSet", true, sparkv1.StateSuspended, nil, true},
		{"running drops nothing", false, sparkv1.StateRunningHealthy, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w.c.Spec.Suspend = tt.suspend
			in, err := decodeRequest(w.request(false))
			require.NoError(t, err)
			status := &sparkv1.ClusterStatus{CurrentState: sparkv1.ClusterState{CurrentStateSummary: tt.state}}
			err = checkStatefulSetsKept(in, tt.children, status)
			if !tt.refused {
				assert.NoError(t, err)
				return
			}
			var refusal *metacontroller.Refusal
			assert.True(t, errors.As(err, &refusal), "refused: %v", err)
		})
	}
}
