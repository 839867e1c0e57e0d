package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// appRequests makes n sync requests of distinct applications from the base request: the
// application's name and UID are replaced everywhere they occur (its children's names and
// labels follow), so every request is for another SparkApplication with the same shape.
func appRequests(basePath string, n int) ([][]byte, error) {
	raw, err := os.ReadFile(basePath)
	if err != nil {
		return nil, fmt.Errorf("read base request: %w", err)
	}
	name, uid, err := parentIdentity(raw)
	if err != nil {
		return nil, fmt.Errorf("base request %s: %w", basePath, err)
	}
	bodies := make([][]byte, n)
	for i := range n {
		r := strings.NewReplacer(
			`"`+name+`"`, fmt.Sprintf(`"%s-%05d"`, name, i),
			`"`+name+`-`, fmt.Sprintf(`"%s-%05d-`, name, i),
			uid, fmt.Sprintf("%s%012d", uid[:len(uid)-12], i))
		bodies[i] = []byte(r.Replace(string(raw)))
	}
	return bodies, nil
}

// appRound posts every body once, at most concurrency at a time, each retried as burst does.
func appRound(ctx context.Context, base string, bodies [][]byte, o options) *tally {
	t := newTally()
	client := &http.Client{Timeout: o.hookTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency}}
	defer client.CloseIdleConnections()
	next := make(chan []byte)
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Go(func() {
			for body := range next {
				var outcome string
				for try := 0; try <= o.retries && ctx.Err() == nil; try++ {
					var wait time.Duration
					outcome, wait = post(ctx, client, base+"/sparkapplication/sync", body)
					t.mu.Lock()
					t.attempts[outcome]++
					t.mu.Unlock()
					if outcome != "503" && outcome != outcomeTimeout && outcome != outcomeError {
						break
					}
					select {
					case <-ctx.Done():
					case <-time.After(wait):
					}
				}
				t.mu.Lock()
				t.final[outcome]++
				t.mu.Unlock()
			}
		})
	}
	for _, b := range bodies {
		select {
		case next <- b:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return t
}

// runApps is the -apps mode: rounds in which every one of the applications is synced once, as
// Metacontroller does when it resyncs them all, with -concurrency calls in flight. It reports
// the resident set (current and peak) and the Go heap in use after each round and at rest.
func runApps(ctx context.Context, o options, srv *server, out io.Writer) (*tally, error) {
	bodies, err := appRequests(o.request, o.apps)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%d applications, %.1f KB per sync request, %d calls in flight\n", len(bodies), float64(len(bodies[0]))/1e3, o.concurrency)
	report := func(label string) error {
		peak, rss, err := srv.memory()
		if err != nil {
			return err
		}
		heap := srv.metric("go_memstats_heap_inuse_bytes")
		fmt.Fprintf(out, "%-10s VmRSS %4d MiB  VmHWM %4d MiB  heap in use %5.1f MiB\n", label, rss>>20, peak>>20, heap/(1<<20))
		return nil
	}
	if err := report("at rest:"); err != nil {
		return nil, err
	}
	total := newTally()
	for round := 1; round <= o.rounds && ctx.Err() == nil; round++ {
		start := time.Now()
		t := appRound(ctx, srv.base, bodies, o)
		total.add(t)
		fmt.Fprintf(out, "round %d: %5.1fs  %6.0f syncs/s  final %s\n", round, time.Since(start).Seconds(),
			float64(len(bodies))/time.Since(start).Seconds(), t.final)
		if err := report("  after:"); err != nil {
			return nil, err
		}
	}
	return total, nil
}

// metric reads one unlabelled series of the server's /metrics; 0 when it is not there.
func (s *server) metric(name string) float64 {
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			v, err := strconv.ParseFloat(string(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return 0
}

// parentIdentity is the name and UID of the request's parent.
func parentIdentity(raw []byte) (name, uid string, err error) {
	var req struct {
		Parent struct {
			Metadata struct {
				Name string `json:"name"`
				UID  string `json:"uid"`
			} `json:"metadata"`
		} `json:"parent"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return "", "", err
	}
	md := req.Parent.Metadata
	if md.Name == "" || len(md.UID) < 12 {
		return "", "", fmt.Errorf("the parent needs a name and a UID")
	}
	return md.Name, md.UID, nil
}
