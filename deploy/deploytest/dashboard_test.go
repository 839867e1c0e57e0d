package deploytest

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

const (
	dashboardFile     = "chart/dashboards/sparkhooks.json"
	observabilityDocs = "docs/observability.md"
)

// sparkhooksMetricNames lists the names of the collectors in metrics.Metrics. A vector with no
// children yet is absent from Gather, so the names come from each collector's description.
func sparkhooksMetricNames(t *testing.T) []string {
	t.Helper()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	m := metrics.New()
	collectorType := reflect.TypeFor[prometheus.Collector]()
	v := reflect.ValueOf(m).Elem()
	var names []string
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.Type().Implements(collectorType) || f.IsNil() {
			continue
		}
		descs := make(chan *prometheus.Desc, 16)
		go func() {
			f.Interface().(prometheus.Collector).Describe(descs)
			close(descs)
		}()
		for d := range descs {
			match := fqName.FindStringSubmatch(d.String())
			require.NotNil(t, match, "cannot read the name of %s", d)
			// The registry is a collector too and describes the Go and process collectors.
			if strings.HasPrefix(match[1], "sparkhooks_") {
				names = append(names, match[1])
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	require.NotEmpty(t, names)
	return names
}

// kubeflowMetricNames lists the Kubeflow operator's metrics (--kubeflow-metrics) with their
// default names, and the two gauges the chart's recording rules add.
func kubeflowMetricNames(t *testing.T) []string {
	t.Helper()
	reg := prometheus.NewRegistry()
	_, err := metrics.NewKubeflow(reg, metrics.DefaultKubeflowOptions())
	require.NoError(t, err)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	descs := make(chan *prometheus.Desc, 32)
	go func() {
		reg.Describe(descs)
		close(descs)
	}()
	names := []string{"spark_application_running_count", "spark_executor_running_count"}
	for d := range descs {
		match := fqName.FindStringSubmatch(d.String())
		require.NotNil(t, match, "cannot read the name of %s", d)
		names = append(names, match[1])
	}
	slices.Sort(names)
	return names
}

// runtimeMetricNames lists what the Go and process collectors export on this platform.
func runtimeMetricNames(t *testing.T) []string {
	t.Helper()
	families, err := metrics.New().Registry.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "go_") || strings.HasPrefix(f.GetName(), "process_") {
			names = append(names, f.GetName())
		}
	}
	return names
}

type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func loadDashboard(t *testing.T) (*dashboard, []byte) {
	t.Helper()
	raw := readFile(t, filepath.Join(repoRoot(t), dashboardFile))
	d := &dashboard{}
	require.NoError(t, json.Unmarshal(raw, d), dashboardFile)
	return d, raw
}

// metricTokens finds the metric names a PromQL expression uses among the families this
// repository documents.
var metricToken = regexp.MustCompile(`\b(?:sparkhooks|kube_sparkapplication|kube_scheduledsparkapplication|spark_application|spark_executor|go|process)_[a-zA-Z0-9_]+`)

func TestDashboardUsesOnlyExportedMetrics(t *testing.T) {
	d, _ := loadDashboard(t)
	assert.Equal(t, "sparkhooks", d.UID)

	known := map[string]bool{}
	hooksNames := sparkhooksMetricNames(t)
	for _, n := range hooksNames {
		// A histogram is queried through its series; allowing the suffixes on every name is
		// looser than needed but the base name must still exist.
		for _, suffix := range []string{"", "_bucket", "_count", "_sum"} {
			known[n+suffix] = true
		}
	}
	for _, n := range runtimeMetricNames(t) {
		known[n] = true
	}
	kubeflowNames := kubeflowMetricNames(t)
	for _, n := range kubeflowNames {
		for _, suffix := range []string{"", "_bucket", "_count", "_sum"} {
			known[n+suffix] = true
		}
	}
	ksmNames := ksmMetricNames(loadKSMConfig(t))
	for _, n := range ksmNames {
		known[n] = true
	}

	var exprs []string
	ids := map[int]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			assert.False(t, ids[p.ID], "panel id %d used twice", p.ID)
			ids[p.ID] = true
			assert.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, "panel %q is wider than the grid", p.Title)
			if p.Type != "row" {
				assert.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			}
			for _, target := range p.Targets {
				exprs = append(exprs, target.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}

	used := map[string]bool{}
	for _, e := range exprs {
		for _, name := range metricToken.FindAllString(e, -1) {
			assert.True(t, known[name], "%s is not exported by sparkhooks or the kube-state-metrics config (in %q)", name, e)
			// Kubeflow's counters end in _count themselves, so the name is used as written too.
			used[name] = true
			used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")] = true
		}
	}
	// Every sparkhooks metric has a panel; of the kube-state-metrics ones, those the dashboard's
	// questions need.
	for _, n := range hooksNames {
		assert.True(t, used[n], "no panel shows %s", n)
	}
	for _, n := range []string{"spark_application_submit_count", "spark_application_success_count", "spark_application_failure_count",
		"spark_application_running_count", "spark_executor_running_count", "spark_application_start_latency_seconds_histogram"} {
		assert.Contains(t, kubeflowNames, n)
		assert.True(t, used[n], "no panel of the Kubeflow row shows %s", n)
	}
	for _, n := range []string{
		"kube_sparkapplication_state", "kube_sparkapplication_submission_attempts",
		"kube_sparkapplication_last_submission_attempt_time", "kube_sparkapplication_termination_time",
		"kube_scheduledsparkapplication_next_run_time", "kube_scheduledsparkapplication_last_run_time",
	} {
		assert.Contains(t, ksmNames, n)
		assert.True(t, used[n], "no panel shows %s", n)
	}
}

func TestObservabilityDocsListEveryMetric(t *testing.T) {
	doc := string(readFile(t, filepath.Join(repoRoot(t), observabilityDocs)))
	names := slices.Concat(sparkhooksMetricNames(t), ksmMetricNames(loadKSMConfig(t)), kubeflowMetricNames(t))
	for _, n := range names {
		assert.Contains(t, doc, "`"+n+"`", "%s does not document %s", observabilityDocs, n)
	}
}
