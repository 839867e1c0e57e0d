package hooks

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

type coreError struct{ bad bool }

func (e coreError) Error() string    { return "core says no" }
func (e coreError) BadRequest() bool { return e.bad }

var fixedNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func testConfig(m *metrics.Metrics) Config {
	echo := func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
		var parent struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(req.Parent, &parent); err != nil {
			return nil, hook.Outcome{}, err
		}
		switch parent.Metadata.Name {
		case "bad":
			return nil, hook.Outcome{}, coreError{bad: true}
		case "broken":
			return nil, hook.Outcome{}, coreError{}
		case "stale":
			return nil, hook.Outcome{}, metacontroller.Refusef("UnknownAttempt", "pod %s is not accounted for", "x-driver")
		case "panic":
			panic("boom")
		}
		return &metacontroller.SyncResponse{
				Status:   map[string]any{"now": now.Format(time.RFC3339), "finalizing": req.Finalizing},
				Children: []any{},
			}, hook.Outcome{Kind: "SparkApplication", From: "", To: "SUBMITTED", Submitted: true},
			nil
	}
	customize := func(*metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error) {
		return &metacontroller.CustomizeResponse{RelatedResources: []metacontroller.RelatedResourceRule{}}, nil
	}
	return Config{
		// The first kind is the SparkApplication's, which tests replace hooks of.
		Kinds: []hook.Kind{
			{Name: "sparkapplication", Sync: echo, Finalize: echo, Customize: customize},
			{Name: "scheduledsparkapplication", Sync: echo},
			{Name: "sparkconnect", Sync: echo, Finalize: echo, Customize: customize},
			{Name: "sparkcluster", Sync: echo, Finalize: echo, Customize: customize},
			{Name: "apachesparkapplication", Sync: echo, Finalize: echo, Customize: customize},
		},
		Mutate: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeText(w, http.StatusOK, "mutated")
		}),
		Metrics:      m,
		Now:          func() time.Time { return fixedNow },
		MaxBodyBytes: 1024,
	}
}

func TestRouterAnswers(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		path     string
		body     string
		wantCode int
		wantBody string
	}{
		{"sync ok", http.MethodPost, SparkApplicationSyncPath, `{"parent":{"metadata":{"name":"pi"}},"children":{}}`, 200, `"now":"2026-11-22T12:00:00Z"`},
		{"finalize passes finalizing", http.MethodPost, SparkApplicationFinalizePath, `{"parent":{"metadata":{"name":"pi"}},"finalizing":true}`, 200, `"finalizing":true`},
		{"scheduled ok", http.MethodPost, ScheduledSyncPath, `{"parent":{"metadata":{"name":"pi"}}}`, 200, `"children":[]`},
		{"customize ok", http.MethodPost, SparkApplicationCustomizePath, `{"parent":{"metadata":{"name":"pi"}}}`, 200, `"relatedResources":[]`},
		{"not json", http.MethodPost, SparkApplicationSyncPath, `{"parent":`, 400, `not valid JSON`},
		{"empty body", http.MethodPost, SparkApplicationSyncPath, ``, 400, `request body is empty`},
		{"no parent", http.MethodPost, SparkApplicationSyncPath, `{"children":{}}`, 400, `request has no parent object`},
		{"null parent customize", http.MethodPost, SparkApplicationCustomizePath, `{"parent":null}`, 400, `no parent`},
		{"core bad request", http.MethodPost, SparkApplicationSyncPath, `{"parent":{"metadata":{"name":"bad"}}}`, 400, `core says no`},
		{"core failure", http.MethodPost, SparkApplicationSyncPath, `{"parent":{"metadata":{"name":"broken"}}}`, 500, `core says no`},
		{"refusal", http.MethodPost, SparkApplicationSyncPath, `{"parent":{"metadata":{"name":"stale"}}}`, 409, `pod x-driver is not accounted for`},
		{"panic", http.MethodPost, SparkApplicationSyncPath, `{"parent":{"metadata":{"name":"panic"}}}`, 500, `internal error`},
		{"too large", http.MethodPost, SparkApplicationSyncPath, `{"parent":{"metadata":{"name":"` + strings.Repeat("x", 2000) + `"}}}`, 413, `1024-byte limit`},
		{"wrong method", http.MethodGet, SparkApplicationSyncPath, ``, 405, `method not allowed`},
		{"unknown path", http.MethodPost, "/nope", `{}`, 404, `no such route`},
		{"healthz", http.MethodGet, HealthzPath, ``, 200, `ok`},
		{"readyz", http.MethodGet, ReadyzPath, ``, 200, `ok`},
		{"mutate plain", http.MethodPost, MutatePath, `{}`, 200, `mutated`},
		{"metrics", http.MethodGet, MetricsPath, ``, 200, `go_goroutines`},
	}
	router := NewRouter(testConfig(metrics.New()))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			assert.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
			assert.Contains(t, rec.Body.String(), tt.wantBody)
		})
	}
}

