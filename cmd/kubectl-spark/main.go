// Command kubectl-spark is sparkhooks' command-line tool as a kubectl plugin: on PATH, kubectl
// runs it as `kubectl spark ...` (docs/sparkctl.md). It is a binary of its own so that the server
// (cmd/sparkhooks) links none of its CLI, port-forwarding and object-store code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sparkhooks/sparkhooks/cmd/kubectl-spark/internal/sparkctl"
	"github.com/sparkhooks/sparkhooks/cmd/kubectl-spark/internal/sparkctl/staging"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	env := sparkctl.DefaultEnv("kubectl spark")
	env.Stagers = staging.Stagers()
	code := sparkctl.Run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}
