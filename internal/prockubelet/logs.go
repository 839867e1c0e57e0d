package prockubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ErrNoLogs is returned for a pod this kubelet does not run (or no longer keeps).
var ErrNoLogs = errors.New("no such pod on this node")

// Logs opens the log of a container of a pod this kubelet runs, as the kubelet's log endpoint
// serves it: the current run (or, with Previous, the one before), the last TailLines lines, at
// most LimitBytes, and with Follow a stream that ends when the container does.
func (k *Kubelet) Logs(ctx context.Context, namespace, name string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	r := k.podByName(namespace, name)
	if r == nil {
		return nil, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrNoLogs)
	}
	pod := r.current()
	container := opts.Container
	if container == "" {
		if len(pod.Spec.Containers) != 1 {
			var names []string
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			return nil, fmt.Errorf("a container name must be specified for pod %s, choose one of: [%s]", name, strings.Join(names, " "))
		}
		container = pod.Spec.Containers[0].Name
	}
	r.mu.Lock()
	status := r.statusOf(container)
	var restarts int32
	running := false
	var proc *process
	if status != nil {
		restarts = status.RestartCount
		running = status.State.Running != nil
		proc = r.procs[container]
	}
	r.mu.Unlock()
	if status == nil {
		return nil, fmt.Errorf("container %s is not valid for pod %s", container, name)
	}
	run := restarts
	if opts.Previous {
		if restarts == 0 {
			return nil, fmt.Errorf("previous terminated container %q in pod %q not found", container, name)
		}
		run = restarts - 1
	}
	path := r.logPath(container, run)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("container %q in pod %q is waiting to start: %w", container, name, err)
	}
	if opts.TailLines != nil {
		if err := seekTail(f, int(*opts.TailLines)); err != nil {
			f.Close()
			return nil, err
		}
	}
	var reader io.ReadCloser = f
	if opts.Follow && running && !opts.Previous && proc != nil {
		reader = &follower{ctx: ctx, f: f, done: proc.done}
	}
	if opts.LimitBytes != nil {
		reader = limitedReadCloser{Reader: io.LimitReader(reader, *opts.LimitBytes), Closer: reader}
	}
	return reader, nil
}

type limitedReadCloser struct {
	io.Reader
	io.Closer
}

// follower reads a growing log file until the container exits and the file is drained.
type follower struct {
	ctx  context.Context
	f    *os.File
	done <-chan struct{}
}

func (l *follower) Read(p []byte) (int, error) {
	for {
		n, err := l.f.Read(p)
		if n > 0 || (err != nil && err != io.EOF) {
			return n, err
		}
		select {
		case <-l.done:
			// One more read drains what the container wrote before it exited.
			n, err := l.f.Read(p)
			if n > 0 {
				return n, nil
			}
			return 0, err
		case <-l.ctx.Done():
			return 0, io.EOF
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (l *follower) Close() error { return l.f.Close() }

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if n <= 0 {
		_, err := f.Seek(size, io.SeekStart)
		return err
	}
	const chunk = 64 * 1024
	newlines := 0
	pos := size
	buf := make([]byte, chunk)
	for pos > 0 {
		read := int64(chunk)
		if pos < read {
			read = pos
		}
		pos -= read
		if _, err := f.ReadAt(buf[:read], pos); err != nil && err != io.EOF {
			return err
		}
		for i := read - 1; i >= 0; i-- {
			if buf[i] != '\n' {
				continue
			}
			// The file's final newline ends the last line; it does not start one.
			if pos+i == size-1 {
				continue
			}
			newlines++
			if newlines == n {
				_, err := f.Seek(pos+i+1, io.SeekStart)
				return err
			}
		}
	}
	_, err = f.Seek(0, io.SeekStart)
	return err
}
