// Command memload shows what a burst of large sync requests does to the memory of a sparkhooks
// server: it builds the binary, starts `sparkhooks serve` on a free loopback port as the chart's
// Deployment runs it (the container's memory limit from chart/values.yaml passed in as the
// downward API does), posts rounds of concurrent SparkApplication sync requests of about 30 MB
// each (a running application with thousands of executor Pods as related objects), and reports
// the peak resident memory (VmHWM) and every status code seen.
//
// Each request is retried like Metacontroller retries a failed hook call: after a 503 (waiting
// its Retry-After), a timeout or a connection error, up to -retries times.
//
//	go run ./hack/memload                  # or: make memload
//	go run ./hack/memload -src /tmp/before # the same load against another checkout
//	go run ./hack/memload -- --max-inflight-bytes=67108864  # more serve flags after --
//	go run ./hack/memload -apps 1000 -concurrency 20 -request testdata/sync/running-with-executors/request.json
//
// With -apps N it measures what many ordinary applications cost instead: each round syncs N
// distinct applications (the request with its name and UID replaced) once, -concurrency at a
// time, and it reports the resident set and the Go heap in use at rest and after each round.
// With -cache N it starts no server: it reports what N executor Pods cost a cache that keeps
// them as Metacontroller's informers do (go run ./hack/memload -cache 10000).
//
// It exits non-zero when the peak exceeds the memory limit, the server died, or a request got
// an answer other than 200 or 503. It is a measuring tool, not a test: the figures depend on the
// machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type options struct {
	src         string
	bin         string
	request     string
	values      string
	sizeMB      int
	apps        int
	cache       int
	concurrency int
	rounds      int
	retries     int
	hookTimeout time.Duration
	deadline    time.Duration
	serveArgs   []string // more `sparkhooks serve` flags, after --
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "memload:", err)
		os.Exit(1)
	}
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("memload", flag.ContinueOnError)
	fs.StringVar(&o.src, "src", ".", "module directory to build cmd/sparkhooks from")
	fs.StringVar(&o.bin, "bin", "", "run this sparkhooks binary instead of building one")
	fs.StringVar(&o.request, "request", "testdata/sync/running-with-executors/request.json", "sync request whose related executors are replaced")
	fs.StringVar(&o.values, "values", "chart/values.yaml", "chart values to read the container's memory limit from")
	fs.IntVar(&o.sizeMB, "size-mb", 30, "size of each request body in MB")
	fs.IntVar(&o.cache, "cache", 0, "instead of a load: decode this many executor Pods as Metacontroller's cache keeps them and report the heap per Pod")
	fs.IntVar(&o.apps, "apps", 0, "instead of large requests: sync this many distinct applications per round, each with -request as it is")
	fs.IntVar(&o.concurrency, "concurrency", 16, "requests posted at once in each round")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds")
	fs.IntVar(&o.retries, "retries", 10, "retries of a request that got a 503, timed out or lost its connection")
	fs.DurationVar(&o.hookTimeout, "hook-timeout", 3*time.Second, "client timeout per call, Metacontroller's hook timeout in the chart")
	fs.DurationVar(&o.deadline, "deadline", 10*time.Minute, "stop everything after this long")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.serveArgs = fs.Args()
	if o.sizeMB <= 0 || o.concurrency <= 0 || o.rounds <= 0 || o.retries < 0 || o.apps < 0 {
		return o, errors.New("-size-mb, -concurrency and -rounds must be > 0, -retries and -apps >= 0")
	}
	return o, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	if o.cache > 0 {
		return runCache(o.cache, out)
	}
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()

	limit, err := chartMemoryLimit(o.values)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "memload-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(work)

	bin := o.bin
	if bin == "" {
		fmt.Fprintf(out, "building sparkhooks from %s\n", o.src)
		if bin, err = build(ctx, o.src, work); err != nil {
			return err
		}
	}
	var body []byte
	if o.apps == 0 {
		var pods int
		if body, pods, err = syncRequest(o.request, o.sizeMB*1_000_000); err != nil {
			return err
		}
		fmt.Fprintf(out, "request: %.1f MB, %d executor pods; container memory limit %d MiB\n", float64(len(body))/1e6, pods, limit>>20)
	}

	srv, err := startServer(ctx, bin, limit, work, o.serveArgs)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Fprintf(out, "server pid %d on %s, log %s\n", srv.pid(), srv.base, srv.logPath)

	total := newTally()
	if o.apps > 0 {
		if total, err = runApps(ctx, o, srv, out); err != nil {
			return err
		}
	}
	for round := 1; round <= o.rounds && ctx.Err() == nil && o.apps == 0; round++ {
		start := time.Now()
		t := burst(ctx, srv.base, body, o)
		total.add(t)
		peak, rss, err := srv.memory()
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		fmt.Fprintf(out, "round %d: %5.1fs  attempts %s  final %s  VmRSS %d MiB  VmHWM %d MiB\n",
			round, time.Since(start).Seconds(), t.attempts, t.final, rss>>20, peak>>20)
	}
	peak, _, memErr := srv.memory()
	inflight := srv.inflightMetrics()
	exited := srv.exited()

	fmt.Fprintf(out, "\nall rounds: attempts %s  final %s\n", total.attempts, total.final)
	for _, line := range inflight {
		fmt.Fprintln(out, line)
	}
	var problems []error
	if exited != nil {
		problems = append(problems, fmt.Errorf("the server exited: %w (log %s)", exited, srv.logPath))
	}
	if memErr == nil {
		fmt.Fprintf(out, "peak RSS (VmHWM): %d MiB of a %d MiB limit\n", peak>>20, limit>>20)
		if peak >= limit {
			problems = append(problems, fmt.Errorf("peak RSS %d MiB reached the %d MiB limit: the container would have been OOM-killed", peak>>20, limit>>20))
		}
	}
	// A timed-out call is retried like a 503; only a request that never got an answer, an answer
	// other than 200 or 503, or a lost connection (the server died) counts against the server.
	for outcome, n := range total.attempts {
		if outcome != "200" && outcome != "503" && outcome != outcomeTimeout {
			problems = append(problems, fmt.Errorf("%d calls ended in %s", n, outcome))
		}
	}
	if n := total.final[outcomeTimeout]; n > 0 {
		problems = append(problems, fmt.Errorf("%d requests timed out on every try", n))
	}
	return errors.Join(problems...)
}
