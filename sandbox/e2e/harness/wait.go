//go:build e2e

package harness

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// pollInterval is how often WaitFor looks: often enough that a wait adds little to a test, rarely
// enough that a dozen waits side by side are a small part of the API server's load.
const pollInterval = 50 * time.Millisecond

// WaitFor polls get until ok accepts what it returns, for at most timeout, and returns the last
// value get returned. Its error says what was wanted and what was seen last: describe's account
// of the last value, or get's last error. An error of get is retried.
func WaitFor[T any](ctx context.Context, timeout time.Duration, want string, get func(context.Context) (T, error), ok func(T) bool, describe func(T) string) (T, error) {
	return WaitEvery(ctx, pollInterval, timeout, want, get, ok, describe)
}

// WaitEvery is WaitFor looking every interval: for a get that costs more than one read (the
// spark suite's observers list Pods and read cgroups on every look).
func WaitEvery[T any](ctx context.Context, interval, timeout time.Duration, want string, get func(context.Context) (T, error), ok func(T) bool, describe func(T) string) (T, error) {
	var last T
	var lastErr error
	seen := false
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		v, err := get(ctx)
		if err != nil {
			lastErr = err
			return false, nil
		}
		last, lastErr, seen = v, nil, true
		return ok(v), nil
	})
	if err == nil {
		return last, nil
	}
	var saw string
	switch {
	case lastErr != nil:
		saw = lastErr.Error()
	case seen && describe != nil:
		saw = describe(last)
	case seen:
		saw = fmt.Sprintf("%+v", last)
	default:
		saw = "nothing"
	}
	return last, fmt.Errorf("want %s within %s; saw %s", want, timeout, saw)
}
