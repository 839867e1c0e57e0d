package apacheapp

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// FuzzSync feeds arbitrary request bodies to the sync hook, seeded with every golden request.
// It must never panic or fault, and every 200 must keep the live Pods the property test's
// oracle says it must.
func FuzzSync(f *testing.F) {
	cfg := sparkapp.DefaultConfig()
	coretest.FuzzRequests(f, filepath.Join(goldenDir, "*", "request.json"), func(t *testing.T, body []byte, req *metacontroller.SyncRequest) {
		resp, _, err := Sync(req, coretest.WorldStart.Add(time.Hour), cfg)
		if !coretest.Answered(t, "fuzz", err) {
			return
		}
		kept := coretest.AnsweredNames(t, resp, "Pod")
		for name, mayGo := range droppablePods(t, body, resp) {
			if !mayGo && !kept[name] {
				t.Errorf("live Pod %s left out of a 200 answer", name)
			}
		}
	})
}
