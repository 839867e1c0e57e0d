package apacheapp

import (
	"testing"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/goldentest"
)

// TestGoldenAnswersSettle: no golden sync answer counts on its own status write to be synced
// again (the registration sets ignoreStatusChanges).
func TestGoldenAnswersSettle(t *testing.T) {
	settles := goldentest.NewSettles(t)
	for _, c := range goldenCases() {
		if c.finalizing {
			continue
		}
		w := newWorld(t, piYAML)
		if c.setup != nil {
			c.setup(w)
		}
		settles.Check(c.name, coretest.MustJSON(t, w.request(false)), goldentest.Sync(func(req *metacontroller.SyncRequest) (*metacontroller.SyncResponse, error) {
			resp, _, err := Sync(req, w.now, w.cfg)
			return resp, err
		}))
	}
}
