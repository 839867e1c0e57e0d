package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
)

// bodyRoute is a route that reads a body, on the router that serves it.
type bodyRoute struct {
	name   string
	router func(Config) http.Handler
	path   string
}

var bodyRoutes = []bodyRoute{
	{"sync", NewRouter, SparkApplicationSyncPath},
	{"finalize", NewRouter, SparkApplicationFinalizePath},
	{"customize", NewRouter, SparkApplicationCustomizePath},
	{"scheduled sync", NewRouter, ScheduledSyncPath},
	{"mutate", NewRouter, MutatePath},
	{"webhook mutate", NewWebhookRouter, MutatePath},
}

// budgetConfig is testConfig with the real admission webhook handler, so that every body route
// reads its body, and the given budget.
func budgetConfig(m *metrics.Metrics, budget *Budget) Config {
	cfg := testConfig(m)
	cfg.Mutate = NewMutateHandler(mutate.StaticPolicy{}, nil, nil)
	cfg.Inflight = budget
	return cfg
}

// unreadable is a body that fails the test when read.
type unreadable struct{ t *testing.T }

func (u unreadable) Read([]byte) (int, error) {
	u.t.Error("the body was read")
	return 0, io.EOF
}

// chunked hides the length of its body, as a request with Transfer-Encoding: chunked does.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

// assertBudgetFree checks that nothing holds any of the budget: the gauge is back to zero and
// the whole budget can be taken.
func assertBudgetFree(t *testing.T, m *metrics.Metrics, b *Budget) {
	t.Helper()
	assert.Zero(t, testutil.ToFloat64(m.InflightBytes), "bytes still counted in flight")
	if assert.True(t, b.sem.TryAcquire(b.size), "budget not released") {
		b.sem.Release(b.size)
	}
}

func TestContentLengthOverTheLimitIsRefusedUnread(t *testing.T) {
	for _, route := range bodyRoutes {
		t.Run(route.name, func(t *testing.T) {
			m := metrics.New()
			budget := NewBudget(1<<20, time.Second)
			h := route.router(budgetConfig(m, budget))
			req := httptest.NewRequest(http.MethodPost, route.path, unreadable{t})
			req.ContentLength = 1025
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
			assert.JSONEq(t, `{"error":"request body exceeds the 1024-byte limit (see --max-body-bytes)"}`, rec.Body.String())
			assertBudgetFree(t, m, budget)
		})
	}
}

func TestFullBudgetAnswers503WithRetryAfter(t *testing.T) {
	for _, route := range bodyRoutes {
		t.Run(route.name, func(t *testing.T) {
			m := metrics.New()
			budget := NewBudget(100, 10*time.Millisecond)
			held, err := budget.reserve(context.Background(), 60)
			require.NoError(t, err)
			h := route.router(budgetConfig(m, budget))

			body := `{"parent":{"metadata":{"name":"pi"}},"pad":"` + strings.Repeat("x", 20) + `"}`
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, route.path, strings.NewReader(body)))

			assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
			assert.Equal(t, "1", rec.Header().Get("Retry-After"))
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
			assert.Contains(t, e.Error, "--max-inflight-bytes")
			assert.Contains(t, e.Error, "of the 100-byte in-flight budget")
			assert.Equal(t, 1.0, testutil.ToFloat64(m.InflightRejections.WithLabelValues(route.path)))
			assert.Zero(t, testutil.ToFloat64(m.InflightBytes), "a refused request counts nothing in flight")

			budget.release(held)
			assertBudgetFree(t, m, budget)
		})
	}
}

// blockingSync is a sync decision that reports the bytes in flight and then waits to be let go.
func blockingSync(m *metrics.Metrics, entered chan<- float64, proceed <-chan struct{}) hook.SyncFunc {
	return func(*metacontroller.SyncRequest, time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
		entered <- testutil.ToFloat64(m.InflightBytes)
		<-proceed
		return &metacontroller.SyncResponse{Status: map[string]any{}, Children: []any{}}, hook.Outcome{}, nil
	}
}

func TestBothListenersShareOneBudget(t *testing.T) {
	m := metrics.New()
	budget := NewBudget(100, 10*time.Millisecond)
	cfg := budgetConfig(m, budget)
	entered, proceed := make(chan float64), make(chan struct{})
	cfg.Kinds[0].Sync = blockingSync(m, entered, proceed)
	plain, webhook := NewRouter(cfg), NewWebhookRouter(cfg)

	syncBody := `{"parent":{"metadata":{"name":"pi"}},"pad":"` + strings.Repeat("x", 50) + `"}`
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		plain.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, SparkApplicationSyncPath, strings.NewReader(syncBody)))
		done <- rec.Code
	}()
	select {
	case inFlight := <-entered:
		assert.Equal(t, float64(len(syncBody)), inFlight, "the sync request reserves its Content-Length")
	case code := <-done:
		t.Fatalf("the sync request was answered %d before its decision", code)
	}

	rec := httptest.NewRecorder()
	webhook.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, MutatePath, strings.NewReader(strings.Repeat(" ", 50))))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	assert.Equal(t, 1.0, testutil.ToFloat64(m.InflightRejections.WithLabelValues(MutatePath)))

	close(proceed)
	assert.Equal(t, http.StatusOK, <-done)
	assertBudgetFree(t, m, budget)
}

