package sparkapp

import (
	"encoding/json"
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
	ReasonPreempted           = "DriverPreempted"
	ReasonJVMOutOfMemory      = "DriverJVMOutOfMemory"
	ReasonInitContainerFailed = "InitContainerFailed"
	ReasonImagePull           = "ImagePullFailed"
	ReasonInvalidImage        = "InvalidImageName"
	ReasonContainerConfig     = "CreateContainerConfigError"
	ReasonDriverMissing       = "DriverPodMissing"
	ReasonDriverNotCreated    = "DriverPodNotCreated"
	// ReasonServiceAccountNotFound, ReasonPriorityClassNotFound and ReasonPodSecurity: what
	// admission refuses about a driver Pod, seen before it is asked for.
	ReasonServiceAccountNotFound = "ServiceAccountNotFound"
	ReasonPriorityClassNotFound  = "PriorityClassNotFound"
	ReasonPodSecurity            = "PodSecurityViolation"
	ReasonDriverStartTimeout     = "DriverStartTimedOut"
	ReasonDriverReadyTimeout     = "DriverReadyTimedOut"
	ReasonExecutorsTimeout       = "ExecutorsStartTimedOut"
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
	waiting   string    // the Spark container's waiting reason while Pending, or Unschedulable
	waitingOn string    // its waiting message, or the scheduler's
	// unscheduled is true when waiting is the scheduler's reason, not the container's.
	unscheduled bool
}

