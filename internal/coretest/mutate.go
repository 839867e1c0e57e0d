package coretest

import (
	"encoding/json"
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
