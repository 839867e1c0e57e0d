package mutate

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// fencedBlock returns the first fenced block of the given language after heading in the markdown.
func fencedBlock(t *testing.T, doc, heading, lang string) string {
	t.Helper()
	i := strings.Index(doc, heading)
	require.GreaterOrEqual(t, i, 0, "heading %q", heading)
	rest := doc[i:]
	open := "```" + lang + "\n"
	j := strings.Index(rest, open)
	require.GreaterOrEqual(t, j, 0, "no %s block after %q", lang, heading)
	rest = rest[j+len(open):]
	k := strings.Index(rest, "```")
	require.GreaterOrEqual(t, k, 0)
	return rest[:k]
}

// TestDocumentedExamplesLoad keeps docs/mutate.md honest: its examples must be accepted as written.
func TestDocumentedExamplesLoad(t *testing.T) {
	data, err := os.ReadFile("../../docs/mutate.md")
	require.NoError(t, err)
	doc := string(data)

	p, err := ParsePolicy([]byte(fencedBlock(t, doc, "### Complete example", "yaml")))
	require.NoError(t, err)
	assert.Equal(t, []string{"restricted", "yunikorn", "executor-placement", "driver-placement", "analytics-volcano", "cost-labels"}, p.RuleNames())

	example := fencedBlock(t, doc, "Example, an executor of a Spark 2.4 application", "json")
	c, err := sparkpod.DecodeCustomization(strings.ReplaceAll(example, "\n", ""))
	require.NoError(t, err)
	assert.Equal(t, "nvidia.com/gpu", c.GPU.Name)
}