// observeDriver reads the driver Pod; raw is its JSON, read again only for what podView leaves
// out (the memory limit of an OOMKilled container).
func observeDriver(pod *podView, raw json.RawMessage) driverObservation {
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
		switch {
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
			o.ready = c.LastTransitionTime.Time
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && o.waiting == "":
			// A Pod the scheduler cannot place has no container status yet; its reason
			// (Unschedulable, SchedulingGated) and message ("0/3 nodes are available: 3
			// Insufficient cpu") are what a user waiting on it needs.
			o.waiting, o.waitingOn, o.unscheduled = c.Reason, c.Message, true
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
			o.terminated(pod, raw, spark)
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
			o.terminated(pod, raw, spark)
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
func (o *driverObservation) terminated(pod *podView, raw json.RawMessage, spark *corev1.ContainerStatus) {
	t := spark.State.Terminated
	switch {
	case t.ExitCode == 0:
		o.state = v1beta2.DriverStateCompleted
	case t.Reason == "OOMKilled":
		o.state, o.reason = v1beta2.DriverStateFailed, ReasonOOMKilled
		o.message = oomKilledMessage("driver container", "driver", t.ExitCode, memoryLimit(raw, spark.Name))
	case pod.Status.Reason == "Evicted":
		o.state, o.reason = v1beta2.DriverStateFailed, ReasonEvicted
		o.message = fmt.Sprintf("driver Pod evicted (exit code %d): %s", t.ExitCode, pod.Status.Message)
	case isDisrupted(pod):
		o.state, o.reason = v1beta2.DriverStateFailed, disruptionReason(pod)
		o.message = fmt.Sprintf("driver Pod was disrupted (exit code %d): %s", t.ExitCode, disruptionMessage(pod))
	default:
		o.state, o.reason = v1beta2.DriverStateFailed, ReasonAppFailed
		o.message = fmt.Sprintf("driver container failed with exit code %d", t.ExitCode)
		if t.Reason != "" {
			o.message += ", reason " + t.Reason
		}
		cause := exitExceptionCause(pod.Metadata.Annotations.ExitException)
		if cause == "" {
			cause = failureCause(t.Message)
		}
		if cause != "" {
			o.message += ": " + cause
		}
		if isJVMOutOfMemory(cause) {
			o.reason = ReasonJVMOutOfMemory
			o.message += "; raise spec.driver.memory (spark.driver.memory), the driver's JVM heap"
		}
	}
}

// oomKilledMessage explains a container the kernel killed at its memory limit, and what to
// raise: Spark sets the limit to the heap plus the overhead, and the overhead is what memory
// outside the JVM heap (Python workers, off-heap buffers, native libraries) lives in.
func oomKilledMessage(what, role string, exitCode int32, limit string) string {
	at := "its memory limit"
	if limit != "" {
		at += " of " + limit
	}
	return fmt.Sprintf("%s was killed for exceeding %s (OOMKilled, exit code %d): raise spec.%s.memoryOverhead if the memory outside the JVM heap grew (Python, off-heap, native libraries), else spec.%s.memory",
		what, at, exitCode, role, role)
}

// memoryLimit reads a container's memory limit from a Pod's JSON, which podView leaves out to
// keep decoding a thousand executors cheap: it is read only for a container that was
// OOMKilled. Empty when unknown.
func memoryLimit(raw json.RawMessage, container string) string {
	var pod struct {
		Spec struct {
			Containers []struct {
				Name      string `json:"name"`
				Resources struct {
					Limits corev1.ResourceList `json:"limits"`
				} `json:"resources"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &pod) != nil {
		return ""
	}
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && (c.Name == container || len(pod.Spec.Containers) == 1) {
			return q.String()
		}
	}
	return ""
}

// isJVMOutOfMemory is true for a cause that is the JVM running out of heap (or of the memory
// it was allowed for something else: metaspace, direct buffers, native threads).
func isJVMOutOfMemory(cause string) bool {
	return strings.Contains(cause, jvmOutOfMemory)
}

const jvmOutOfMemory = "java.lang.OutOfMemoryError"

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
// or a Python traceback's last line (with the Java exception py4j carried, on the line after a
// Py4JJavaError). A java.lang.OutOfMemoryError wins wherever it is, since it sits above a
// long stack trace and is what a user must act on. A message the application wrote itself, with
// no log lines in it, is kept as it is. Empty when a log tail names no cause.
func failureCause(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	var exception, rootCause, submitError, pythonError, javaCause, outOfMemory, lastError string
	inTraceback, logLike, afterPy4J := false, false, false
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimRight(line, "\r \t")
		if outOfMemory == "" {
			outOfMemory = outOfMemoryLine(line)
		}
		if sparkLogLine.MatchString(line) {
			logLike, inTraceback, afterPy4J = true, false, false
			if _, rest, ok := strings.Cut(line, " ERROR "); ok {
				lastError = rest
			}
			continue
		}
		switch {
		case afterPy4J && strings.HasPrefix(line, ": "):
			// py4j puts the Java exception on the line after its own: ": java.lang...".
			javaCause = strings.TrimPrefix(line, ": ")
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
			pythonError, javaCause = line, ""
		}
		afterPy4J = strings.HasPrefix(line, py4jError)
	}
	var cause string
	switch {
	case outOfMemory != "" && pythonError != "" && strings.HasPrefix(pythonError, py4jError):
		cause = pythonError + "; caused by " + outOfMemory
	case outOfMemory != "":
		cause = outOfMemory
	case exception != "" && rootCause != "" && rootCause != exception:
		cause = exception + "; caused by " + rootCause
	case exception != "":
		cause = exception
	case pythonError != "" && javaCause != "":
		cause = pythonError + "; caused by " + javaCause
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

// py4jError starts the last line of a traceback whose cause is a Java exception.
const py4jError = "py4j.protocol.Py4JJavaError"

// outOfMemoryLine is the exception of a line that reports a java.lang.OutOfMemoryError, the
// way the JVM, "Caused by:" or py4j prints it; empty for any other line.
func outOfMemoryLine(line string) string {
	i := strings.Index(line, jvmOutOfMemory)
	if i < 0 || strings.HasPrefix(strings.TrimSpace(line), "at ") {
		return ""
	}
	return line[i:]
}

var (
	// sparkLogLine is a line of Spark's default log4j layout: "yy/MM/dd HH:mm:ss LEVEL ...".
	sparkLogLine = regexp.MustCompile(`^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} [A-Z]+ `)
	// pythonException is a traceback's closing line: "ValueError: ...", "py4j.protocol.Py4JJavaError: ...".
	pythonException = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b(: .*)?$`)
)

// infraReason names the failure of a Pod whose Spark container never ran.
func infraReason(pod *podView) string {
	if isDisrupted(pod) {
		return disruptionReason(pod)
	}
	if pod.Status.Reason == "NodeLost" || pod.Status.Reason == "Shutdown" || pod.Status.Reason == "Terminated" {
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

// disruptionReason tells a preemption (by kube-scheduler for a Pod of higher priority) from
// the other disruptions, which come with the node.
func disruptionReason(pod *podView) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Reason == "PreemptionByScheduler" {
			return ReasonPreempted
		}
	}
	return ReasonNodeLost
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
func executorState(phase corev1.PodPhase) v1beta2.ExecutorState {
	switch phase {
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
