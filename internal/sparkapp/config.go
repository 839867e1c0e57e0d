package sparkapp

import (
	"time"

	"github.com/sparkhooks/sparkhooks/internal/children"
)

// Config holds the operator-wide settings of the SparkApplication decision.
type Config struct {
	// Driver tunes the objects built for each attempt.
	Driver children.Options
	// SubmissionGrace is how long after a submission the driver Pod may still be missing from
	// the observed children: Metacontroller creates it after the sync returns, and a watch
	// event can lag. A driver still missing after this is a failed submission.
	SubmissionGrace time.Duration
	// MissingDriverGrace is how long a driver Pod that was seen may be missing before it is
	// believed gone (deleted by hand, garbage-collected with its node), rather than absent
	// from one stale cache read.
	MissingDriverGrace time.Duration
	// ImagePullGrace is how long a driver Pod may wait on an image pull (ErrImagePull,
	// ImagePullBackOff) or on its configuration (CreateContainerConfigError) before the
	// attempt fails. spec.timeouts.driverStartSeconds, when shorter, wins.
	ImagePullGrace time.Duration
	// MaxTrackedExecutors caps status.executorState; executors past the cap are only counted,
	// in the ExecutorsReady condition. It keeps the status of a thousand-executor job small
	// enough to write on every change.
	MaxTrackedExecutors int
	// DefaultTimeToLiveSeconds is the time to live of a finished application whose spec sets
	// none (Kubeflow's --default-time-to-live-seconds); 0 means none. It is never written into
	// the spec: the spec's value, whatever it is, wins.
	DefaultTimeToLiveSeconds int64
	// HistoryServerURL is the base URL of the History Server that reads Driver.EventLog.Dir.
	// An attempt that logs there names its page, <url>/history/<spark app id>/jobs/, in
	// status.historyURL. Empty: no History Server.
	HistoryServerURL string
	// Namespaces chooses the namespaces whose applications start (--namespaces,
	// --namespace-selector); the zero value chooses every namespace.
	Namespaces NamespaceSelector
	// KueueIntegration says that Kueue's own SparkApplication integration (its feature gate
	// SparkApplicationIntegration) queues the applications labelled kueue.x-k8s.io/queue-name:
	// Kueue suspends and resumes them through spec.suspend, and writes its placement into the
	// spec while they are suspended (see kueuejob.go).
	KueueIntegration bool
}

// DefaultConfig returns the settings the server starts with.
func DefaultConfig() Config {
	return Config{
		Driver:              children.Options{EnableUIService: true},
		SubmissionGrace:     30 * time.Second,
		MissingDriverGrace:  10 * time.Second,
		ImagePullGrace:      5 * time.Minute,
		MaxTrackedExecutors: 1000,
	}
}
