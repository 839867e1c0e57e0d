package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
)

// TestKubeflowDashboardQueries runs a SparkPi's syncs (new, driver started, completed: the golden
// requests) through the wired server with --kubeflow-metrics, scrapes /metrics as Prometheus
// does, and evaluates the queries of a dashboard written for Kubeflow's operator on what it
// exposes (testdata/kubeflow-dashboard): each must find its series, of Kubeflow's type, with
// Kubeflow's labels.
func TestKubeflowDashboardQueries(t *testing.T) {
	m := metrics.New()
	opts, err := parseServeOptions([]string{"--kubeflow-metrics"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.True(t, opts.kubeflowMetrics.enabled)
	require.NoError(t, m.EnableKubeflow(opts.kubeflowMetrics.options))
	srv := httptest.NewServer(hooks.NewRouter(hooks.Config{
		Kinds:   []hook.Kind{sparkapp.Hooks(sparkapp.DefaultConfig())},
		Metrics: m,
		Now:     func() time.Time { return time.Date(2026, 3, 8, 6, 2, 0, 0, time.UTC) },
	}))
	defer srv.Close()
	for _, c := range []string{"new-spark-pi", "driver-started", "completed"} {
		body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sync", c, "request.json"))
		require.NoError(t, err)
		resp, err := srv.Client().Post(srv.URL+hooks.SparkApplicationSyncPath, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, c)
	}

	resp, err := srv.Client().Get(srv.URL + hooks.MetricsPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)

	// The panels of a Kubeflow dashboard, as sums over the scraped series: each counts the one
	// application.
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kubeflow-dashboard", "queries.json"))
	require.NoError(t, err)
	var queries []struct{ Query, Type string }
	require.NoError(t, json.Unmarshal(data, &queries))
	require.NotEmpty(t, queries)
	for _, q := range queries {
		typ, ok := dto.MetricType_value[q.Type]
		require.True(t, ok, "%s: type %s", q.Query, q.Type)
		name := strings.TrimSuffix(strings.TrimPrefix(q.Query, "sum("), ")")
		family := strings.TrimSuffix(name, "_count")
		if dto.MetricType(typ) == dto.MetricType_COUNTER {
			family = name
		}
		f, ok := families[family]
		require.True(t, ok, "%s: no family %s in the scrape", q.Query, family)
		require.Equal(t, dto.MetricType(typ), f.GetType(), "%s: Kubeflow's type", q.Query)
		var sum float64
		for _, s := range f.GetMetric() {
			require.Equal(t, "app_type", s.GetLabel()[0].GetName(), "%s: Kubeflow's default label", q.Query)
			require.Equal(t, "Unknown", s.GetLabel()[0].GetValue(), "%s: an application without the label", q.Query)
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				sum += s.GetCounter().GetValue()
			case dto.MetricType_SUMMARY:
				sum += float64(s.GetSummary().GetSampleCount())
			case dto.MetricType_HISTOGRAM:
				sum += float64(s.GetHistogram().GetSampleCount())
			}
		}
		require.Equal(t, float64(1), sum, q.Query)
	}
	_, failed := families["spark_application_failure_count"]
	require.False(t, failed, "no failure counted: a counter vector shows a series once it is counted")
}
