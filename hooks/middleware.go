package hooks

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

// instrument records the request duration per route pattern (never the raw path, whose
// cardinality a client controls) and logs failed requests.
func instrument(m *metrics.Metrics, logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			route := chi.RouteContext(r.Context()).RoutePattern()
			if route == "" {
				route = "unmatched"
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			elapsed := time.Since(start)
			m.HTTPRequestDuration.WithLabelValues(route, strconv.Itoa(status)).Observe(elapsed.Seconds())
			if status >= http.StatusBadRequest {
				logger.LogAttrs(r.Context(), slog.LevelWarn, "request failed",
					slog.String("method", r.Method), slog.String("route", route),
					slog.Int("status", status), slog.Duration("duration", elapsed))
			}
		})
	}
}

// recoverPanics turns a panic into a 500 so that Metacontroller keeps the children and status it
// has and retries, instead of the connection dropping mid-answer.
func recoverPanics(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					logger.LogAttrs(r.Context(), slog.LevelError, "panic in handler",
						slog.String("path", r.URL.Path), slog.Any("panic", v))
					writeError(w, http.StatusInternalServerError, "internal error")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}
