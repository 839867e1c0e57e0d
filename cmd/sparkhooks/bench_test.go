package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
)

// BenchmarkSparkApplicationSyncHTTP posts the sync request of a new SparkApplication to the
// wired router over loopback HTTP with keep-alive, as Metacontroller does, and reports the
// 50th and 99th percentile round trip. Run with -cpu 1 for the one-core figure of design §8.
func BenchmarkSparkApplicationSyncHTTP(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sync", "new-spark-pi", "request.json"))
	if err != nil {
		b.Fatal(err)
	}
	fixed := time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(hooks.NewRouter(hooks.Config{
		SparkApplicationSync: sparkSync(sparkapp.DefaultConfig()),
		Now:                  func() time.Time { return fixed },
	}))
	defer srv.Close()
	client := srv.Client()
	url := srv.URL + hooks.SparkApplicationSyncPath

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
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"SUBMITTED"`) {
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
