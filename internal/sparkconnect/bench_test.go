package sparkconnect

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// BenchmarkSparkConnectSync runs the hook as the HTTP handler does (decode, decide, encode)
// for a new server and for a ready one with 100 executors.
func BenchmarkSparkConnectSync(b *testing.B) {
	for _, n := range []int{-1, 100} {
		w := newWorld(b, connectYAML)
		name := "new"
		if n >= 0 {
			w.settle()
			w.serverRunning(true)
			w.settle()
			phases := make([]string, n)
			for i := range phases {
				phases[i] = "Running"
			}
			w.addExecutors(phases...)
			name = fmt.Sprintf("ready-executors=%d", n)
		}
		body := coretest.MustJSON(b, w.request())
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var req metacontroller.SyncRequest
				if err := json.Unmarshal(body, &req); err != nil {
					b.Fatal(err)
				}
				resp, _, err := Sync(&req, w.now.Add(time.Second), Config{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
