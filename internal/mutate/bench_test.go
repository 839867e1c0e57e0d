package mutate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkMutate measures the whole in-process answer, decode to encoded response, for a typical
// executor pod (with a customization annotation) under the five-rule policy of the
// typical-executor golden case.
func BenchmarkMutate(b *testing.B) {
	dir := filepath.Join(goldenDir, "typical-executor")
	body, err := os.ReadFile(filepath.Join(dir, "review.json"))
	require.NoError(b, err)
	policy, err := LoadPolicy(filepath.Join(dir, "policy.yaml"))
	require.NoError(b, err)
	require.Len(b, policy.RuleNames(), 5)

	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := Review(body, policy)
		if err != nil {
			b.Fatal(err)
		}
		if out.Response.Patch == nil {
			b.Fatal("no patch")
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
}
