package prockubelet

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
)

// process is one run of a container: podinit, then the container's command in its place.
type process struct {
	cmd       *exec.Cmd
	logPath   string
	startedAt time.Time
	// terminationPath is the host file behind the container's termination-message path.
	terminationPath string
	uid, gid        uint32

	done       chan struct{}
	mu         sync.Mutex
	exitCode   int32
	signal     syscall.Signal
	finishedAt time.Time
	stopping   bool
}

// startProcess starts spec in new mount, UTS and PID namespaces with its output recorded in
// logPath.
func (k *Kubelet) startProcess(spec podinit.Spec, specPath, logPath string) (*process, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(specPath), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	log := &runLog{f: logFile, now: k.cfg.Now}
	stdout, stderr := &logStream{log: log, name: "stdout"}, &logStream{log: log, name: "stderr"}
	cmd := exec.Command(k.cfg.InitBinary)
	cmd.Env = []string{podinit.EnvSpec + "=" + specPath}
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Every process that could hold the output pipes dies with the container's PID namespace;
	// this bounds the wait for them to close all the same.
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A PID namespace of its own, as a container has: when its first process ends, the
		// kernel kills every process left in it, so a JVM a shell started in the background
		// never outlives its container.
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWPID,
		// A container never outlives the kubelet that started it.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting the container: %w", err)
	}
	p := &process{cmd: cmd, logPath: logPath, startedAt: k.cfg.Now(), done: make(chan struct{}), uid: spec.UID, gid: spec.GID}
	go func() {
		// Wait returns once the output is copied; its error says no more than ProcessState.
		_ = cmd.Wait()
		stdout.close()
		stderr.close()
		logFile.Close()
		p.mu.Lock()
		p.finishedAt = k.cfg.Now()
		p.exitCode = 128
		if cmd.ProcessState != nil {
			status := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if status.Signaled() {
				p.signal = status.Signal()
				p.exitCode = 128 + int32(status.Signal())
			} else {
				p.exitCode = int32(status.ExitStatus())
			}
		}
		p.mu.Unlock()
		// The container's children (Python workers of a PySpark driver) go with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM to the container's process group, waits up to grace for it to exit, then
// sends SIGKILL.
func (p *process) stop(grace time.Duration) {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	p.signalGroup(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	p.signalGroup(syscall.SIGKILL)
	<-p.done
}

func (p *process) signalGroup(sig syscall.Signal) {
	pid := p.cmd.Process.Pid
	if err := syscall.Kill(-pid, sig); err != nil {
		// Before podinit made its session, the group is not there yet.
		_ = syscall.Kill(pid, sig)
	}
}

func (p *process) result() (exitCode int32, finishedAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitCode, p.finishedAt
}
