package coretest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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

// Apply plays Metacontroller's part of one answer on the observed children: a child the answer
// names for the first time is created (the next of uids, created at now; a Pod Pending) unless
// refuse says the API server would not create it; a child observed already stays as observed;
// one the answer leaves out is deleted. A child of a type not in objs fails the test, as the
// registration would not declare it.
func (objs Objects) Apply(t testing.TB, resp *metacontroller.SyncResponse, uids *int, now time.Time, refuse func(Child) bool) {
	t.Helper()
	desired := map[string]bool{}
	for _, c := range Children(t, resp) {
		require.Contains(t, objs, c.Key, "child of an undeclared type %s", c.Key)
		desired[c.Key+"/"+c.Name] = true
		if _, exists := objs[c.Key][c.Name]; exists || (refuse != nil && refuse(c)) {
			continue
		}
		*uids++
		CreatedAt(c, *uids, now)
		if c.Obj["kind"] == "Pod" {
			c.Obj["status"] = map[string]any{"phase": "Pending"}
		}
		objs[c.Key][c.Name] = c.Obj
	}
	for key, group := range objs {
		for name := range group {
			if !desired[key+"/"+name] {
				delete(group, name)
			}
		}
	}
}

// StatusSchema is CheckStatus against the CRD in file, which it loads once, on first use.
func StatusSchema(file string) func(t testing.TB, parent any, status []byte) {
	load := sync.OnceValues(func() (*crdschema.Validator, error) { return crdschema.Load(file) })
	return func(t testing.TB, parent any, status []byte) {
		t.Helper()
		crd, err := load()
		require.NoError(t, err)
		CheckStatus(t, crd, parent, status)
	}
}

// DriverService returns the name of the one driver Service (<…>-driver-svc) among services, a
// world's Service children by name.
func DriverService(t testing.TB, services map[string]map[string]any) string {
	t.Helper()
	var names []string
	for name := range services {
		if strings.HasSuffix(name, "-driver-svc") {
			names = append(names, name)
		}
	}
	require.Len(t, names, 1, "one driver Service: %v", names)
	return names[0]
}
