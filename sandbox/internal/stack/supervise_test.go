package stack

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRestartPolicyNext(t *testing.T) {
	policy := restartPolicy{initial: time.Second, max: 5 * time.Second, limit: 5, window: time.Minute}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(seconds ...int) []time.Time {
		var out []time.Time
		for _, s := range seconds {
			out = append(out, base.Add(time.Duration(s)*time.Second))
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		earlier    []time.Time
		now        int
		wantRecent int
		wantDelay  time.Duration
		wantGiveUp bool
	}{
		{"first exit", nil, 0, 1, time.Second, false},
		{"second within the window doubles", at(0), 10, 2, 2 * time.Second, false},
		{"capped at max", at(0, 1, 3), 7, 4, 5 * time.Second, false},
		{"the fifth within the window gives up", at(0, 1, 3, 7), 15, 5, 0, true},
		{"exits older than the window are forgotten", at(0, 1, 3, 7), 65, 2, 2 * time.Second, false},
		{"a long run starts afresh", at(0), 3600, 1, time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recent, delay, giveUp := policy.next(tc.earlier, base.Add(time.Duration(tc.now)*time.Second))
			if len(recent) != tc.wantRecent || delay != tc.wantDelay || giveUp != tc.wantGiveUp {
				t.Errorf("next = %d recent, %s, give up %v; want %d, %s, %v", len(recent), delay, giveUp, tc.wantRecent, tc.wantDelay, tc.wantGiveUp)
			}
		})
	}
}

// TestComponentSupervision runs a program that exits at once: it is restarted with the same
// arguments after each back-off, each restart is reported and logged, and the limit-th exit is
// given up on with the end of its log.
func TestComponentSupervision(t *testing.T) {
	logDir := t.TempDir()
	runs := filepath.Join(t.TempDir(), "runs")
	c, err := startComponent("crasher", "the crasher", "/bin/sh", []string{"-c", `echo "run $1" >>"$0"; echo "failing on purpose"; exit 3`, runs, "same-argument"}, nil, logDir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reported []string
	var waits []time.Duration
	policy := restartPolicy{
		initial: time.Millisecond, max: 4 * time.Millisecond, limit: 4, window: time.Minute, now: time.Now,
		after: func(d time.Duration) <-chan time.Time {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
			return time.After(d)
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.supervise(ctx, policy, func(line string) {
		mu.Lock()
		reported = append(reported, line)
		mu.Unlock()
	})
	if err == nil || !strings.Contains(err.Error(), "the crasher exited (exit status 3), 4 times within 1m0s: not restarted") || !strings.Contains(err.Error(), "failing on purpose") {
		t.Fatalf("supervise gave up with %v, want the reason and the end of the log", err)
	}
	want := []string{
		"the crasher exited (exit status 3); restarted in 1ms",
		"the crasher exited (exit status 3); restarted in 2ms",
		"the crasher exited (exit status 3); restarted in 4ms",
	}
	if !slices.Equal(reported, want) {
		t.Errorf("reported %q, want %q", reported, want)
	}
	if wantWaits := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}; !slices.Equal(waits, wantWaits) {
		t.Errorf("waited %v, want %v", waits, wantWaits)
	}
	data, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "run same-argument\n"); got != 4 {
		t.Errorf("%d runs with the same argument, want 4:\n%s", got, data)
	}
	log, err := os.ReadFile(filepath.Join(logDir, "crasher.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range append(want, "the crasher exited (exit status 3), 4 times within 1m0s: not restarted") {
		if !strings.Contains(string(log), "sparkhooks-local: "+line) {
			t.Errorf("the component's log does not say %q:\n%s", line, log)
		}
	}
}

// TestSupervisionEndsWithItsContext: a stopped stack ends supervision, and nothing restarts the
// component it then stops.
func TestSupervisionEndsWithItsContext(t *testing.T) {
	c, err := startComponent("sleeper", "the sleeper", "/bin/sh", []string{"-c", "sleep 60"}, nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.supervise(ctx, defaultRestarts(), func(line string) { t.Errorf("reported %q", line) })
	}()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("supervise: %v", err)
	}
	first := c.current()
	c.stop(time.Second)
	if c.current() != first {
		t.Error("the component was started again after supervision ended")
	}
}
