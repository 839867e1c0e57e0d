package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// brokenPipe fails every write, as a pipe whose reader is gone does.
type brokenPipe struct{ writes int }

func (b *brokenPipe) Write([]byte) (int, error) {
	b.writes++
	return 0, errors.New("write |1: broken pipe")
}

func TestTerminalOutlivesItsReader(t *testing.T) {
	out := &brokenPipe{}
	var logged []string
	term := &terminal{out: out, logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}
	for _, line := range []string{"sparkhooks-local is up\n", "sparkhooks serve exited (signal: killed); restarted in 1s\n"} {
		if n, err := fmt.Fprint(term, line); err != nil || n != len(line) {
			t.Errorf("Fprint = %d, %v; want %d, nil", n, err, len(line))
		}
	}
	if out.writes != 1 {
		t.Errorf("%d writes to the closed terminal, want 1: the first failure closes it", out.writes)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "broken pipe") {
		t.Errorf("logged %q, want the failure once", logged)
	}
}
