package main

import (
	"io"
	"sync"
)

// terminal is where the user reads the sandbox: its stdout or stderr, which may close under it
// (the reader of a pipe gone). A write that fails is told to logf once, and what follows goes
// only to the log: losing the terminal is no reason to stop, and never one to skip the clean-up.
type terminal struct {
	mu     sync.Mutex
	out    io.Writer
	logf   func(format string, args ...any)
	closed bool
}

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return len(p), nil
	}
	if _, err := t.out.Write(p); err != nil {
		t.closed = true
		t.logf("writing to the terminal: %v; from here on the sandbox writes only to this log", err)
	}
	return len(p), nil
}
