package sparkapp

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// driverContainer is the name Spark gives the driver's main container.
const driverContainer = "spark-kubernetes-driver"

// Reasons, used in conditions and in the restart metric. Infrastructure reasons say the
// application itself may be fine.
const (
	ReasonAppFailed           = "AppFailed"
	ReasonAppSucceeded        = "AppSucceeded"
	ReasonEvicted             = "DriverEvicted"
	ReasonOOMKilled           = "DriverOOMKilled"
	ReasonNodeLost            = "NodeLost"
	ReasonInitContainerFailed = "InitContainerFailed"
	ReasonImagePull           = "ImagePullFailed"
	ReasonInvalidImage        = "InvalidImageName"
	ReasonContainerConfig     = "CreateContainerConfigError"
	ReasonDriverMissing       = "DriverPodMissing"
	ReasonDriverNotCreated    = "DriverPodNotCreated"
	ReasonDriverStartTimeout  = "DriverStartTimedOut"
	ReasonDriverReadyTimeout  = "DriverReadyTimedOut"
	ReasonExecutorsTimeout    = "ExecutorsStartTimedOut"
)

// driverObservation is what the driver Pod says about the attempt.
type driverObservation struct {
	state     v1beta2.DriverState
	reason    string // for a failure: one of the Reason constants
	message   string // for a failure: what happened, for errorMessage
	created   time.Time
	started   time.Time // the Spark container started running; zero before
	ready     time.Time // the Pod became Ready; zero while not ready
	finished  time.Time // the Spark container terminated; zero before
	waiting   string    // the Spark container's waiting reason while Pending
	waitingOn string    // its waiting message
}

func observeDriver(pod *podView) driverObservation {
	o := driverObservation{created: pod.Metadata.CreationTimestamp.Time}
	spark := findContainer(pod.Status.ContainerStatuses, driverContainer)
	if spark != nil {
		if r := spark.State.Running; r != nil {
			o.started = r.StartedAt.Time
		}
		if t := spark.State.Terminated; t != nil {
			o.started = t.StartedAt.Time
			o.finished = t.FinishedAt.Time
		}
		if w := spark.State.Waiting; w != nil {
			o.waiting, o.waitingOn = w.Reason, w.Message
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			o.ready = c.LastTransitionTime.Time
		}
	}

	switch pod.Status.Phase {
	case corev1.PodPending, "":
		o.state = v1beta2.DriverStatePending
		if failed := failedInitContainer(pod.Status.InitContainerStatuses); failed != "" {
			o.state, o.reason, o.message = v1beta2.DriverStateFailed, ReasonInitContainerFailed, failed
		}
	case corev1.PodRunning:
		o.state = v1beta2.DriverStateRunning
		// Sidecars can keep the Pod running after Spark has exited.
		if spark != nil && spark.State.Terminated != nil {
			o.terminated(pod, spark)
		}
	case corev1.PodSucceeded:
		o.state = v1beta2.DriverStateCompleted
		if o.finished.IsZero() && spark != nil && spark.LastTerminationState.Terminated != nil {
			o.finished = spark.LastTerminationState.Terminated.FinishedAt.Time
		}
	case corev1.PodFailed:
		o.state = v1beta2.DriverStateFailed
		switch {
		case spark != nil && spark.State.Terminated != nil:
			o.terminated(pod, spark)
		case pod.Status.Reason == "Evicted":
			o.reason, o.message = ReasonEvicted, "driver Pod evicted: "+pod.Status.Message
		case failedInitContainer(pod.Status.InitContainerStatuses) != "":
			o.reason, o.message = ReasonInitContainerFailed, failedInitContainer(pod.Status.InitContainerStatuses)
		default:
			o.reason, o.message = infraReason(pod), "driver Pod failed before its Spark container ran"
			if pod.Status.Reason != "" {
				o.message += ": " + pod.Status.Reason
				if pod.Status.Message != "" {
					o.message += ": " + pod.Status.Message
				}
			}
		}
	default:
		o.state = v1beta2.DriverStateUnknown
	}
	return o
}

// terminated classifies a Spark container that has exited.
func (o *driverObservation) terminated(pod *podView, spark *corev1.ContainerStatus) {
	t := spark.State.Terminated
	switch {
	case t.ExitCode == 0:
		o.state = v1beta2.DriverStateCompleted
	case t.Reason == "OOMKilled":
		o.state, o.reason = v1beta2.DriverStateFailed, ReasonOOMKilled
		o.message = fmt.Sprintf("driver container was killed for exceeding its memory limit (OOMKilled, exit code %d): raise spec.driver.memory or spec.driver.memoryOverhead", t.ExitCode)
	case pod.Status.Reason == "Evicted":
		o.state, o.reason = v1beta2.DriverStateFailed, ReasonEvicted
		o.message = fmt.Sprintf("driver Pod evicted (exit code %d): %s", t.ExitCode, pod.Status.Message)
	case isDisrupted(pod):
		o.state, o.reason = v1beta2.DriverStateFailed, ReasonNodeLost
		o.message = fmt.Sprintf("driver Pod was disrupted (exit code %d): %s", t.ExitCode, disruptionMessage(pod))
	default:
		o.state, o.reason = v1beta2.DriverStateFailed, ReasonAppFailed
		o.message = fmt.Sprintf("driver container failed with exit code %d", t.ExitCode)
		if t.Reason != "" {
			o.message += ", reason " + t.Reason
		}
		cause := exitExceptionCause(pod.Metadata.Annotations[exitExceptionAnnotation])
		if cause == "" {
			cause = failureCause(t.Message)
		}
		if cause != "" {
			o.message += ": " + cause
		}
	}
}

