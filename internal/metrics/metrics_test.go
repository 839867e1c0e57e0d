package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRegistersEveryCollectorOnItsOwnRegistry(t *testing.T) {
	a, b := New(), New()
	a.Submissions.WithLabelValues("SparkApplication").Inc()
	a.HookDuration.WithLabelValues("sparkapplication_sync", "ok").Observe(0.0001)

	assert.Equal(t, 1.0, testutil.ToFloat64(a.Submissions.WithLabelValues("SparkApplication")))
	assert.Equal(t, 0.0, testutil.ToFloat64(b.Submissions.WithLabelValues("SparkApplication")), "registries must not share state")

	families, err := a.Registry.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	joined := strings.Join(names, ",")
	for _, want := range []string{"sparkhooks_submissions_total", "sparkhooks_hook_duration_seconds", "go_goroutines", "process_cpu_seconds_total"} {
		assert.Contains(t, joined, want)
	}
}
