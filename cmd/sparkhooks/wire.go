package main

import (
	"context"
	"log/slog"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

// wire builds the decisions from the core packages.
func wire(_ context.Context, _ serveOptions, _ *slog.Logger) (*dependencies, error) {
	return &dependencies{
		metrics: metrics.New(),
		ready:   func() error { return nil },
	}, nil
}
