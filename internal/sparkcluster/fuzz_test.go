package sparkcluster

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// FuzzSync feeds arbitrary request bodies to the sync hook, seeded with every golden request.
// It must never panic or fault, and every 200 must keep the observed StatefulSets (the
// property test's oracle).
func FuzzSync(f *testing.F) {
	coretest.FuzzRequests(f, filepath.Join(goldenDir, "*", "request.json"), func(t *testing.T, body []byte, req *metacontroller.SyncRequest) {
		resp, _, err := Sync(req, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC))
		checkStatefulSetsKeptOracle(t, "fuzz", body, resp, err)
	})
}
