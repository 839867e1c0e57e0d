package ttlgc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// app decodes a SparkApplication as the dynamic client does: from JSON, so numbers are int64.
func app(t *testing.T, doc string) unstructured.Unstructured {
	t.Helper()
	var u unstructured.Unstructured
	require.NoError(t, u.UnmarshalJSON([]byte(doc)))
	return u
}

const expiredCondition = `{"type": "Expired", "status": "True", "reason": "TimeToLiveExpired", "message": "gone", "observedGeneration": 3, "lastTransitionTime": "2026-03-08T06:00:00Z"}`

func withConditions(deletion string, conditions ...string) string {
	list := ""
	for i, c := range conditions {
		if i > 0 {
			list += ","
		}
		list += c
	}
	return `{"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
		"metadata": {"name": "pi", "namespace": "jobs", "uid": "u-1", "resourceVersion": "42", "generation": 3` + deletion + `},
		"status": {"applicationState": {"state": "COMPLETED"}, "conditions": [` + list + `]}}`
}

func TestExpired(t *testing.T) {
	pinned := Target{Namespace: "jobs", Name: "pi", UID: "u-1", ResourceVersion: "42", Reason: "TimeToLiveExpired", Message: "gone"}
	tests := []struct {
		name string
		doc  string
		want []Target
	}{
		{name: "expired", doc: withConditions("", expiredCondition), want: []Target{pinned}},
		{name: "expired after other conditions", doc: withConditions("",
			`{"type": "DriverReady", "status": "False", "reason": "Terminated", "observedGeneration": 3, "lastTransitionTime": "2026-03-08T06:00:00Z"}`,
			expiredCondition), want: []Target{pinned}},
		{name: "no conditions", doc: withConditions("")},
		{name: "no status", doc: `{"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication", "metadata": {"name": "pi", "namespace": "jobs", "uid": "u-1", "generation": 1}}`},
		{name: "expired false", doc: withConditions("", `{"type": "Expired", "status": "False", "reason": "Pending", "observedGeneration": 3}`)},
		{name: "expired unknown", doc: withConditions("", `{"type": "Expired", "status": "Unknown", "reason": "Pending", "observedGeneration": 3}`)},
		// The spec was edited (its TTL raised, say) after the hook judged it.
		{name: "judged an older generation", doc: withConditions("", `{"type": "Expired", "status": "True", "reason": "TimeToLiveExpired", "observedGeneration": 2}`)},
		{name: "already being deleted", doc: withConditions(`, "deletionTimestamp": "2026-03-08T06:00:00Z"`, expiredCondition)},
		{name: "other condition true", doc: withConditions("", `{"type": "Failed", "status": "True", "reason": "AppFailed", "observedGeneration": 3}`)},
		{name: "malformed condition ignored", doc: withConditions("", `"Expired"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Expired([]unstructured.Unstructured{app(t, tt.doc)}))
		})
	}
}

func TestExpiredKeepsListOrder(t *testing.T) {
	a, b, c := app(t, withConditions("", expiredCondition)), app(t, withConditions("")), app(t, withConditions("", expiredCondition))
	a.SetName("a")
	b.SetName("b")
	c.SetName("c")
	var names []string
	for _, target := range Expired([]unstructured.Unstructured{a, b, c}) {
		names = append(names, target.Name)
	}
	assert.Equal(t, []string{"a", "c"}, names)
}
