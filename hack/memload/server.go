package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// chartMemoryLimit reads resources.limits.memory from the chart's values, in bytes, as the
// downward API hands it to the container.
func chartMemoryLimit(path string) (int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read chart values: %w", err)
	}
	var values struct {
		Resources struct {
			Limits struct {
				Memory string `json:"memory"`
			} `json:"limits"`
		} `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		return 0, fmt.Errorf("decode %s: %w", path, err)
	}
	q, err := resource.ParseQuantity(values.Resources.Limits.Memory)
	if err != nil {
		return 0, fmt.Errorf("%s: resources.limits.memory: %w", path, err)
	}
	return q.Value(), nil
}

// build compiles cmd/sparkhooks from the module in src as `make build` does.
func build(ctx context.Context, src, dir string) (string, error) {
	bin := filepath.Join(dir, "sparkhooks")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/sparkhooks")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build sparkhooks in %s: %w\n%s", src, err, out)
	}
	return bin, nil
}

type server struct {
	cmd     *exec.Cmd
	base    string
	logPath string
	done    chan struct{}
	waitErr error
}

// startServer runs `sparkhooks serve` with the arguments the chart's Deployment passes by
// default, then extraArgs, and the container's memory limit in the variable its downward API
// sets. Settings
// from this shell's environment (GOMEMLIMIT, GOGC, SPARKHOOKS_*) are left out so that the
// defaults are what is measured.
func startServer(ctx context.Context, bin string, memoryLimit int64, dir string, extraArgs []string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	defer logFile.Close()

	args := append([]string{"serve", "--addr=" + addr, "--log-level=info", "--shutdown-timeout=20s", "--enable-ui-service=true"}, extraArgs...)
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "GOMEMLIMIT" && name != "GOGC" && !strings.HasPrefix(name, "SPARKHOOKS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SPARKHOOKS_MEMORY_LIMIT_BYTES="+strconv.FormatInt(memoryLimit, 10))
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{cmd: cmd, base: "http://" + addr, logPath: logPath, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitHealthy(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// freeAddr asks the kernel for a free loopback port. Another process could take it before the
// server binds it, which on a test machine is rare enough.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

func (s *server) waitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("server exited at start-up: %w (log %s)", s.waitErr, s.logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("server did not answer /healthz within 10s (log %s)", s.logPath)
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// exited reports why the server stopped, nil while it runs.
func (s *server) exited() error {
	select {
	case <-s.done:
		if s.waitErr == nil {
			return errors.New("exit status 0")
		}
		return s.waitErr
	default:
		return nil
	}
}

// memory reads the peak (VmHWM) and current (VmRSS) resident set of the server in bytes.
func (s *server) memory() (peak, rss int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.pid()))
	if err != nil {
		return 0, 0, fmt.Errorf("read server memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse %s %q: %w", name, value, err)
		}
		if name == "VmHWM" {
			peak = kb << 10
		} else {
			rss = kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("read server memory: %w", err)
	}
	return peak, rss, nil
}

// inflightMetrics returns the server's sparkhooks_inflight_* series; a server without them
// (an older build) returns none.
func (s *server) inflightMetrics() []string {
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil
	}
	var lines []string
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("sparkhooks_inflight")) {
			lines = append(lines, strings.TrimSpace(string(line)))
		}
	}
	return lines
}

// stop sends SIGTERM, as the kubelet does, and kills the server if it has not exited in time.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(25 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
