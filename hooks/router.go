package hooks

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/validate"
)

// DefaultMaxBodyBytes bounds request bodies. A sync request for an application with a thousand
// executors, managedFields included, is a few MiB; 32 MiB leaves room without letting one client
// exhaust memory.
const DefaultMaxBodyBytes = 32 << 20

// Config wires the decisions and the cross-cutting dependencies into the routers.
type Config struct {
	// Kinds are the hooks of every parent kind: a kind's hooks are served under /<name>/sync,
	// /<name>/finalize and /<name>/customize, a nil hook leaving its route unregistered (404).
	Kinds []hook.Kind
	// A nil Mutate handler leaves its route unregistered.
	Mutate http.Handler
	// Events, when set, records the story of every answered sync that tells one.
	Events EventRecorder

	Metrics      *metrics.Metrics
	Logger       *slog.Logger
	Now          func() time.Time
	MaxBodyBytes int64
	// Inflight caps the body bytes in flight on every router built with it; give both routers
	// the same one. Nil gives each router its own budget of DefaultMaxInflightBytes.
	Inflight *Budget
	// Draining, once true, takes the server out of traffic: readiness answers 503 while it
	// finishes what it serves. Nil never drains.
	Draining *atomic.Bool
}

func (c Config) withDefaults() Config {
	if c.Metrics == nil {
		c.Metrics = metrics.New()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Inflight == nil {
		c.Inflight = NewBudget(DefaultMaxInflightBytes, DefaultInflightWait)
	}
	return c
}

// NewRouter returns the plain HTTP handler: hooks, probes, metrics, and the admission webhooks
// for local use without certificates.
func NewRouter(cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	r := newBaseRouter(cfg)
	r.Method(http.MethodGet, MetricsPath, promhttp.HandlerFor(cfg.Metrics.Registry, promhttp.HandlerOpts{}))
	r.Group(func(r chi.Router) {
		r.Use(admitBody(cfg.MaxBodyBytes, cfg.Inflight, cfg.Metrics))
		for _, k := range cfg.Kinds {
			if k.Sync != nil {
				r.Post("/"+k.Name+"/sync", newSyncHandler(k.Name+"_sync", k.Sync, cfg.Events, cfg.Now, cfg.Metrics, cfg.Logger))
			}
			if k.Finalize != nil {
				// Finalize hooks tell no Events: the parent is on its way out.
				r.Post("/"+k.Name+"/finalize", newSyncHandler(k.Name+"_finalize", k.Finalize, nil, cfg.Now, cfg.Metrics, cfg.Logger))
			}
			if k.Customize != nil {
				r.Post("/"+k.Name+"/customize", newCustomizeHandler(k.Name+"_customize", k.Customize, cfg.Metrics, cfg.Logger))
			}
		}
		if cfg.Mutate != nil {
			r.Method(http.MethodPost, MutatePath, cfg.Mutate)
		}
		registerValidate(r, cfg)
	})
	return r
}

// NewWebhookRouter returns the handler for the TLS listener the API server calls: the admission
// webhooks and the probes.
func NewWebhookRouter(cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	r := newBaseRouter(cfg)
	r.Group(func(r chi.Router) {
		r.Use(admitBody(cfg.MaxBodyBytes, cfg.Inflight, cfg.Metrics))
		if cfg.Mutate != nil {
			r.Method(http.MethodPost, MutatePath, cfg.Mutate)
		}
		registerValidate(r, cfg)
	})
	return r
}

// registerValidate adds the validating webhook of every kind package validate knows. They need
// nothing but the clock, so they are always served; the registration decides whether the API
// server calls them.
func registerValidate(r chi.Router, cfg Config) {
	for _, kind := range validate.Kinds() {
		r.Method(http.MethodPost, ValidatePath(kind.Route()), newValidateHandler(kind, cfg.Now, cfg.Metrics, cfg.Logger))
	}
}

func newBaseRouter(cfg Config) chi.Router {
	r := chi.NewRouter()
	r.Use(instrument(cfg.Metrics, cfg.Logger), recoverPanics(cfg.Logger))
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "no such route")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	})
	r.Get(HealthzPath, func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	r.Get(ReadyzPath, func(w http.ResponseWriter, _ *http.Request) {
		if cfg.Draining != nil && cfg.Draining.Load() {
			writeText(w, http.StatusServiceUnavailable, "not ready: shutting down")
			return
		}
		writeText(w, http.StatusOK, "ok")
	})
	return r
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text + "\n"))
}
