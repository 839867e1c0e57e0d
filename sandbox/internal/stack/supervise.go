package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/poll"
)

// component is a program the stack keeps running, as a node's kubelet keeps its static Pods
// running: when it exits it is started again with the same arguments, so at the same addresses
// and on the same state (kube-apiserver on the same port and etcd), after a back-off; one that
// keeps exiting is given up on, and the stack reports why rather than run on without it.
type component struct {
	// name names its log (<name>.log); title names it to the user ("sparkhooks serve").
	name, title string
	binary      string
	args, env   []string
	logDir      string

	mu  sync.Mutex
	run *process
	// unsupervise ends the supervision and waits until it has; nil for an unsupervised one.
	unsupervise func()
}

func startComponent(name, title, binary string, args, env []string, logDir string) (*component, error) {
	c := &component{name: name, title: title, binary: binary, args: args, env: env, logDir: logDir}
	if err := c.start(); err != nil {
		return nil, err
	}
	return c, nil
}

// start starts a run; a run that could not start is recorded as one that exited at once, so that
// a restart that fails counts like one that crashes.
func (c *component) start() error {
	p, err := startProcess(c.name, c.binary, c.args, c.env, c.logDir)
	if err != nil {
		p = &process{name: c.name, logPath: filepath.Join(c.logDir, c.name+".log"), exited: make(chan struct{}), err: err}
		close(p.exited)
	}
	c.mu.Lock()
	c.run = p
	c.mu.Unlock()
	return err
}

// current is the latest run.
func (c *component) current() *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.run
}

// stop stops the latest run; the caller has ended supervision first.
func (c *component) stop(grace time.Duration) { c.current().stop(grace) }

// end ends the supervision, then the latest run.
func (c *component) end(grace time.Duration) {
	if c.unsupervise != nil {
		c.unsupervise()
	}
	c.stop(grace)
}

// restartPolicy says when an exited component starts again: after initial, doubling with every
// exit within window up to max; the limit-th exit within window is not restarted.
type restartPolicy struct {
	initial, max time.Duration
	limit        int
	window       time.Duration
	now          func() time.Time
	after        func(time.Duration) <-chan time.Time
}

// defaultRestarts: a second, then 2, 4 and 8, and the fifth exit within a minute stops the
// cluster. A kubelet's back-off (10 s to 5 min, forever) suits a Pod in a cluster that outlives
// it; here a component that exits five times in a minute will not come back by waiting, and a
// sandbox that waits for it looks hung.
func defaultRestarts() restartPolicy {
	return restartPolicy{
		initial: time.Second, max: 30 * time.Second, limit: 5, window: time.Minute,
		now: time.Now, after: time.After,
	}
}

// next takes the times of the earlier exits and the exit at now, and returns those within the
// window (now's included), the wait before the restart, and whether to give up instead.
func (p restartPolicy) next(exits []time.Time, now time.Time) (recent []time.Time, delay time.Duration, giveUp bool) {
	for _, t := range exits {
		if now.Sub(t) < p.window {
			recent = append(recent, t)
		}
	}
	recent = append(recent, now)
	if len(recent) >= p.limit {
		return recent, 0, true
	}
	delay = p.initial
	for range len(recent) - 1 {
		delay = min(2*delay, p.max)
	}
	return recent, delay, false
}

// supervise restarts the component whenever it exits, as policy says, telling report (and the
// component's log) each time, until ctx ends (nil) or it gives up (why, with its log's end).
func (c *component) supervise(ctx context.Context, policy restartPolicy, report func(string)) error {
	var exits []time.Time
	for {
		p := c.current()
		select {
		case <-ctx.Done():
			return nil
		case <-p.exited:
		}
		var delay time.Duration
		var giveUp bool
		exits, delay, giveUp = policy.next(exits, policy.now())
		if giveUp {
			line := fmt.Sprintf("%s exited (%s), %d times within %s: not restarted", c.title, exitReason(p.err), len(exits), policy.window)
			c.logLine(policy.now(), line)
			return fmt.Errorf("%s\nthe end of its log, %s:\n%s", line, p.logPath, poll.Tail(p.logPath, 15))
		}
		line := fmt.Sprintf("%s exited (%s); restarted in %s", c.title, exitReason(p.err), delay)
		report(line)
		c.logLine(policy.now(), line)
		select {
		case <-ctx.Done():
			return nil
		case <-policy.after(delay):
		}
		// An error is the next run's exit, which the loop reports.
		_ = c.start()
	}
}

// logLine appends what the supervisor did to the component's log, between its own lines.
func (c *component) logLine(now time.Time, line string) {
	f, err := os.OpenFile(filepath.Join(c.logDir, c.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s sparkhooks-local: %s\n", now.Format(time.RFC3339), line)
}

// exitReason says how a run ended, as os/exec says it: "signal: killed", "exit status 1".
func exitReason(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