func TestWaitingRequestIsAdmittedWhenTheBudgetFrees(t *testing.T) {
	m := metrics.New()
	budget := NewBudget(100, time.Minute)
	held, err := budget.reserve(context.Background(), 100)
	require.NoError(t, err)
	h := NewRouter(budgetConfig(m, budget))

	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, SparkApplicationSyncPath, strings.NewReader(`{"parent":{"metadata":{"name":"pi"}}}`)))
		done <- rec.Code
	}()
	budget.release(held)
	assert.Equal(t, http.StatusOK, <-done)
	assert.Zero(t, testutil.CollectAndCount(m.InflightRejections))
	assertBudgetFree(t, m, budget)
}

func TestBudgetIsReleasedAfterEveryAnswer(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		body     io.Reader
		claim    int64 // Content-Length to announce instead of the body's own
		wantCode int
	}{
		{name: "ok", path: SparkApplicationSyncPath, body: strings.NewReader(`{"parent":{"metadata":{"name":"pi"}}}`), wantCode: 200},
		{name: "not json", path: SparkApplicationSyncPath, body: strings.NewReader(`{"parent":`), wantCode: 400},
		{name: "no parent", path: SparkApplicationCustomizePath, body: strings.NewReader(`{}`), wantCode: 400},
		{name: "refused", path: ScheduledSyncPath, body: strings.NewReader(`{"parent":{"metadata":{"name":"stale"}}}`), wantCode: 409},
		{name: "core failure", path: SparkApplicationFinalizePath, body: strings.NewReader(`{"parent":{"metadata":{"name":"broken"}}}`), wantCode: 500},
		{name: "panic", path: SparkApplicationSyncPath, body: strings.NewReader(`{"parent":{"metadata":{"name":"panic"}}}`), wantCode: 500},
		{name: "shorter than announced", path: SparkApplicationSyncPath, body: strings.NewReader(`{"parent"`), claim: 40, wantCode: 500},
		{name: "chunked ok", path: SparkApplicationSyncPath, body: chunked{strings.NewReader(`{"parent":{"metadata":{"name":"pi"}}}`)}, wantCode: 200},
		{name: "chunked over the limit", path: SparkApplicationSyncPath, body: chunked{strings.NewReader(strings.Repeat(" ", 2000))}, wantCode: 413},
		{name: "mutate not a review", path: MutatePath, body: strings.NewReader(`{}`), wantCode: 400},
		{name: "mutate chunked over the limit", path: MutatePath, body: chunked{strings.NewReader(strings.Repeat(" ", 2000))}, wantCode: 413},
	}
	m := metrics.New()
	budget := NewBudget(4096, time.Millisecond)
	h := NewRouter(budgetConfig(m, budget))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tt.path, tt.body)
			if tt.claim != 0 {
				req.ContentLength = tt.claim
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
			assertBudgetFree(t, m, budget)
		})
	}
	assert.Zero(t, testutil.CollectAndCount(m.InflightRejections))
}

func TestReservations(t *testing.T) {
	const body = `{"parent":{"metadata":{"name":"pi"}}}`
	tests := []struct {
		name         string
		budget       int64
		chunked      bool
		wantInFlight int
	}{
		{name: "Content-Length", budget: 4096, wantInFlight: len(body)},
		{name: "chunked reserves the body limit", budget: 4096, chunked: true, wantInFlight: 1024},
		{name: "a body larger than the budget takes all of it", budget: 20, wantInFlight: 20},
		{name: "chunked, budget below the body limit", budget: 512, chunked: true, wantInFlight: 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New()
			budget := NewBudget(tt.budget, time.Millisecond)
			cfg := budgetConfig(m, budget)
			entered, proceed := make(chan float64, 1), make(chan struct{})
			close(proceed)
			cfg.Kinds[0].Sync = blockingSync(m, entered, proceed)
			var r io.Reader = strings.NewReader(body)
			if tt.chunked {
				r = chunked{r}
			}
			rec := httptest.NewRecorder()
			NewRouter(cfg).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, SparkApplicationSyncPath, r))

			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Equal(t, float64(tt.wantInFlight), <-entered)
			assertBudgetFree(t, m, budget)
		})
	}
}

func TestReadBody(t *testing.T) {
	tests := []struct {
		name          string
		body          io.Reader
		contentLength int64
		want          string
		wantErr       error
	}{
		{"exact length", strings.NewReader("hello"), 5, "hello", nil},
		{"empty", strings.NewReader(""), 0, "", nil},
		{"unknown length", chunked{strings.NewReader("hello, world")}, -1, "hello, world", nil},
		{"shorter than announced", strings.NewReader("hel"), 5, "", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/", tt.body)
			req.ContentLength = tt.contentLength
			got, err := readBody(req)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			if tt.contentLength >= 0 {
				assert.Equal(t, len(tt.want), cap(got), "the buffer is sized from Content-Length")
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		wait time.Duration
		want string
	}{
		{0, "1"},
		{10 * time.Millisecond, "1"},
		{time.Second, "1"},
		{1500 * time.Millisecond, "2"},
		{3 * time.Second, "3"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NewBudget(1, tt.wait).retryAfter(), "wait %s", tt.wait)
	}
}
