package sparkapp

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// FuzzSync feeds arbitrary request bodies to the sync hook, seeded with every golden request.
// It must never panic, never fault, and every answer must keep the invariant (checkInvariant).
func FuzzSync(f *testing.F) {
	w := newWorld(f, sparkPi)
	f.Add(coretest.MustJSON(f, w.request(false)))
	w.settle()
	w.driverRunning(true)
	w.settle()
	f.Add(coretest.MustJSON(f, w.request(false)))
	w.addExecutors(3, corev1.PodRunning)
	f.Add(coretest.MustJSON(f, w.request(false)))
	f.Add([]byte(`{"parent":{"kind":"SparkApplication","metadata":{"name":"a","uid":"u"},"status":{"applicationState":{"state":"RUNNING"},"submissionID":"s"}},"children":{"Pod.v1":{"a-driver":{"metadata":{"name":"a-driver","labels":{"spark-role":"driver","sparkoperator.k8s.io/submission-id":"x"}},"status":{"phase":"Running"}}}}}`))
	cfg := DefaultConfig()
	coretest.FuzzRequests(f, filepath.Join("..", "..", "testdata", "sync", "*", "request.json"), func(t *testing.T, body []byte, req *metacontroller.SyncRequest) {
		// Sync edits the request's child maps (null entries dropped): judge the answer against
		// the body as sent.
		resp, _, err := Sync(req, coretest.WorldStart, cfg)
		checkInvariant(t, body, resp, err)
	})
}
