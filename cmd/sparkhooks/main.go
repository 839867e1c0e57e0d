// Command sparkhooks runs the sparkhooks hook server (serve), prints what the sync hook would
// create for a SparkApplication file (render), deletes the SparkApplications whose time to live
// is over (gc), or prints its version (version). The command-line tool is the kubectl plugin
// kubectl-spark, a binary of its own: the server links none of its cobra, port-forwarding and
// WebSocket code.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `usage: sparkhooks <command> [flags]

commands:
  serve     run the hook server (Metacontroller hooks, admission webhook, probes, metrics)
  render    print the objects and status the sync hook would return for a SparkApplication file
  gc        delete the SparkApplications whose time to live is over, once (--watch: as each expires)
  version   print the version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "sparkhooks:", err)
		}
		os.Exit(2)
	}
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "render":
		return render(args[1:], stdout, stderr)
	case "gc":
		return gc(ctx, args[1:], stderr)
	case "version":
		_, err := fmt.Fprintln(stdout, version)
		return err
	case "-h", "--help", "help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
		return errUsage
	}
}
