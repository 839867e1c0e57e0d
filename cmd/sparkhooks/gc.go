package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkhooks/sparkhooks/internal/ttlgc"
)

type gcOptions struct {
	kubeconfig     string
	namespaces     []string
	dryRun         bool
	logLevel       string
	requestTimeout time.Duration
	qps            int
	// watch keeps running, deleting each application as it expires, instead of one pass.
	watch bool
}

func parseGCOptions(args []string, stderr io.Writer) (gcOptions, error) {
	var o gcOptions
	var namespaces string
	f := newEnvFlags("gc")
	f.fs.SetOutput(stderr)
	f.string(&o.kubeconfig, "kubeconfig", "SPARKHOOKS_KUBECONFIG", "", "kubeconfig file (empty: the in-cluster configuration)")
	f.string(&namespaces, "namespaces", "SPARKHOOKS_GC_NAMESPACES", "", "comma-separated namespaces whose expired SparkApplications are deleted (empty: every namespace)")
	f.boolean(&o.dryRun, "dry-run", "SPARKHOOKS_GC_DRY_RUN", false, "send the deletions as server-side dry runs: log and count them, delete nothing")
	f.string(&o.logLevel, "log-level", "SPARKHOOKS_LOG_LEVEL", "info", "debug, info, warn or error")
	f.duration(&o.requestTimeout, "request-timeout", "SPARKHOOKS_GC_REQUEST_TIMEOUT", 30*time.Second, "timeout of each API request")
	f.integer(&o.qps, "qps", "SPARKHOOKS_GC_QPS", 20, "API requests per second (bursts of twice as many)")
	f.boolean(&o.watch, "watch", "SPARKHOOKS_GC_WATCH", false, "keep running: watch the SparkApplications and delete each as soon as it expires (a Deployment), instead of one pass (a CronJob)")
	if err := f.parse(args); err != nil {
		return o, err
	}
	if f.fs.NArg() > 0 {
		return o, fmt.Errorf("gc takes no arguments, got %q", f.fs.Args())
	}
	for _, ns := range strings.Split(namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			o.namespaces = append(o.namespaces, ns)
		}
	}
	if o.requestTimeout <= 0 {
		return o, fmt.Errorf("--request-timeout must be > 0, got %s", o.requestTimeout)
	}
	if o.qps <= 0 {
		return o, fmt.Errorf("--qps must be > 0, got %d", o.qps)
	}
	return o, nil
}

// gc deletes the SparkApplications whose status says their time to live is over, once, and
// exits (the chart's CronJob), or with --watch as each expires, until it is stopped (the chart's
// Deployment). Metacontroller cannot delete a parent, so this is the step that removes them; the
// sync hook alone decides when an application expired.
func gc(ctx context.Context, args []string, stderr io.Writer) error {
	opts, err := parseGCOptions(args, stderr)
	if err != nil {
		return err
	}
	logger, err := newLogger(opts.logLevel, stderr)
	if err != nil {
		return err
	}
	cfg, err := restConfig(opts.kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = opts.requestTimeout
	if opts.watch {
		// A watch's request lasts; each deletion gets the timeout from its context instead.
		cfg.Timeout = 0
	}
	cfg.QPS, cfg.Burst = float32(opts.qps), 2*opts.qps
	cfg.UserAgent = "sparkhooks-gc/" + version
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	scope := ttlgc.Options{Namespaces: opts.namespaces, DryRun: opts.dryRun}
	if opts.watch {
		watch := ttlgc.WatchOptions{Options: scope, Resync: watchResync, Discover: time.Minute, RequestTimeout: opts.requestTimeout}
		if err := ttlgc.Watch(ctx, client, watch, logger); err != nil {
			return fmt.Errorf("gc: %w", err)
		}
		return nil
	}
	res, err := ttlgc.Run(ctx, client, scope, logger)
	logger.Info("gc pass done", slog.Int("listed", res.Listed), slog.Int("expired", res.Expired),
		slog.Int("deleted", res.Deleted), slog.Int("skipped", res.Skipped), slog.Bool("dry_run", opts.dryRun))
	if err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	return nil
}

// watchResync is how often gc --watch checks every application it holds again: a deletion the
// API server failed is retried then.
const watchResync = 10 * time.Minute

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, errors.New("not running in a cluster: give --kubeconfig")
	}
	if err != nil {
		return nil, fmt.Errorf("in-cluster configuration: %w", err)
	}
	return cfg, nil
}
