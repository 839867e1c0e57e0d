package sparkcluster

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
)

// runProbe runs a probe's bash command with replacements applied to its script, which must
// each change it.
func runProbe(t *testing.T, cmd []string, replace ...string) error {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	require.Equal(t, "bash", cmd[0])
	script := cmd[2]
	for i := 0; i < len(replace); i += 2 {
		changed := strings.Replace(script, replace[i], replace[i+1], 1)
		require.NotEqual(t, script, changed, "%q is in the command", replace[i])
		script = changed
	}
	c := exec.Command(bash, "-c", script)
	c.Env = []string{"HOSTNAME=127.0.0.1"}
	return c.Run()
}

// The daemons' liveness (and the master's readiness): the UI answers with any status, a filter's
// 403 included, and does not when it is down or is not HTTP.
func TestUIAnswersWithAnyStatus(t *testing.T) {
	cmd := uiAnswers(workerWebPort).Exec.Command
	probe := func(t *testing.T, port string) error {
		return runProbe(t, cmd, fmt.Sprintf("/%d ", workerWebPort), "/"+port+" ")
	}
	for _, status := range []int{http.StatusOK, http.StatusForbidden, http.StatusUnauthorized} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
			defer srv.Close()
			_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			assert.NoError(t, probe(t, port))
		})
	}
	t.Run("UI down", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		_, port, _ := net.SplitHostPort(l.Addr().String())
		l.Close()
		assert.Error(t, probe(t, port))
	})
	t.Run("not HTTP", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				fmt.Fprint(c, "SSH-2.0-OpenSSH\r\n")
				c.Close()
			}
		}()
		_, port, _ := net.SplitHostPort(l.Addr().String())
		assert.Error(t, probe(t, port))
	})
}

// A worker's readiness, run by bash over stand-ins for the kernel's connection tables: ready
// only with an established connection to a master's RPC port.
func TestWorkerReadinessNeedsTheMaster(t *testing.T) {
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	listening := "   0: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000   185        0 4113 1 0 100 0 0 10 0\n"
	toMaster := "   1: 0700000A:9627 0A00000A:1BA5 01 00000000:00000000 02:000A7D6B 00000000   185        0 4120 2 0 20 4 30 10 -1\n"
	toMasterClosing := "   1: 0700000A:9627 0A00000A:1BA5 08 00000000:00000000 00:00000000 00000000   185        0 4120 2 0 20 4 30 10 -1\n"
	toOther := "   2: 0700000A:9628 0B00000A:0050 01 00000000:00000000 00:00000000 00000000   185        0 4121 2 0 20 4 30 10 -1\n"
	masterPortHere := "   3: 0700000A:1BA5 0B00000A:D431 01 00000000:00000000 00:00000000 00000000   185        0 4122 2 0 20 4 30 10 -1\n"
	toMaster6 := "   0: 0000000000000000FFFF00000700000A:9627 0000000000000000FFFF00000A00000A:1BA5 01 00000000:00000000 00:00000000 00000000   185        0 4130 1 0 20 4 30 10 -1\n"
	for _, tt := range []struct {
		name       string
		tcp, tcp6  string
		noTCP6     bool
		wantsReady bool
	}{
		{name: "registered", tcp: header + listening + toMaster, tcp6: header, wantsReady: true},
		{name: "over IPv6", tcp: header + listening, tcp6: header + toMaster6, wantsReady: true},
		{name: "no IPv6 table", tcp: header + toMaster, noTCP6: true, wantsReady: true},
		{name: "not yet", tcp: header + listening + toOther, tcp6: header},
		{name: "connection to the master closing", tcp: header + toMasterClosing, tcp6: header},
		{name: "the master's port is local, not remote", tcp: header + masterPortHere, tcp6: header},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tcp, tcp6 := filepath.Join(dir, "tcp"), filepath.Join(dir, "tcp6")
			require.NoError(t, os.WriteFile(tcp, []byte(tt.tcp), 0o600))
			if !tt.noTCP6 {
				require.NoError(t, os.WriteFile(tcp6, []byte(tt.tcp6), 0o600))
			}
			err := runProbe(t, connectedToMaster.Exec.Command, "/proc/net/tcp /proc/net/tcp6", tcp+" "+tcp6)
			if tt.wantsReady {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// A worker's daemon starts only once the master's RPC port takes connections, and a worker
// deleted while it waits stops at SIGTERM.
func TestWorkerWaitsForTheMaster(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	c := &sparkv1.SparkCluster{}
	c.Name = "prod"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	require.NoError(t, l.Close())
	wait := strings.Replace(untilMasterAnswers(c), fmt.Sprintf("prod-master-svc/%d", masterPort), "127.0.0.1/"+port, 1)
	require.NotEqual(t, untilMasterAnswers(c), wait, "the master's address is in the command")

	started := filepath.Join(t.TempDir(), "started")
	cmd := exec.Command(bash, "-c", wait+"touch "+started)
	require.NoError(t, cmd.Start())
	waitingBetweenAttempts(t, cmd.Process.Pid)
	assert.NoFileExists(t, started, "the daemon started before the master answered")
	master, err := net.Listen("tcp", "127.0.0.1:"+port)
	require.NoError(t, err)
	defer master.Close()
	require.NoError(t, cmd.Wait())
	assert.FileExists(t, started)

	waiting := exec.Command(bash, "-c", strings.Replace(wait, "127.0.0.1/"+port, "127.0.0.1/1", 1)+"true")
	require.NoError(t, waiting.Start())
	waitingBetweenAttempts(t, waiting.Process.Pid)
	require.NoError(t, waiting.Process.Signal(syscall.SIGTERM))
	err = waiting.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 143, exit.ExitCode())
}

// waitingBetweenAttempts returns once the bash of pid sleeps between two attempts to reach the
// master: a child of it runs sleep.
func waitingBetweenAttempts(t *testing.T, pid int) {
	t.Helper()
	children := fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)
	require.Eventually(t, func() bool {
		list, err := os.ReadFile(children)
		if err != nil {
			return false
		}
		for _, child := range strings.Fields(string(list)) {
			if comm, err := os.ReadFile("/proc/" + child + "/comm"); err == nil && strings.TrimSpace(string(comm)) == "sleep" {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "bash waits for the master")
}
