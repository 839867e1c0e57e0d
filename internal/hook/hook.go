// Package hook is what every kind's core hands the HTTP shell: its hooks as one Kind value, and
// the one Outcome type a sync or finalize decision reports besides its answer. It sits below the
// cores and the shell so that a new kind is one more Kind value, with nothing to adapt between.
package hook

import (
	"time"

	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Outcome is what one decision reports for metrics and Events. The zero value records nothing.
type Outcome struct {
	Kind             string // parent kind, for the kind label
	From, To         string // state before and after; a transition is counted when they differ
	Submitted        bool   // a new driver or a new scheduled run was requested
	RestartReason    string // non-empty when the decision restarts the parent
	ValidationFailed bool   // the parent's spec did not validate
	// Application is what Kubeflow's metrics count of a SparkApplication decision; nil for
	// other kinds.
	Application *Application
	// Story tells the Events of the answered decision, from the parent and status the core
	// decoded and answered; nil when the decision tells none (finalize). The server calls it
	// after answering, off the answer's path, so it holds neither children nor the request.
	Story func() (event.Story, error)
}

// Application is what one sync decided about a SparkApplication, in the terms of Kubeflow's
// metrics. States are the wire values (SUBMITTED, RUNNING, ...); From is "" for a new one.
type Application struct {
	Namespace string
	Labels    map[string]string
	From, To  string
	// SubmissionAttempts and ExecutionAttempts are the answered status's: latencies are
	// observed for the first attempt only, as Kubeflow does.
	SubmissionAttempts, ExecutionAttempts int32
	// SinceCreation is the decision's time minus the creation; Execution is the termination
	// minus the last submission (zero when either is unknown).
	SinceCreation, Execution time.Duration
	// Executors are the executors whose state this sync turned COMPLETED or FAILED.
	Executors []Executor
}

// Executor is an executor that ended in this sync.
type Executor struct {
	Labels map[string]string
	Failed bool
}

// SyncFunc is a pure sync or finalize decision.
type SyncFunc func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, Outcome, error)

// Silent is finalize as a SyncFunc that reports nothing: the parent is on its way out, and its
// last answer tells no story and moves no metric.
func Silent(finalize func(req *metacontroller.SyncRequest) (*metacontroller.SyncResponse, error)) SyncFunc {
	return func(req *metacontroller.SyncRequest, _ time.Time) (*metacontroller.SyncResponse, Outcome, error) {
		resp, err := finalize(req)
		return resp, Outcome{}, err
	}
}

// CustomizeFunc is a pure customize decision.
type CustomizeFunc func(req *metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error)

// Kind is the hooks of one parent kind, served under /<Name>/sync, /<Name>/finalize and
// /<Name>/customize. A nil hook leaves its route unregistered.
type Kind struct {
	// Name is the route segment and the prefix of the hook label, e.g. "sparkapplication".
	Name      string
	Sync      SyncFunc
	Finalize  SyncFunc
	Customize CustomizeFunc
}