// exitExceptionAnnotation is where a Spark 4.1+ driver with
// spark.kubernetes.driver.annotateExitException writes the exception it died of (the driver
// builder turns that on): the exception's text with its stack trace, up to 64 KiB.
const exitExceptionAnnotation = "spark.exit-exception"

// exitExceptionCause reads a driver's exit-exception annotation: its first line, the exception,
// and its root cause, the last "Caused by:" line. Empty when there is no annotation.
func exitExceptionCause(stack string) string {
	var exception, rootCause string
	for _, line := range strings.Split(stack, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case exception == "":
			exception = line
		case strings.HasPrefix(line, "Caused by: "):
			rootCause = strings.TrimPrefix(line, "Caused by: ")
		}
	}
	cause := exception
	if rootCause != "" && rootCause != exception {
		cause += "; caused by " + rootCause
	}
	return boundCause(cause)
}

// boundCause cuts a cause to maxCause bytes, on a character boundary.
func boundCause(cause string) string {
	if len(cause) <= maxCause {
		return cause
	}
	cut := maxCause
	for cut > 0 && !utf8.RuneStart(cause[cut]) {
		cut--
	}
	return cause[:cut] + "…"
}

// maxCause bounds the cause taken from a termination message: a status is read by every
// watcher, and the first lines of an exception say what a user needs.
const maxCause = 1024

// failureCause is what a failed driver's termination message says went wrong. The driver Pod
// falls back to the end of its log (FallbackToLogsOnError), where Spark leaves the reason among
// shutdown lines: the JVM's uncaught exception and its root cause, spark-submit's "Error:" line,
// or a Python traceback's last line. A message the application wrote itself, with no log lines
// in it, is kept as it is. Empty when a log tail names no cause.
func failureCause(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	var exception, rootCause, submitError, pythonError, lastError string
	inTraceback, logLike := false, false
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimRight(line, "\r \t")
		if sparkLogLine.MatchString(line) {
			logLike, inTraceback = true, false
			if _, rest, ok := strings.Cut(line, " ERROR "); ok {
				lastError = rest
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "Exception in thread "):
			if _, after, ok := strings.Cut(line, `" `); ok && exception == "" {
				exception = after
			}
			logLike = true
		case strings.HasPrefix(line, "Caused by: ") && exception != "":
			rootCause = strings.TrimPrefix(line, "Caused by: ")
		case strings.HasPrefix(line, "Error: "):
			submitError = strings.TrimPrefix(line, "Error: ")
			logLike = true
		case strings.HasPrefix(line, "Traceback (most recent call last)"):
			inTraceback, logLike = true, true
		case inTraceback && pythonException.MatchString(line):
			pythonError = line
		}
	}
	var cause string
	switch {
	case exception != "" && rootCause != "" && rootCause != exception:
		cause = exception + "; caused by " + rootCause
	case exception != "":
		cause = exception
	case pythonError != "":
		cause = pythonError
	case submitError != "":
		cause = submitError
	case !logLike:
		cause = msg
	default:
		cause = lastError
	}
	return boundCause(cause)
}

var (
	// sparkLogLine is a line of Spark's default log4j layout: "yy/MM/dd HH:mm:ss LEVEL ...".
	sparkLogLine = regexp.MustCompile(`^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} [A-Z]+ `)
	// pythonException is a traceback's closing line: "ValueError: ...", "py4j.protocol.Py4JJavaError: ...".
	pythonException = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b(: .*)?$`)
)

// infraReason names the failure of a Pod whose Spark container never ran.
func infraReason(pod *podView) string {
	if isDisrupted(pod) || pod.Status.Reason == "NodeLost" || pod.Status.Reason == "Shutdown" || pod.Status.Reason == "Terminated" {
		return ReasonNodeLost
	}
	if pod.Status.Reason == "Evicted" {
		return ReasonEvicted
	}
	return ReasonAppFailed
}

// isDisrupted reports the DisruptionTarget condition the kubelet, the node lifecycle controller
// or preemption set before they kill a Pod.
func isDisrupted(pod *podView) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func disruptionMessage(pod *podView) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

func failedInitContainer(statuses []corev1.ContainerStatus) string {
	for i := range statuses {
		if t := statuses[i].State.Terminated; t != nil && t.ExitCode != 0 {
			msg := fmt.Sprintf("init container %s failed with exit code %d", statuses[i].Name, t.ExitCode)
			if t.Reason != "" {
				msg += ", reason " + t.Reason
			}
			return msg
		}
	}
	return ""
}

func findContainer(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	// A user who renamed the container still has one main container.
	if len(statuses) == 1 {
		return &statuses[0]
	}
	return nil
}

// executorState maps an executor Pod's phase to the status value.
func executorState(pod *podView) v1beta2.ExecutorState {
	switch pod.Status.Phase {
	case corev1.PodPending:
		return v1beta2.ExecutorStatePending
	case corev1.PodRunning:
		return v1beta2.ExecutorStateRunning
	case corev1.PodSucceeded:
		return v1beta2.ExecutorStateCompleted
	case corev1.PodFailed:
		return v1beta2.ExecutorStateFailed
	default:
		return v1beta2.ExecutorStateUnknown
	}
}
