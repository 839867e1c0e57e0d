package sparkcluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// FuzzSync feeds arbitrary request bodies to the sync hook, seeded with every golden request.
// It must never panic or fault, and every 200 must keep the observed StatefulSets (the
// property test's oracle).
func FuzzSync(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"parent":null,"children":null}`))
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "request.json"))
	require.NoError(f, err)
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req metacontroller.SyncRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		resp, _, err := Sync(&req, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC))
		checkStatefulSetsKeptOracle(t, "fuzz", body, resp, err)
	})
}
