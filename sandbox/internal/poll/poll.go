// Package poll waits for the parts the sandbox starts: a check polled until it passes, with the
// end of a part's log when the part has died instead.
package poll

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Until runs check every interval until it succeeds, ctx ends, or stopped reports (non-nil) why
// the part being waited for can no longer pass it: an exited process's log is the better error
// than a timeout.
func Until(ctx context.Context, interval time.Duration, what string, check func(context.Context) error, stopped func() error) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var last error
	for {
		if last = check(ctx); last == nil {
			return nil
		}
		if err := stopped(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), last)
		case <-ticker.C:
		}
	}
}

// Tail returns the last n lines of the file at path, or why it cannot be read.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
