package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

type serveOptions struct {
	addr             string
	tlsAddr          string
	tlsCertFile      string
	tlsKeyFile       string
	policyFile       string
	maxBodyBytes     int64
	maxInflightBytes int64
	inflightWait     time.Duration
	memoryLimitBytes int64
	logLevel         string
	shutdownTimeout  time.Duration
	decisions        decisionOptions
	events           eventsOptions
	kubeflowMetrics  kubeflowMetricsOptions
}

func parseServeOptions(args []string, stderr io.Writer) (serveOptions, error) {
	var o serveOptions
	f := newEnvFlags("serve")
	f.fs.SetOutput(stderr)
	f.string(&o.addr, "addr", "SPARKHOOKS_ADDR", ":8080", "plain HTTP listen address for hooks, probes and metrics")
	f.string(&o.tlsAddr, "tls-addr", "SPARKHOOKS_TLS_ADDR", ":8443", "HTTPS listen address for the admission webhook (only with a certificate)")
	f.string(&o.tlsCertFile, "tls-cert-file", "SPARKHOOKS_TLS_CERT_FILE", "", "PEM certificate for the webhook listener, reloaded when it changes")
	f.string(&o.tlsKeyFile, "tls-key-file", "SPARKHOOKS_TLS_KEY_FILE", "", "PEM private key for the webhook listener")
	f.string(&o.policyFile, "policy-file", "SPARKHOOKS_POLICY_FILE", "", "YAML cluster policy for Spark pods, reloaded when it changes (empty: no policy)")
	f.int64(&o.maxBodyBytes, "max-body-bytes", "SPARKHOOKS_MAX_BODY_BYTES", hooks.DefaultMaxBodyBytes, "largest accepted request body; larger requests get 413")
	f.int64(&o.maxInflightBytes, "max-inflight-bytes", "SPARKHOOKS_MAX_INFLIGHT_BYTES", 0, "request-body bytes all requests may hold at once; a request that cannot get its share within --inflight-wait gets 503 (0: an eighth of --memory-limit-bytes, or 64 MiB without it)")
	f.duration(&o.inflightWait, "inflight-wait", "SPARKHOOKS_INFLIGHT_WAIT", hooks.DefaultInflightWait, "how long a request may wait for its share of --max-inflight-bytes; keep it well below Metacontroller's hook timeout")
	f.int64(&o.memoryLimitBytes, "memory-limit-bytes", "SPARKHOOKS_MEMORY_LIMIT_BYTES", 0, "the container's memory limit (the chart sets it from the downward API): the Go memory limit becomes 90% of it unless GOMEMLIMIT is set (0: unknown)")
	f.string(&o.logLevel, "log-level", "SPARKHOOKS_LOG_LEVEL", "info", "debug, info, warn or error")
	f.duration(&o.shutdownTimeout, "shutdown-timeout", "SPARKHOOKS_SHUTDOWN_TIMEOUT", 20*time.Second, "how long in-flight requests may take to finish after SIGTERM")
	addDecisionFlags(f, &o.decisions)
	addEventsFlags(f, &o.events)
	addKubeflowMetricsFlags(f, &o.kubeflowMetrics)
	if err := f.parse(args); err != nil {
		return o, err
	}
	if err := o.decisions.validate(); err != nil {
		return o, err
	}
	if err := o.decisions.resolve(); err != nil {
		return o, err
	}
	if err := o.events.validate(); err != nil {
		return o, err
	}
	if err := o.kubeflowMetrics.resolve(); err != nil {
		return o, err
	}
	if (o.tlsCertFile == "") != (o.tlsKeyFile == "") {
		return o, errors.New("--tls-cert-file and --tls-key-file must be given together")
	}
	if o.maxBodyBytes <= 0 {
		return o, fmt.Errorf("--max-body-bytes must be > 0, got %d", o.maxBodyBytes)
	}
	if o.memoryLimitBytes < 0 {
		return o, fmt.Errorf("--memory-limit-bytes must be >= 0, got %d", o.memoryLimitBytes)
	}
	if o.maxInflightBytes < 0 {
		return o, fmt.Errorf("--max-inflight-bytes must be >= 0, got %d", o.maxInflightBytes)
	}
	if o.inflightWait < 0 {
		return o, fmt.Errorf("--inflight-wait must be >= 0, got %s", o.inflightWait)
	}
	if o.maxInflightBytes == 0 {
		o.maxInflightBytes = defaultInflightBytes(o.memoryLimitBytes)
	}
	return o, nil
}

