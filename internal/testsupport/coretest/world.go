package coretest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
)

// Request is the sync request Metacontroller sends about parent with children observed; each
// related set, in order, replaces the keys of the ones before it. A Pod-only set first and the
// other related objects after it lets a test name some related Pods apart.
func Request(t testing.TB, parent []byte, children Objects, related ...Objects) *metacontroller.SyncRequest {
	t.Helper()
	req := &metacontroller.SyncRequest{Parent: parent, Children: children.ChildMap(t), Related: metacontroller.ChildMap{}}
	for _, objs := range related {
		for key, byName := range objs.ChildMap(t) {
			req.Related[key] = byName
		}
	}
	return req
}

// Objects are observed objects as Metacontroller sends them: child key → name → object.
type Objects map[string]map[string]map[string]any

// ChildMap is objs as a request's children or related objects, each key present even when it
// holds nothing.
func (objs Objects) ChildMap(t testing.TB) metacontroller.ChildMap {
	t.Helper()
	out := metacontroller.ChildMap{}
	for key, byName := range objs {
		out[key] = map[string]json.RawMessage{}
		for name, obj := range byName {
			out[key][name] = MustJSON(t, obj)
		}
	}
	return out
}

// Child is one child of an answer, decoded as the API server would store it.
type Child struct {
	Key, Name string
	Obj       map[string]any
	// Answered is the child's JSON as the hook encoded it, recorded as last applied.
	Answered string
}

// Children decodes the children of an answer, in the answer's order.
func Children(t testing.TB, resp *metacontroller.SyncResponse) []Child {
	t.Helper()
	out := make([]Child, 0, len(resp.Children))
	for _, child := range resp.Children {
		answered := MustJSON(t, child)
		var obj map[string]any
		require.NoError(t, json.Unmarshal(answered, &obj))
		key := metacontroller.Key(obj["kind"].(string), obj["apiVersion"].(string))
		name := obj["metadata"].(map[string]any)["name"].(string)
		out = append(out, Child{Key: key, Name: name, Obj: obj, Answered: string(answered)})
	}
	return out
}

// Created marks c as the API server creates it: the n-th uid, and the answer recorded as last
// applied, as Metacontroller does on create.
func Created(c Child, n int) {
	md := c.Obj["metadata"].(map[string]any)
	md["uid"] = fmt.Sprintf("child-%d", n)
	SetLastApplied(md, c.Answered)
}

// CreatedAt is Created with a creation time.
func CreatedAt(c Child, n int, now time.Time) {
	Created(c, n)
	c.Obj["metadata"].(map[string]any)["creationTimestamp"] = now.Format(time.RFC3339)
}

// SetLastApplied records answered as the last-applied annotation of the metadata md.
func SetLastApplied(md map[string]any, answered string) {
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[metacontroller.LastAppliedAnnotation] = answered
}

// WorldStart is when every core's test world begins: a fixed clock keeps answers byte-stable.
var WorldStart = time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)

// CheckStatus fails the test when the CRD would refuse parent with status as its status: in a
// cluster, Metacontroller's status write would fail, and every later sync with it.
func CheckStatus(t testing.TB, crd *crdschema.Validator, parent any, status []byte) {
	t.Helper()
	obj := map[string]any{}
	require.NoError(t, json.Unmarshal(MustJSON(t, parent), &obj))
	st := map[string]any{}
	require.NoError(t, json.Unmarshal(status, &st))
	obj["status"] = st
	errs := crd.Validate(obj)
	require.Empty(t, errs, "status rejected by the CRD schema: %v", errs)
}
