package sparkcluster

import (
	"testing"
)

// BenchmarkSync is the sync of a healthy cluster, the call Metacontroller makes on every
// StatefulSet status change and resync: fixed (three workers) and autoscaled.
func BenchmarkSync(b *testing.B) {
	for _, c := range []struct{ name, doc string }{{"fixed", clusterYAML}, {"autoscaled", autoscaledYAML}} {
		b.Run(c.name, func(b *testing.B) {
			w := newWorld(b, c.doc)
			w.settle()
			w.ready(roleMaster, 1)
			w.ready(roleWorker, 3)
			w.settle()
			req := w.request(false)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Sync(req, w.now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
