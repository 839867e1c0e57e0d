package sparkcluster

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The worker's readiness command, run by bash against a stand-in for the worker's /json/ as
// Spark renders it (pretty JSON, "masterurl" empty until the worker has registered): ready only
// once a master is named, not ready while the UI is down.
func TestWorkerReadinessNeedsRegistration(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := workerRegistered.Exec.Command
	require.Equal(t, "bash", cmd[0])
	run := func(t *testing.T, port string) error {
		t.Helper()
		script := strings.Replace(cmd[2], fmt.Sprintf("/%d ", workerWebPort), "/"+port+" ", 1)
		require.NotEqual(t, cmd[2], script, "the port is in the command")
		c := exec.Command(bash, "-c", script)
		c.Env = []string{"HOSTNAME=127.0.0.1"}
		return c.Run()
	}
	for _, tt := range []struct {
		name, body string
		ready      bool
	}{
		{"not registered", `{
  "id" : "worker-20261124153000-10.0.0.7-38423",
  "masterurl" : "",
  "masterwebuiurl" : "",
  "cores" : 2
}`, false},
		{"registered", `{
  "id" : "worker-20261124153000-10.0.0.7-38423",
  "masterurl" : "spark://prod-master-0.prod-master-svc.spark.svc.cluster.local:7077",
  "masterwebuiurl" : "http://prod-master-0:8080",
  "cores" : 2
}`, true},
		{"registered, compact", `{"id":"w","masterurl":"spark://m:7077","cores":2}`, true},
		{"a master URL elsewhere only", `{"masterurl":"","executors":[{"appdesc":{"command":"spark://m:7077"}}]}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/json/" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			err := run(t, port)
			if tt.ready {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	t.Run("UI down", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		_, port, _ := net.SplitHostPort(l.Addr().String())
		l.Close()
		assert.Error(t, run(t, port))
	})
}
