package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
	"github.com/sparkhooks/sparkhooks/internal/tlsreload"
)

// policyReloadInterval is how often the policy file is re-read. A ConfigMap edit reaches the
// mounted file within kubelet's sync period (about a minute), so a few seconds more is noise.
const policyReloadInterval = 5 * time.Second

// wire builds what serves beside the decisions: metrics, the pod mutation and its policy, the
// webhook certificate.
func wire(ctx context.Context, opts serveOptions, logger *slog.Logger) (*dependencies, error) {
	m := metrics.New()
	if opts.kubeflowMetrics.enabled {
		if err := m.EnableKubeflow(opts.kubeflowMetrics.options); err != nil {
			return nil, fmt.Errorf("Kubeflow metrics: %w", err)
		}
	}
	deps := &dependencies{metrics: m}

	var policy mutate.PolicySource = mutate.StaticPolicy{}
	if opts.policyFile != "" {
		src, err := mutate.NewFileSource(opts.policyFile, logger)
		if err != nil {
			return nil, fmt.Errorf("load policy: %w", err)
		}
		ticker := time.NewTicker(policyReloadInterval)
		go func() {
			defer ticker.Stop()
			src.Run(ctx, ticker.C)
		}()
		policy = src
	}
	deps.mutate = hooks.NewMutateHandler(policy, logger, m)

	if opts.tlsCertFile != "" {
		reloader, err := tlsreload.New(opts.tlsCertFile, opts.tlsKeyFile, tlsreload.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("load webhook certificate: %w", err)
		}
		deps.tlsConfig = reloader.TLSConfig()
	}
	return deps, nil
}
