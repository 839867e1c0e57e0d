package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Outcomes of a call that got no status code.
const (
	outcomeTimeout = "timeout"
	outcomeError   = "connection-error"
)

// counts is how many calls ended in each outcome: a status code, timeout or connection-error.
type counts map[string]int

func (c counts) String() string {
	keys := slices.Sorted(maps.Keys(c))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, c[k])
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// tally counts every call (attempts) and the last call of each request (final).
type tally struct {
	mu       sync.Mutex
	attempts counts
	final    counts
}

func newTally() *tally { return &tally{attempts: counts{}, final: counts{}} }

func (t *tally) add(other *tally) {
	for k, n := range other.attempts {
		t.attempts[k] += n
	}
	for k, n := range other.final {
		t.final[k] += n
	}
}

// burst posts the body o.concurrency times at once; each request is retried until it gets an
// answer other than 503 or runs out of retries.
func burst(ctx context.Context, base string, body []byte, o options) *tally {
	t := newTally()
	client := &http.Client{
		Timeout:   o.hookTimeout,
		Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency},
	}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Go(func() {
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
		})
	}
	wg.Wait()
	return t
}

// post makes one call and says how long to wait before the next: the answer's Retry-After, or
// a second.
func post(ctx context.Context, client *http.Client, url string, body []byte) (string, time.Duration) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return outcomeError, time.Second
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			return outcomeTimeout, time.Second
		}
		return outcomeError, time.Second
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return outcomeError, time.Second
	}
	wait := time.Second
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		wait = time.Duration(s) * time.Second
	}
	return strconv.Itoa(resp.StatusCode), wait
}
