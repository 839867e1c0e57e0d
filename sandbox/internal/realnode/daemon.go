package realnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/poll"
)

// daemon is one of the node's programs (containerd, the kubelet, kube-proxy), run in the node's
// network namespace, its output in logs/<name>.log.
type daemon struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // why it exited, once exited is closed
}

func startDaemon(n *network, logDir, name, binary string, args ...string) (*daemon, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	// Not tied to a context: the node stops its daemons itself, in order.
	cmd := n.command(context.Background(), binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A process group of its own, so that a terminal's Ctrl-C reaches the stack, which stops the
	// node in order, and not the daemons first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		logFile.Close()
		close(d.exited)
	}()
	return d, nil
}

// running reports whether the daemon has not exited yet.
func (d *daemon) running() bool {
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the daemon (nsenter hands it over) and, after grace, SIGKILL to its
// process group.
func (d *daemon) stop(grace time.Duration) {
	if !d.running() {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.exited
	}
}

// failure says that the daemon exited, with the end of its log.
func (d *daemon) failure() error {
	return fmt.Errorf("%s exited (%v); the end of %s:\n%s", d.name, d.err, d.logPath, poll.Tail(d.logPath, 20))
}

// waitFor polls check every 200 ms until it succeeds, the daemon exits or ctx ends.
func (d *daemon) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	return poll.Until(ctx, 200*time.Millisecond, what, check, func() error {
		if !d.running() {
			return d.failure()
		}
		return nil
	})
}
