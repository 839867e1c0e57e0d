package sparkapp

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden response files under testdata/")

// goldenNow is the clock of every golden case unless the case has a now.txt.
var goldenNow = time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)

// TestGolden runs every testdata/{sync,finalize,customize}/<case>/request.json through its hook
// and compares the answer with response.json. Sync answers' statuses must also validate
// against the CRD, or Metacontroller would fail every sync of such an application.
func TestGolden(t *testing.T) {
	crd, err := crdschema.Load(filepath.Join("..", "..", "crds", "sparkoperator.k8s.io_sparkapplications.yaml"))
	require.NoError(t, err)
	for _, hook := range []string{"sync", "finalize", "customize"} {
		dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", hook, "*", "request.json"))
		require.NoError(t, err)
		for _, reqFile := range dirs {
			dir := filepath.Dir(reqFile)
			t.Run(hook+"/"+filepath.Base(dir), func(t *testing.T) {
				body, err := os.ReadFile(reqFile)
				require.NoError(t, err)
				got := runHook(t, hook, body, caseNow(t, dir), caseConfig(t, dir))
				if hook == "sync" {
					checkStatusSchema(t, crd, got)
					events := syncEvents(t, body, caseNow(t, dir), caseConfig(t, dir))
					goldentest.CompareEvents(t, filepath.Join(dir, "events.json"), events, len(events), *update, "go test ./internal/sparkapp -run TestGolden")
				}
				compareGolden(t, filepath.Join(dir, "response.json"), got)
			})
		}
	}
}

func caseNow(t *testing.T, dir string) time.Time {
	b, err := os.ReadFile(filepath.Join(dir, "now.txt"))
	if os.IsNotExist(err) {
		return goldenNow
	}
	require.NoError(t, err)
	now, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return now
}

// caseConfig is the operator configuration of a case: DefaultConfig, with what the case's
// config.json sets over it.
func caseConfig(t *testing.T, dir string) Config {
	cfg := DefaultConfig()
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if os.IsNotExist(err) {
		return cfg
	}
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cfg))
	return cfg
}

func runHook(t *testing.T, hook string, body []byte, now time.Time, cfg Config) []byte {
	t.Helper()
	var resp any
	switch hook {
	case "customize":
		var req metacontroller.CustomizeRequest
		require.NoError(t, json.Unmarshal(body, &req))
		r, err := Customize(&req)
		require.NoError(t, err)
		resp = r
	case "finalize":
		var req metacontroller.SyncRequest
		require.NoError(t, json.Unmarshal(body, &req))
		r, err := Finalize(&req)
		require.NoError(t, err)
		resp = r
	default:
		var req metacontroller.SyncRequest
		require.NoError(t, json.Unmarshal(body, &req))
		r, _, err := Sync(&req, now, cfg)
		if err != nil {
			resp = goldentest.ErrorAnswer(err)
		} else {
			resp = r
		}
	}
	out, err := json.MarshalIndent(resp, "", "  ")
	require.NoError(t, err)
	return append(out, '\n')
}

// syncEvents are the Events the server records after answering a sync request: none for a
// request the hook refuses.
func syncEvents(t *testing.T, body []byte, now time.Time, cfg Config) []event.Event {
	t.Helper()
	var req metacontroller.SyncRequest
	require.NoError(t, json.Unmarshal(body, &req))
	_, outcome, err := Sync(&req, now, cfg)
	if err != nil {
		return nil
	}
	story, err := outcome.Story()
	require.NoError(t, err)
	return story.Events
}

func checkStatusSchema(t *testing.T, crd *crdschema.Validator, response []byte) {
	t.Helper()
	var resp struct {
		Status map[string]any `json:"status"`
		Error  string         `json:"error"`
	}
	require.NoError(t, json.Unmarshal(response, &resp))
	if resp.Error != "" {
		return
	}
	// What Metacontroller writes: the answered status, an omitted one as none, plus
	// observedGeneration.
	if resp.Status == nil {
		resp.Status = map[string]any{}
	}
	resp.Status["observedGeneration"] = int64(1)
	obj := map[string]any{
		"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
		"metadata": map[string]any{"name": "x", "namespace": "default"},
		"spec":     map[string]any{"type": "Scala", "sparkVersion": "3.5.3", "driver": map[string]any{}, "executor": map[string]any{}},
		"status":   resp.Status,
	}
	errs := crd.Validate(obj)
	require.Empty(t, errs, "the status does not validate against the CRD: %v", errs)
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldentest.Compare(t, path, got, *update, "go test ./internal/sparkapp -run TestGolden")
}
