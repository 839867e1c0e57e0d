package apacheapp

import "testing"

// BenchmarkSync is the sync of a running application with three ready executors, the call
// Metacontroller makes on every executor Pod change: the core's decision and its telling in
// Apache's states.
func BenchmarkSync(b *testing.B) {
	w := newWorld(b, piYAML)
	running(w)
	w.executors(3, 3)
	w.settle()
	req := w.request(false)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Sync(req, w.now, w.cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncWithExtras is BenchmarkSync for an application that asks for extra children (a
// ConfigMap and a Service with each kind of front): the extras built and checked against the
// attempt's own children's names on every sync.
func BenchmarkSyncWithExtras(b *testing.B) {
	w := newWorld(b, piYAML)
	exposed(w)
	running(w)
	w.executors(3, 3)
	w.settle()
	req := w.request(false)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Sync(req, w.now, w.cfg); err != nil {
			b.Fatal(err)
		}
	}
}
