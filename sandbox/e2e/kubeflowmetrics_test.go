//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// dashboardQuery is a panel of a dashboard written for the Kubeflow Spark Operator's metrics
// (testdata/kubeflow-dashboard/queries.json, which the unit test of cmd/sparkhooks reads too).
type dashboardQuery struct {
	Query string `json:"query"`
	Type  string `json:"type"`
}

// The chart installs the hook server with metrics.kubeflow.enabled (main_test.go): after an
// application ran to completion on the cluster, each query of a dashboard written for
// Kubeflow's metrics finds data in a scrape of the hook server's /metrics, through its Service
// as Prometheus reaches it, with Kubeflow's type and the application's own app_type label. The
// suite runs one replica (replicaCount=1), so one scrape holds every count.
func TestKubeflowDashboardQueriesOnTheCluster(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "kubeflow-dashboard", "queries.json"))
	require.NoError(t, err)
	var queries []dashboardQuery
	require.NoError(t, json.Unmarshal(data, &queries))
	require.NotEmpty(t, queries)

	w := newWorld(t, hooksURL, appController)
	// Kubeflow's default label, valued from the application's label of that name: the series of
	// this application alone, whatever the other tests run beside it.
	appType := "e2e-" + w.ns
	manifest := strings.Replace(scenarioApp("dashboard", "10", ""), "  name: dashboard\n",
		fmt.Sprintf("  name: dashboard\n  labels:\n    app-type: %s\n", appType), 1)
	out, err := w.apply(manifest)
	require.NoError(t, err, out)
	_, pod := w.runAttempt(t, "dashboard", "")
	// Kubeflow observes the execution time only when it is positive, and the status holds whole
	// seconds: the driver runs into the second after its submission, as any real one does.
	app, err := w.app("dashboard")
	require.NoError(t, err)
	submitted, _, _ := unstructured.NestedString(app.Object, "status", "lastSubmissionAttemptTime")
	at, err := time.Parse(time.RFC3339, submitted)
	require.NoError(t, err, "status.lastSubmissionAttemptTime %q", submitted)
	time.Sleep(time.Until(at.Add(1100 * time.Millisecond)))
	require.NoError(t, w.kubelet.Succeed(context.Background(), pod.Name))
	w.check(t, w.waitState("dashboard", "COMPLETED"))

	families := scrapeHookServer(t)
	for _, q := range queries {
		t.Run(q.Query, func(t *testing.T) {
			n, err := evaluate(families, q, "app_type", appType)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, n, float64(1), "%s{app_type=%q}: the application counted", q.Query, appType)
			t.Logf("%s{app_type=%q} = %v", q.Query, appType, n)
		})
	}
}

// scrapeHookServer reads the chart's hook server's /metrics as Prometheus does.
func scrapeHookServer(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hooksURL+"/metrics", nil)
	require.NoError(t, err)
	resp, err := shared.hookClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// evaluate is q, a sum over one metric, restricted to the series whose label has value: the
// family must exist with the query's type and carry the label.
func evaluate(families map[string]*dto.MetricFamily, q dashboardQuery, label, value string) (float64, error) {
	typ, ok := dto.MetricType_value[q.Type]
	if !ok {
		return 0, fmt.Errorf("%s: unknown type %s", q.Query, q.Type)
	}
	name := strings.TrimSuffix(strings.TrimPrefix(q.Query, "sum("), ")")
	family := name
	if dto.MetricType(typ) != dto.MetricType_COUNTER {
		family = strings.TrimSuffix(name, "_count")
	}
	f, ok := families[family]
	if !ok {
		return 0, fmt.Errorf("%s: no family %s in the scrape", q.Query, family)
	}
	if f.GetType() != dto.MetricType(typ) {
		return 0, fmt.Errorf("%s: family %s is a %s, Kubeflow's is a %s", q.Query, family, f.GetType(), q.Type)
	}
	var sum float64
	for _, m := range f.GetMetric() {
		var labelled, match bool
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				labelled, match = true, l.GetValue() == value
			}
		}
		if !labelled {
			return 0, fmt.Errorf("%s: a series of %s without Kubeflow's label %s", q.Query, family, label)
		}
		if !match {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_SUMMARY:
			sum += float64(m.GetSummary().GetSampleCount())
		case dto.MetricType_HISTOGRAM:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, nil
}
