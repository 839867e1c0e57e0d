package sparkapp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/goldentest"
)

// TestGoldenAnswersSettle: no golden sync answer counts on its own status write to be synced
// again (the registrations set ignoreStatusChanges).
func TestGoldenAnswersSettle(t *testing.T) {
	settles := goldentest.NewSettles(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync", "*", "request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		dir := filepath.Dir(file)
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		now, cfg := caseNow(t, dir), caseConfig(t, dir)
		settles.Check(filepath.Base(dir), body, goldentest.Sync(func(req *metacontroller.SyncRequest) (*metacontroller.SyncResponse, error) {
			resp, _, err := Sync(req, now, cfg)
			return resp, err
		}))
	}
}
