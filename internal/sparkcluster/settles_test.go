package sparkcluster

import (
	"encoding/json"
	"testing"

	"github.com/sparkhooks/sparkhooks/internal/coretest"
	"github.com/sparkhooks/sparkhooks/internal/goldentest"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// TestGoldenAnswersSettle: no golden sync answer counts on its own status write to be synced
// again (the registrations set ignoreStatusChanges).
func TestGoldenAnswersSettle(t *testing.T) {
	settles := goldentest.NewSettles(t)
	for _, c := range goldenCases() {
		if c.finalizing {
			continue
		}
		w := c.setup(t)
		settles.Check(c.name, coretest.MustJSON(t, w.request(false)), func(b []byte) ([]byte, error) {
			var req metacontroller.SyncRequest
			if err := json.Unmarshal(b, &req); err != nil {
				return nil, err
			}
			resp, _, err := Sync(&req, w.now)
			if err != nil {
				return nil, err
			}
			return json.Marshal(resp)
		})
	}
}