func TestRouterRecordsMetrics(t *testing.T) {
	m := metrics.New()
	router := NewRouter(testConfig(m))
	for _, body := range []string{`{"parent":{"metadata":{"name":"pi"}}}`, `{"parent":{"metadata":{"name":"bad"}}}`, `{"parent":{"metadata":{"name":"stale"}}}`} {
		router.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, SparkApplicationSyncPath, strings.NewReader(body)))
	}
	assert.Equal(t, 1.0, testutil.ToFloat64(m.Submissions.WithLabelValues("SparkApplication")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.SyncTransitions.WithLabelValues("SparkApplication", "NEW", "SUBMITTED")))
	assert.Equal(t, 3, testutil.CollectAndCount(m.HookDuration), "one series per result: ok, bad_request, refused")
	assert.Equal(t, 3, testutil.CollectAndCount(m.HTTPRequestDuration), "one series per route and code")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.HookRefusals.WithLabelValues("sparkapplication_sync", "UnknownAttempt")))
	assert.Equal(t, 0, testutil.CollectAndCount(m.ValidationFailures))
}

func TestReadyzReportsNotReady(t *testing.T) {
	cfg := testConfig(metrics.New())
	var draining atomic.Bool
	cfg.Draining = &draining
	ready := func() int {
		rec := httptest.NewRecorder()
		NewRouter(cfg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ReadyzPath, nil))
		return rec.Code
	}
	assert.Equal(t, http.StatusOK, ready())
	draining.Store(true)
	assert.Equal(t, http.StatusServiceUnavailable, ready())
}

func registered(t *testing.T, h http.Handler) []string {
	t.Helper()
	var paths []string
	require.NoError(t, chi.Walk(h.(chi.Routes), func(_ string, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		paths = append(paths, route)
		return nil
	}))
	sort.Strings(paths)
	return paths
}

func TestRoutesListsWhatTheRoutersRegister(t *testing.T) {
	cfg := testConfig(metrics.New())
	want := Routes()
	sort.Strings(want)
	assert.Equal(t, want, registered(t, NewRouter(cfg)))

	want = WebhookRoutes()
	sort.Strings(want)
	assert.Equal(t, want, registered(t, NewWebhookRouter(cfg)))
}

// A caller that hung up while its body was read gets no decision: the work would be thrown away
// and its retry needs the memory.
func TestSyncSkipsTheDecisionForAGoneCaller(t *testing.T) {
	decided := 0
	cfg := testConfig(metrics.New())
	cfg.Kinds[0].Sync = func(*metacontroller.SyncRequest, time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
		decided++
		return &metacontroller.SyncResponse{Children: []any{}}, hook.Outcome{}, nil
	}
	router := NewRouter(cfg)
	body := `{"parent":{"metadata":{"name":"pi"}}}`

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodPost, SparkApplicationSyncPath, strings.NewReader(body)))
	assert.Zero(t, decided)

	router.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, SparkApplicationSyncPath, strings.NewReader(body)))
	assert.Equal(t, 1, decided)
}

type storyRecorder struct {
	hooks   []string
	derives []func() (event.Story, error)
}

func (s *storyRecorder) Record(hook string, derive func() (event.Story, error)) {
	s.hooks = append(s.hooks, hook)
	s.derives = append(s.derives, derive)
}

// TestSyncHandsTheAnsweredSyncToTheEventRecorder: an answered sync's story is handed over
// (derived later, from the request's parent and the very answer written), a refused one's is
// not, and neither is a finalize's.
func TestSyncHandsTheAnsweredSyncToTheEventRecorder(t *testing.T) {
	cfg := testConfig(metrics.New())
	events := &storyRecorder{}
	cfg.Events = events
	told := 0
	cfg.Kinds[0].Sync, cfg.Kinds[0].Finalize = telling(cfg.Kinds[0].Sync, &told), telling(cfg.Kinds[0].Finalize, &told)
	h := NewRouter(cfg)
	post := func(path, name string) int {
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"parent":{"metadata":{"name":"`+name+`"}}}`)))
		return rr.Code
	}
	require.Equal(t, http.StatusOK, post(SparkApplicationSyncPath, "ok"))
	require.Equal(t, http.StatusConflict, post(SparkApplicationSyncPath, "stale"))
	require.Equal(t, http.StatusOK, post(SparkApplicationFinalizePath, "ok"))
	require.Equal(t, []string{"sparkapplication_sync"}, events.hooks)
	assert.Zero(t, told, "derived later, not on the answer's path")

	story, err := events.derives[0]()
	require.NoError(t, err)
	assert.Len(t, story.Events, 1)
	assert.Equal(t, 1, told)
}

// telling gives the outcomes of decide a story, which counts in told when it is derived.
func telling(decide hook.SyncFunc, told *int) hook.SyncFunc {
	return func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
		resp, outcome, err := decide(req, now)
		outcome.Story = func() (event.Story, error) {
			*told++
			return event.Story{Events: []event.Event{event.New(event.Normal, "R", "A", "m")}}, nil
		}
		return resp, outcome, err
	}
}

// TestSyncWithoutAnEventRecorderTellsNothing: no recorder (--events=false), no derivation.
func TestSyncWithoutAnEventRecorderTellsNothing(t *testing.T) {
	cfg := testConfig(metrics.New())
	told := 0
	cfg.Kinds[0].Sync = telling(cfg.Kinds[0].Sync, &told)
	rr := httptest.NewRecorder()
	NewRouter(cfg).ServeHTTP(rr, httptest.NewRequest(http.MethodPost, SparkApplicationSyncPath, strings.NewReader(`{"parent":{"metadata":{"name":"ok"}}}`)))
	assert.Equal(t, http.StatusOK, rr.Code)
	assert.Zero(t, told)
}
