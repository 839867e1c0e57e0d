package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// HookServer is the sparkhooks binary running as a child process on a loopback port.
type HookServer struct {
	URL  string
	cmd  *exec.Cmd
	done chan error
}

// StartHookServer runs `binary serve --addr 127.0.0.1:<free port>` with its output in logPath and
// waits for /readyz. The child is killed if the test process dies (Pdeathsig), so no server
// outlives a crashed test.
func StartHookServer(ctx context.Context, binary, logPath string, extraArgs ...string) (*HookServer, error) {
	var lastErr error
	for range 3 {
		s, err := startHookServerOnce(ctx, binary, logPath, extraArgs)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startHookServerOnce(ctx context.Context, binary, logPath string, extraArgs []string) (*HookServer, error) {
	ports, err := FreeLoopbackPorts(2)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := append([]string{"serve", "--addr", addr, "--tls-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}, extraArgs...)
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	s := &HookServer{URL: "http://" + addr, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *HookServer) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("sparkhooks exited while starting: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get(s.URL + "/readyz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	return errors.New("sparkhooks did not become ready within 30s")
}

// Stop asks the server to shut down, kills it if it does not within 10s, and returns an error
// unless it exited cleanly: a binary built with -race exits with status 66 when it saw a data race.
func (s *HookServer) Stop() error {
	if s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			return fmt.Errorf("sparkhooks exited: %w", err)
		}
		return nil
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		s.done <- <-s.done
		return errors.New("sparkhooks did not stop within 10s of SIGTERM and was killed")
	}
}