// defaultInflightBytes is an eighth of the container's memory limit. Under hack/memload (16
// concurrent 30 MB syncs, a 512 MiB limit) the process peaks at 175 MiB, about the bodies in
// flight and what decoding leaves: observed objects alias the body, and only ended executors
// are decoded whole (264 MiB and fifty 503s when each object was copied). An eighth keeps well
// below the Go memory limit, so the collector need not run flat out and the bodies still in
// socket buffers, which the kernel charges to the container too, have room. A quarter once
// peaked at the Go memory limit and slowed the decisions past the hook timeout.
func defaultInflightBytes(memoryLimit int64) int64 {
	if memoryLimit <= 0 {
		return hooks.DefaultMaxInflightBytes
	}
	return max(1, memoryLimit/8)
}

// goMemoryLimit is the soft memory limit the Go runtime gets from the container's memory limit:
// 90% of it, leaving the rest for what the runtime does not count (the binary's pages, socket
// buffers) so that the collector works harder before the kernel kills the container. It is 0,
// leaving the runtime alone, when the limit is unknown or GOMEMLIMIT already set one.
func goMemoryLimit(memoryLimit int64, gomemlimitSet bool) int64 {
	if memoryLimit <= 0 || gomemlimitSet {
		return 0
	}
	return memoryLimit / 10 * 9
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	opts, err := parseServeOptions(args, stderr)
	if err != nil {
		return err
	}
	logger, err := newLogger(opts.logLevel, stderr)
	if err != nil {
		return err
	}
	// client-go, which records the Events, logs through klog: into the same JSON lines.
	klog.SetSlogLogger(logger)
	if limit := goMemoryLimit(opts.memoryLimitBytes, os.Getenv("GOMEMLIMIT") != ""); limit > 0 {
		debug.SetMemoryLimit(limit)
		logger.Info("go memory limit set", slog.Int64("bytes", limit), slog.Int64("container_limit_bytes", opts.memoryLimitBytes))
	}
	plain, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.addr, err)
	}
	var secure net.Listener
	if opts.tlsCertFile != "" {
		if secure, err = net.Listen("tcp", opts.tlsAddr); err != nil {
			_ = plain.Close()
			return fmt.Errorf("listen on %s: %w", opts.tlsAddr, err)
		}
	}
	return runServer(ctx, opts, logger, plain, secure)
}

// runServer serves until ctx is cancelled, then stops taking new connections, reports not ready,
// and lets in-flight requests finish within the shutdown timeout.
func runServer(ctx context.Context, opts serveOptions, logger *slog.Logger, plain, secure net.Listener) error {
	var draining atomic.Bool
	deps, err := wire(ctx, opts, logger)
	if err != nil {
		_ = plain.Close()
		if secure != nil {
			_ = secure.Close()
		}
		return err
	}
	events, stopEvents, err := startEvents(ctx, opts.events, deps.metrics, logger)
	if err != nil {
		_ = plain.Close()
		if secure != nil {
			_ = secure.Close()
		}
		return err
	}
	defer stopEvents()
	cfg := hooks.Config{
		Kinds:        opts.decisions.kinds(),
		Events:       events,
		Mutate:       deps.mutate,
		Metrics:      deps.metrics,
		Logger:       logger,
		Now:          time.Now,
		MaxBodyBytes: opts.maxBodyBytes,
		Inflight:     hooks.NewBudget(opts.maxInflightBytes, opts.inflightWait),
		Draining:     &draining,
	}

	servers := []*http.Server{newHTTPServer(hooks.NewRouter(cfg), logger)}
	listeners := []net.Listener{plain}
	if secure != nil {
		s := newHTTPServer(hooks.NewWebhookRouter(cfg), logger)
		s.TLSConfig = deps.tlsConfig
		servers = append(servers, s)
		listeners = append(listeners, tls.NewListener(secure, deps.tlsConfig))
	}

	errs := make(chan error, len(servers))
	for i, s := range servers {
		logger.Info("listening", slog.String("addr", listeners[i].Addr().String()), slog.Bool("tls", i == 1), slog.String("version", version),
			slog.Int64("max_inflight_bytes", opts.maxInflightBytes))
		go func(s *http.Server, l net.Listener) {
			if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}(s, listeners[i])
	}

	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("shutting down", slog.Duration("timeout", opts.shutdownTimeout))
	case serveErr = <-errs:
		logger.Error("server failed", slog.String("error", serveErr.Error()))
	}
	draining.Store(true)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), opts.shutdownTimeout)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(shutdownCtx); err != nil {
			serveErr = errors.Join(serveErr, fmt.Errorf("shutdown: %w", err))
		}
	}
	return serveErr
}

func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		// Metacontroller gives our hooks 3 s (metacontroller/*.yaml); a request still being read
		// or answered after 30 s is a stuck client, not a slow decision.
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 30 * time.Second,
		IdleTimeout:  120 * time.Second,
		ErrorLog:     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// dependencies are the helpers serve wires into the routers beside the decisions.
type dependencies struct {
	mutate    http.Handler
	metrics   *metrics.Metrics
	tlsConfig *tls.Config
}
