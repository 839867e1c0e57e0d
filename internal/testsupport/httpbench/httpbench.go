// Package httpbench measures a hook over loopback HTTP in a benchmark: the same request posted
// b.N times, each answer checked, with latency percentiles and throughput reported next to
// ns/op. The hook benchmarks of hooks and cmd/sparkhooks share it.
package httpbench

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Post posts body to url in a loop until the benchmark ends. Every answer must be 200 and
// contain want. It reports p50-ns, p99-ns and req/s.
func Post(b *testing.B, client *http.Client, url string, body []byte, want string) {
	b.Helper()
	durations := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(data), want) {
			b.Fatalf("status %d, err %v, body %.300s", resp.StatusCode, err, data)
		}
		durations = append(durations, time.Since(start))
	}
	slices.Sort(durations)
	percentile := func(p float64) float64 {
		return float64(durations[int(float64(len(durations)-1)*p)].Nanoseconds())
	}
	b.ReportMetric(percentile(0.50), "p50-ns")
	b.ReportMetric(percentile(0.99), "p99-ns")
	b.ReportMetric(float64(len(durations))/b.Elapsed().Seconds(), "req/s")
}
