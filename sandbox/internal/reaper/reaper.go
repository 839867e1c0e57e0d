// Package reaper removes what a sandbox leaves on the machine when it dies without cleaning up
// after itself: a panic in any goroutine (which runs no deferred function but its own), SIGKILL,
// a fatal error of the Go runtime. Its child processes die with it (they are started with a
// parent-death signal), but its data directory, the tmpfs volumes mounted below it, the pods'
// network namespaces, the bridge and its nft table would stay.
//
// The reaper is a copy of the sandbox's binary that the sandbox starts first (Start), in a
// process group of its own so that a terminal's Ctrl-C does not reach it. The sandbox tells it
// over a pipe what it creates, as it creates it; once the sandbox has cleaned up itself it says
// so (Done) and the reaper exits. If the pipe closes first, the sandbox is gone: the reaper
// removes what it was told of, newest first, and exits.
package reaper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// envReaper tells a copy of the binary that it is the reaper.
const envReaper = "SPARKHOOKS_LOCAL_REAPER"

// record is one thing the reaper removes, or the sandbox's word that it has.
type record struct {
	// Remove is a file or directory, removed after what is mounted below it.
	Remove string `json:"remove,omitempty"`
	// Unmount is a directory that outlives the sandbox, below which mounts are detached.
	Unmount string `json:"unmount,omitempty"`
	// Network is the bridge of a pod network (prockubelet.RemoveLeftovers).
	Network string `json:"network,omitempty"`
	Done    bool   `json:"done,omitempty"`
}

// Reaper is the sandbox's end of the pipe to its reaper.
type Reaper struct {
	mu   sync.Mutex
	pipe *os.File
	cmd  *exec.Cmd
}

// Start starts the reaper, a copy of the running executable, whose main must call Reexec first.
// The reaper's messages go to stderr.
func Start(stderr io.Writer) (*Reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	read, write, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	defer read.Close()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envReaper+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = read, stderr, stderr
	// Not the terminal's: Ctrl-C must reach only the sandbox, which may well clean up itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		write.Close()
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	return &Reaper{pipe: write, cmd: cmd}, nil
}

// Remove has the reaper remove path, after what is mounted below it.
func (r *Reaper) Remove(path string) error { return r.send(record{Remove: path}) }

// Unmount has the reaper detach what is mounted below dir, which itself stays.
func (r *Reaper) Unmount(dir string) error { return r.send(record{Unmount: dir}) }

// Network has the reaper remove the pod network on bridge.
func (r *Reaper) Network(bridge string) error { return r.send(record{Network: bridge}) }

func (r *Reaper) send(rec record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.pipe.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("telling the reaper: %w", err)
	}
	return nil
}

// Done tells the reaper that the sandbox has cleaned up after itself, and waits for it to exit.
func (r *Reaper) Done() error {
	err := r.send(record{Done: true})
	r.pipe.Close()
	return errors.Join(err, r.cmd.Wait())
}

// Reexec returns at once unless this process was started as the reaper; then it reaps and exits.
func Reexec() {
	if os.Getenv(envReaper) == "" {
		return
	}
	// A terminal that closed must not kill the reaper when it writes what it did.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	reap(os.Stdin, os.Stderr, sweeper{removeNetwork: prockubelet.RemoveLeftovers, mountInfo: "/proc/self/mountinfo"})
	os.Exit(0)
}

// sweeper does what the records say.
type sweeper struct {
	removeNetwork func(ctx context.Context, bridge string) error
	// mountInfo is /proc/self/mountinfo: the reaper runs in the sandbox's mount namespace.
	mountInfo string
}

// reap reads records until the sandbox says it is done or the pipe closes; then, unless done, it
// removes what the records name, newest first, and writes what it did to out.
func reap(in io.Reader, out io.Writer, s sweeper) {
	var records []record
	scanner := bufio.NewScanner(in)
	for scanner.Scan() {
		var rec record
		if err := json.Unmarshal(scanner.Bytes(), &rec); err != nil {
			fmt.Fprintf(out, "sparkhooks-local's reaper: %v\n", err)
			continue
		}
		if rec.Done {
			return
		}
		records = append(records, rec)
	}
	if len(records) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var done []string
	for i := len(records) - 1; i >= 0; i-- {
		rec := records[i]
		var err error
		switch {
		case rec.Network != "":
			err = s.removeNetwork(ctx, rec.Network)
			done = append(done, "the pod network "+rec.Network)
		case rec.Unmount != "":
			err = s.unmountBelow(rec.Unmount)
		case rec.Remove != "":
			if err = s.unmountBelow(rec.Remove); err == nil {
				err = removeAll(rec.Remove)
			}
			done = append(done, rec.Remove)
		}
		if err != nil {
			fmt.Fprintf(out, "sparkhooks-local's reaper: %v\n", err)
		}
	}
	fmt.Fprintf(out, "sparkhooks-local ended without cleaning up; its reaper removed %s\n", strings.Join(done, ", "))
}

// unmountBelow detaches every mount at or below dir, deepest first.
func (s sweeper) unmountBelow(dir string) error {
	data, err := os.ReadFile(s.mountInfo)
	if err != nil {
		return err
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		// Spaces and the like in mount points are octal escapes (\040).
		point := unescapeOctal(fields[4])
		if point == dir || strings.HasPrefix(point, strings.TrimSuffix(dir, "/")+"/") {
			points = append(points, point)
		}
	}
	// A mount below another sorts after it.
	slices.Sort(points)
	slices.Reverse(points)
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func unescapeOctal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// removeAll removes path, again for a moment if the dying sandbox's last writes race it.
func removeAll(path string) error {
	var err error
	for range 10 {
		if err = os.RemoveAll(path); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
