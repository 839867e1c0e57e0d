package coretest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Mutation changes one thing in a decoded request.
type Mutation struct {
	Name  string
	Apply func(req map[string]any)
}

// EachMutated applies every mutation, one at a time, to every request file matching glob and
// hands each mutated request to judge, as raw JSON and decoded, labelled "case/mutation" (the
// case is the file's directory). judge reports whether the hook answered 200. EachMutated
// logs and returns how many requests it ran and how many were answered; it fails when no file
// matches, so a moved golden tree cannot make the property vacuous.
func EachMutated(t *testing.T, glob string, mutations []Mutation, judge func(label string, raw []byte, req *metacontroller.SyncRequest) bool) (total, answered int) {
	t.Helper()
	files, err := filepath.Glob(glob)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range mutations {
			var req map[string]any
			require.NoError(t, json.Unmarshal(body, &req))
			m.Apply(req)
			total++
			raw := MustJSON(t, req)
			var sreq metacontroller.SyncRequest
			require.NoError(t, json.Unmarshal(raw, &sreq))
			if judge(filepath.Base(filepath.Dir(file))+"/"+m.Name, raw, &sreq) {
				answered++
			}
		}
	}
	t.Logf("%d mutated requests, %d answered 200", total, answered)
	return total, answered
}

// Answered reports whether a hook answered 200 (err is nil), and fails the test when err is a
// fault: a hook may only refuse (409) or reject the request (400).
func Answered(t testing.TB, label string, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	var refusal *metacontroller.Refusal
	var bad *metacontroller.RequestError
	if !errors.As(err, &refusal) && !errors.As(err, &bad) {
		t.Fatalf("%s: a fault (5xx) where only a 400 or a 409 may be: %v", label, err)
	}
	return false
}

// FuzzRequests seeds f with an empty and a null request and every request file matching glob
// (after the seeds the caller added), and hands judge every fuzzed body that decodes as a sync
// request, with the request decoded.
func FuzzRequests(f *testing.F, glob string, judge func(t *testing.T, body []byte, req *metacontroller.SyncRequest)) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"parent":null,"children":null}`))
	SeedFiles(f, glob)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req metacontroller.SyncRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		judge(t, body, &req)
	})
}

// AnsweredNames is the set of names of the children of kind in an answer: what an oracle
// checks the observed children against.
func AnsweredNames(t testing.TB, resp *metacontroller.SyncResponse, kind string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, child := range resp.Children {
		var obj struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(MustJSON(t, child), &obj))
		if obj.Kind == kind {
			names[obj.Metadata.Name] = true
		}
	}
	return names
}

// SeedFiles adds every file matching glob to f's seed corpus and returns how many it added.
func SeedFiles(f *testing.F, glob string) int {
	files, err := filepath.Glob(glob)
	require.NoError(f, err)
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(body)
	}
	return len(files)
}
