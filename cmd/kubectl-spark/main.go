// Command kubectl-spark is sparkhooks' command-line tool as a kubectl plugin: on PATH, kubectl
// runs it as `kubectl spark ...` (docs/sparkctl.md). `sparkhooks ctl ...` runs the same commands
// except staging to object stores, whose SDKs only this binary links.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sparkhooks/sparkhooks/internal/sparkctl"
	"github.com/sparkhooks/sparkhooks/internal/sparkctl/staging"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	env := sparkctl.DefaultEnv("kubectl spark")
	env.Stagers = staging.Stagers()
	code := sparkctl.Run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}
