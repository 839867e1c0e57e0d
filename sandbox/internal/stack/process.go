package stack

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

// process is a component the stack runs as a program of its own, logging to a file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // why it exited, once exited is closed
}

// startProcess starts binary with args, its output appended to logDir/<name>.log, in env (nil:
// this process's environment).
func startProcess(name, binary string, args, env []string, logDir string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so a terminal's Ctrl-C reaches the stack, which stops the
	// components in order, instead of every component at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM and, after grace, SIGKILL, and waits for the exit.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// failure describes an exit during start-up with the end of the component's log.
func (p *process) failure() error {
	return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, p.err, p.logPath, poll.Tail(p.logPath, 15))
}

// waitFor polls check until it succeeds, the process exits or ctx ends.
func (p *process) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	return pollUntil(ctx, what, check, func() *process {
		select {
		case <-p.exited:
			return p
		default:
			return nil
		}
	})
}

// pollUntil runs check every 100 ms until it succeeds, ctx ends, or exited reports a component
// that is no longer running (its log's end is the better error then).
func pollUntil(ctx context.Context, what string, check func(context.Context) error, exited func() *process) error {
	return poll.Until(ctx, 100*time.Millisecond, what, check, func() error {
		if p := exited(); p != nil {
			return p.failure()
		}
		return nil
	})
}
