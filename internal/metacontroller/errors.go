package metacontroller

import "fmt"

// RequestError means a hook request cannot be understood. The HTTP layer answers 400, and
// Metacontroller leaves the children and the status alone and retries: the safe answer when a
// hook cannot decide.
type RequestError struct {
	err error
}

// RequestErrorf formats a RequestError; %w wraps as in fmt.Errorf.
func RequestErrorf(format string, args ...any) error {
	return &RequestError{err: fmt.Errorf(format, args...)}
}

func (e *RequestError) Error() string { return e.err.Error() }
func (e *RequestError) Unwrap() error { return e.err }

// BadRequest marks the error as the caller's.
func (e *RequestError) BadRequest() bool { return true }
