package hooks

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"golang.org/x/sync/semaphore"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

const (
	// DefaultMaxInflightBytes is the in-flight budget when none is configured: two bodies at
	// the default body limit, an eighth of the chart's default memory limit.
	DefaultMaxInflightBytes = 2 * DefaultMaxBodyBytes
	// DefaultInflightWait is how long a request may wait for its share of the budget. Our
	// Metacontroller registrations give a hook 3 s, and the request still has to be read and
	// decided after the wait.
	DefaultInflightWait = time.Second
)

// Budget caps the request-body bytes that all body-reading routes hold at once, across both
// listeners. Without it memory grows with the number of requests in flight, and a burst of
// large SparkApplications (thousands of executor Pods sent as related objects) makes every
// replica run out of memory at the same moment.
//
// A request reserves its Content-Length before its body is read and keeps the reservation until
// it is answered: the decoded request holds copies of the related objects for the whole
// decision. A body of unknown length reserves the body limit. A reservation is capped at the
// whole budget, so a request larger than the budget is still served, alone. A request that
// cannot get its share within the wait is answered 503 with Retry-After, and Metacontroller
// (or the API server, for the webhook) retries it.
type Budget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
}

// NewBudget returns a budget of size bytes (> 0) for which a request waits at most wait.
func NewBudget(size int64, wait time.Duration) *Budget {
	return &Budget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// reserve takes n bytes of the budget, or the whole budget when n exceeds it, and returns what
// it took. It waits at most the budget's wait, less if ctx ends first.
func (b *Budget) reserve(ctx context.Context, n int64) (int64, error) {
	n = min(n, b.size)
	if n <= 0 {
		return 0, nil
	}
	// TryAcquire spares the common case, a small request and room to spare, the timer.
	if b.sem.TryAcquire(n) {
		return n, nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(ctx, n); err != nil {
		return 0, fmt.Errorf("wait %s for %d bytes of the %d-byte in-flight budget: %w", b.wait, n, b.size, err)
	}
	return n, nil
}

func (b *Budget) release(n int64) {
	if n > 0 {
		b.sem.Release(n)
	}
}

// retryAfter is the Retry-After header value: the wait, in whole seconds, at least one.
func (b *Budget) retryAfter() string {
	return strconv.FormatInt(max(1, int64((b.wait+time.Second-1)/time.Second)), 10)
}

// admitBody guards a body-reading route. It answers 413 for a Content-Length over maxBytes
// without reading the body, reserves the body's size in the budget (503 with Retry-After when
// the budget stays full), limits what the handler can read to maxBytes (the handler answers
// 413 when a body of unknown length runs over), and gives the reservation back once the request
// is answered, whether the handler returned, failed or panicked.
func admitBody(maxBytes int64, budget *Budget, m *metrics.Metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > maxBytes {
				writeError(w, http.StatusRequestEntityTooLarge, tooLarge{limit: maxBytes}.Error())
				return
			}
			want := r.ContentLength
			if want < 0 {
				want = maxBytes
			}
			held, err := budget.reserve(r.Context(), want)
			if err != nil {
				m.InflightRejections.WithLabelValues(chi.RouteContext(r.Context()).RoutePattern()).Inc()
				w.Header().Set("Retry-After", budget.retryAfter())
				writeError(w, http.StatusServiceUnavailable, "too many request bytes in flight, retry later (see --max-inflight-bytes): "+err.Error())
				return
			}
			m.InflightBytes.Add(float64(held))
			defer func() {
				budget.release(held)
				m.InflightBytes.Sub(float64(held))
			}()
			r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
			next.ServeHTTP(w, r)
		})
	}
}
