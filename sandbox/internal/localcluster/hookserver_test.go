//go:build e2e

package localcluster

import (
	"bufio"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHookServerStopReportsTheExit(t *testing.T) {
	tests := []struct {
		name    string
		onTerm  string
		wantErr string
	}{
		{name: "clean shutdown", onTerm: "exit 0"},
		// What a binary built with -race does at exit when it saw a data race.
		{name: "race detected", onTerm: "exit 66", wantErr: "exit status 66"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A stand-in for the server: it says when it handles SIGTERM, then waits for it.
			cmd := exec.Command("sh", "-c", "trap '"+tt.onTerm+"' TERM; echo ready; while :; do sleep 0.1; done")
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			ready, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", ready)
			s := &HookServer{cmd: cmd, done: make(chan error, 1)}
			go func() { s.done <- cmd.Wait() }()

			err = s.Stop()
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
			assert.Equal(t, err, s.Stop(), "a second Stop reports the same exit")
		})
	}
}
