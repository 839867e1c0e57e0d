package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/httpbench"
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
		Kinds: []hook.Kind{sparkapp.Hooks(sparkapp.DefaultConfig())},
		Now:   func() time.Time { return fixed },
	}))
	defer srv.Close()
	client := srv.Client()
	url := srv.URL + hooks.SparkApplicationSyncPath

	httpbench.Post(b, client, url, body, `"SUBMITTED"`)
}
