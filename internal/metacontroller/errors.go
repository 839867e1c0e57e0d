package metacontroller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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

// Refusal means the request is well formed but the observed world contradicts the status, so
// that any answer could delete a live pod it should not: a stale parent, a pod of an attempt the
// status does not know, a pod whose identity was edited. The HTTP layer answers 409 and counts
// the refusal by Reason; Metacontroller keeps every child and the status and asks again. It is
// not a fault of sparkhooks, so it is kept apart from 5xx answers, which alerts watch.
type Refusal struct {
	// Reason is a short CamelCase word for the metric label.
	Reason string
	err    error
}

// Refusef formats a Refusal with the given reason; %w wraps as in fmt.Errorf.
func Refusef(reason, format string, args ...any) error {
	return &Refusal{Reason: reason, err: fmt.Errorf(format, args...)}
}

func (e *Refusal) Error() string { return e.err.Error() }
func (e *Refusal) Unwrap() error { return e.err }

// Conflict marks the error as a refusal to decide on a contradictory observation.
func (e *Refusal) Conflict() string { return e.Reason }

// CheckParentType refuses a parent of another kind or API version than the hook's, as a
// request error. Empty fields pass: the hook's URL implies them.
func CheckParentType(tm metav1.TypeMeta, want schema.GroupVersionKind) error {
	if tm.Kind != "" && tm.Kind != want.Kind {
		return RequestErrorf("parent is a %s, want %s", tm.Kind, want.Kind)
	}
	if gv := want.GroupVersion().String(); tm.APIVersion != "" && tm.APIVersion != gv {
		return RequestErrorf("parent has apiVersion %s, want %s", tm.APIVersion, gv)
	}
	return nil
}
