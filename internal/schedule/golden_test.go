package schedule

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/goldentest"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
)

var update = flag.Bool("update", false, "rewrite testdata/scheduled/*/response.json from the current code")

const goldenDir = "../../testdata/scheduled"

// TestGolden runs each testdata/scheduled/<case>/request.json at the instant in now.txt and
// compares the answer with response.json. Every answer must also be accepted by the API server
// (the status on the parent, each run as a SparkApplication) and be a fixed point: applied and
// synced again at the same instant, it gives the same status and runs.
func TestGolden(t *testing.T) {
	ssaSchema, err := crdschema.Load("../../crds/sparkoperator.k8s.io_scheduledsparkapplications.yaml")
	require.NoError(t, err)
	appSchema, err := crdschema.Load("../../crds/sparkoperator.k8s.io_sparkapplications.yaml")
	require.NoError(t, err)

	requests, err := filepath.Glob(filepath.Join(goldenDir, "*", "request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, requests)
	for _, reqPath := range requests {
		dir := filepath.Dir(reqPath)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			req, now := readGoldenCase(t, dir)
			resp, outcome, err := Sync(req, now, Config{})
			require.NoError(t, err)
			got, err := json.MarshalIndent(resp, "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')

			respPath := filepath.Join(dir, "response.json")
			if *update {
				require.NoError(t, os.WriteFile(respPath, got, 0o644))
			}
			want, err := os.ReadFile(respPath)
			require.NoError(t, err, "run go test ./internal/schedule -run TestGolden -update")
			assert.Equal(t, string(want), string(got))

			story, err := outcome.Story()
			require.NoError(t, err)
			goldentest.CompareEvents(t, filepath.Join(dir, "events.json"), story.Events, len(story.Events), *update, "go test ./internal/schedule -run TestGolden")

			checkStatusSchema(t, ssaSchema, req, got)
			checkRunsSchema(t, appSchema, got)
			checkFixedPoint(t, req, resp, now)
		})
	}
}

func readGoldenCase(t *testing.T, dir string) (*metacontroller.SyncRequest, time.Time) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "request.json"))
	require.NoError(t, err)
	var req metacontroller.SyncRequest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&req))
	nowText, err := os.ReadFile(filepath.Join(dir, "now.txt"))
	require.NoError(t, err)
	now, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(nowText)))
	require.NoError(t, err)
	return &req, now
}

// checkStatusSchema validates the parent with the answered status, as the API server does on
// a status update.
func checkStatusSchema(t *testing.T, v *crdschema.Validator, req *metacontroller.SyncRequest, resp []byte) {
	t.Helper()
	var parent map[string]any
	require.NoError(t, json.Unmarshal(req.Parent, &parent))
	var answer struct {
		Status map[string]any `json:"status"`
	}
	require.NoError(t, json.Unmarshal(resp, &answer))
	parent["status"] = answer.Status
	assert.Empty(t, v.Validate(parent), "the status must pass the CRD schema")
}

func checkRunsSchema(t *testing.T, v *crdschema.Validator, resp []byte) {
	t.Helper()
	var answer struct {
		Children []map[string]any `json:"children"`
	}
	require.NoError(t, json.Unmarshal(resp, &answer))
	for _, child := range answer.Children {
		assert.Empty(t, v.Validate(child), "run %v must pass the SparkApplication CRD schema", child["metadata"])
	}
}

// checkFixedPoint applies the answer the way Metacontroller and the API server would (status
// stored, missing runs created, extra runs deleted) and syncs again at the same instant.
func checkFixedPoint(t *testing.T, req *metacontroller.SyncRequest, resp *metacontroller.SyncResponse, now time.Time) {
	t.Helper()
	var parent map[string]any
	require.NoError(t, json.Unmarshal(req.Parent, &parent))
	var st any
	require.NoError(t, jsonRoundTrip(resp.Status, &st))
	parent["status"] = st
	next := &metacontroller.SyncRequest{Children: metacontroller.ChildMap{ChildKey: {}}}
	var err error
	next.Parent, err = json.Marshal(parent)
	require.NoError(t, err)
	for _, name := range childNames(resp) {
		if raw, ok := req.Children[ChildKey][name]; ok {
			next.Children[ChildKey][name] = raw
			continue
		}
		for _, c := range resp.Children {
			if obj, ok := c.(*runObject); ok && obj.Metadata.Name == name {
				next.Children[ChildKey][name], err = json.Marshal(obj)
				require.NoError(t, err)
			}
		}
	}
	again, res, err := Sync(next, now, Config{})
	require.NoError(t, err)
	assert.Equal(t, string(coretest.MustJSON(t, resp.Status)), string(coretest.MustJSON(t, again.Status)), "syncing the applied answer again changes the status")
	assert.Equal(t, childNames(resp), childNames(again))
	assert.False(t, res.Submitted)
}

// TestGoldenSchemaCheckCanFail guards the schema check above against passing vacuously.
func TestGoldenSchemaCheckCanFail(t *testing.T) {
	v, err := crdschema.Load("../../crds/sparkoperator.k8s.io_scheduledsparkapplications.yaml")
	require.NoError(t, err)
	req, _ := readGoldenCase(t, filepath.Join(goldenDir, "due-creates-run"))
	var parent map[string]any
	require.NoError(t, json.Unmarshal(req.Parent, &parent))
	require.Empty(t, v.Validate(parent))
	parent["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["reason"] = "not a reason"
	parent["status"].(map[string]any)["nextRunTime"] = "2024-06-03T12:00:00Z"
	errs := v.Validate(parent)
	assert.Len(t, errs, 2, "%v", errs)
}
