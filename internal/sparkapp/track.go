package sparkapp

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// track follows a submitted attempt through its driver Pod.
func (d *decider) track() {
	pod, observed := d.currentDriver(), d.in.children
	if pod == nil {
		if pod = d.releasedDriver(); pod != nil {
			observed = d.in.related
		}
	}
	if pod == nil {
		d.driverAbsent()
		return
	}
	d.followKubeflowDriver(pod, pod != d.in.kubeflowDriver)
	d.removeCondition(condDriverMissing)
	obs := observeDriver(pod, observed[keyPod][pod.Metadata.Name])
	if obs.state != v1beta2.DriverStatePending {
		d.refreshUIAddress()
	}
	switch obs.state {
	case v1beta2.DriverStatePending:
		d.driverPending(obs)
	case v1beta2.DriverStateRunning:
		d.driverRunning(obs)
	case v1beta2.DriverStateCompleted:
		d.attemptSucceeded(obs.finished)
		d.trackExecutors(time.Time{})
	case v1beta2.DriverStateFailed:
		d.attemptFailed(obs.reason, obs.message, obs.finished)
		d.trackExecutors(time.Time{})
	default:
		d.setState(v1beta2.ApplicationStateUnknown, "the driver Pod's phase is Unknown: its node stopped reporting")
		d.activeChildren(true)
	}
}

// refreshUIAddress fills in the UI Service's cluster address, allocated after the submission,
// once the driver has started: the UI is reachable only then, and reporting it earlier would
// cost a status write of its own.
func (d *decider) refreshUIAddress() {
	info := &d.status.DriverInfo
	if info.WebUIAddress != "" || info.WebUIServiceName == "" || info.WebUIPort == 0 {
		return
	}
	if ip := d.in.serviceClusterIP(info.WebUIServiceName); ip != "" && ip != "None" {
		info.WebUIAddress = fmt.Sprintf("%s:%d", ip, info.WebUIPort)
	}
}

// currentDriver is the observed driver Pod of the current submission.
func (d *decider) currentDriver() *podView {
	for _, pod := range d.in.drivers {
		if d.status.SubmissionID != "" && pod.Metadata.Labels.SubmissionID == d.status.SubmissionID {
			return pod
		}
	}
	return nil
}

// driverAbsent handles an active attempt whose driver Pod is not among the children: not yet
// created, or gone. The hook does not record that a Pod was seen Pending, since that would
// cost a status write on every application; so a driver that has not started is given the
// submission grace to appear, as if it had never been created.
func (d *decider) driverAbsent() {
	notStarted := d.status.AppState.State == v1beta2.ApplicationStateSubmitted
	if notStarted {
		if objs := d.currentObjects(); objs != nil {
			if r := d.predictRefusal(objs.DriverPod); r != nil {
				if !d.now.Before(r.from) {
					d.refuseSubmission(r)
					return
				}
				d.wakeAt(r.from)
			}
		}
		if due := d.status.LastSubmissionAttemptTime.Add(d.cfg.SubmissionGrace); d.now.Before(due) {
			d.activeChildren(true)
			d.wakeAt(due)
			return
		}
	}

	// A Pod that is missing may be one stale read away: believe it only after a grace period,
	// remembered in the DriverMissing condition.
	missing := d.condition(condDriverMissing)
	if missing == nil {
		d.setCondition(condDriverMissing, metav1.ConditionTrue, ReasonDriverMissing,
			fmt.Sprintf("driver Pod %s is not observed", d.status.DriverInfo.PodName), d.now)
		missing = d.condition(condDriverMissing)
	}
	since := missing.LastTransitionTime.Time
	if due := since.Add(d.cfg.MissingDriverGrace); d.now.Before(due) {
		d.activeChildren(false)
		d.wakeAt(due)
		return
	}
	if notStarted {
		d.status.ExecutionAttempts = max(d.status.ExecutionAttempts-1, 0)
		msg := fmt.Sprintf("driver Pod %s was not created, or was removed before it started, within %s of the submission; what the hooks cannot see may have refused it: %s (look for Metacontroller's SyncError events on the SparkApplication and the events of namespace %s)",
			d.status.DriverInfo.PodName, d.cfg.SubmissionGrace, d.unseenCauses(), d.in.app.Namespace)
		d.setState(v1beta2.ApplicationStateFailedSubmission, msg)
		d.setCondition(condDriverRequested, metav1.ConditionFalse, ReasonDriverNotCreated, msg, d.now)
		d.submissionFailed()
		return
	}
	d.attemptFailed(ReasonDriverMissing,
		fmt.Sprintf("driver Pod %s disappeared while the application ran (deleted by hand, or lost with its node)", d.status.DriverInfo.PodName), since)
	d.trackExecutors(time.Time{})
}

// driverNotStarted sets the start-up conditions of a driver that has not started, the same
// whether its Pod is requested, observed Pending or creating its containers, so that these
// steps cost no status write.
func (d *decider) driverNotStarted() {
	d.setCondition(condDriverStarted, metav1.ConditionFalse, "Pending", "the driver Pod is waiting to be created, scheduled and started", d.now)
	d.setCondition(condDriverReady, metav1.ConditionFalse, "DriverNotStarted", "the driver has not started", d.now)
}

// routineWaits are the container waiting reasons every driver passes through; any other is
// worth a status write to explain why the driver does not start.
var routineWaits = map[string]bool{"": true, "ContainerCreating": true, "PodInitializing": true}

func (d *decider) driverPending(obs driverObservation) {
	d.setState(v1beta2.ApplicationStateSubmitted, "")
	d.driverNotStarted()
	msg := "the driver Pod is waiting to be scheduled or started"
	if !routineWaits[obs.waiting] {
		msg = "the driver container is waiting: " + obs.waiting
		if obs.unscheduled {
			msg = "the driver Pod is not scheduled: " + obs.waiting
		}
		if obs.waitingOn != "" {
			msg += ": " + obs.waitingOn
		}
		d.setCondition(condDriverStarted, metav1.ConditionFalse, conditionReason(obs.waiting), msg, d.now)
	}

	created := obs.created
	if created.IsZero() {
		created = d.status.LastSubmissionAttemptTime.Time
	}
	switch obs.waiting {
	case "InvalidImageName":
		d.attemptFailed(ReasonInvalidImage, "the driver image name is invalid: "+obs.waitingOn, d.now)
		return
	case "ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError":
		due := created.Add(d.cfg.ImagePullGrace)
		if !d.now.Before(due) {
			kind := ReasonImagePull
			if obs.waiting == "CreateContainerConfigError" {
				kind = ReasonContainerConfig
			}
			d.attemptFailed(kind, fmt.Sprintf("the driver container could not start for %s: %s", d.cfg.ImagePullGrace, msg), d.now)
			return
		}
		d.wakeAt(due)
	}
	if t := d.timeouts().DriverStartSeconds; t != nil {
		due := created.Add(v1beta2.Seconds(*t))
		if !d.now.Before(due) {
			d.timedOut(ReasonDriverStartTimeout, fmt.Sprintf("the driver did not start within spec.timeouts.driverStartSeconds (%ds): %s", *t, msg))
			return
		}
		d.wakeAt(due)
	}
	d.activeChildren(true)
}

func (d *decider) driverRunning(obs driverObservation) {
	d.setState(v1beta2.ApplicationStateRunning, "")
	started := obs.started
	if started.IsZero() {
		started = d.now
	}
	d.setCondition(condDriverStarted, metav1.ConditionTrue, "Started", "the driver container started", started)
	if !obs.ready.IsZero() {
		d.setCondition(condDriverReady, metav1.ConditionTrue, "Ready", "the driver Pod is ready", obs.ready)
	} else {
		d.setCondition(condDriverReady, metav1.ConditionFalse, "NotReady", "the driver Pod is not ready", started)
		if t := d.timeouts().DriverReadySeconds; t != nil {
			due := started.Add(v1beta2.Seconds(*t))
			if !d.now.Before(due) {
				d.timedOut(ReasonDriverReadyTimeout, fmt.Sprintf("the driver was not ready within spec.timeouts.driverReadySeconds (%ds) of starting", *t))
				return
			}
			d.wakeAt(due)
		}
	}
	if d.trackExecutors(obs.ready) {
		return
	}
	d.activeChildren(true)
}

// timedOut fails the attempt because a start-up phase ran over its timeout.
func (d *decider) timedOut(reason, msg string) {
	d.setCondition(condTimedOut, metav1.ConditionTrue, reason, msg, d.now)
	d.attemptFailed(reason, msg, d.now)
}

func (d *decider) timeouts() v1beta2.SparkApplicationTimeouts {
	if t := d.spec.Spec.Timeouts; t != nil {
		return *t
	}
	return v1beta2.SparkApplicationTimeouts{}
}

// minExecutors is the number of running executors at which the application counts as fully
// started: executor.instances, or the dynamic allocation floor (at least one).
func (d *decider) minExecutors() int {
	spec := &d.spec.Spec
	if v1beta2.DynamicAllocationEnabled(spec) {
		n := int32(1)
		if da := spec.DynamicAllocation; da != nil {
			if da.MinExecutors != nil && *da.MinExecutors > n {
				n = *da.MinExecutors
			}
		}
		return int(n)
	}
	if spec.Executor.Instances != nil {
		return int(*spec.Executor.Instances)
	}
	return int(v1beta2.DefaultExecutorInstances)
}

// executorFloor is the number of running executors below which the application has lost some it
// still wants: executor.instances, or with dynamic allocation its minExecutors (none by default,
// as in Spark), under which dynamic allocation never releases executors.
func (d *decider) executorFloor() int {
	spec := &d.spec.Spec
	if v1beta2.DynamicAllocationEnabled(spec) {
		if da := spec.DynamicAllocation; da != nil && da.MinExecutors != nil {
			return int(*da.MinExecutors)
		}
		return 0
	}
	return d.minExecutors()
}

// trackExecutors refreshes executorState and the ExecutorsReady condition from the related
// executor Pods of the current attempt. driverReady, when set, starts the executors' start-up
// timeout; trackExecutors reports true when that timeout failed the attempt.
func (d *decider) trackExecutors(driverReady time.Time) bool {
	appID := d.status.SparkApplicationID
	if appID == "" {
		return false
	}
	limit := d.cfg.MaxTrackedExecutors
	prev := d.status.ExecutorState
	next := make(map[string]v1beta2.ExecutorState, min(len(d.in.execs), limit))
	var counts [5]int // by executorStateIndex
	total := 0
	var lastFailed *executorPod // in executor id order, the failed executor Pod started last
	disrupted := 0              // executor Pods not yet failed that the cluster is taking away
	for _, pod := range d.in.execs {
		if pod.appID != appID {
			continue
		}
		state := executorState(pod.phase)
		if state == v1beta2.ExecutorStateFailed && pod.stoppedByDeletion() {
			state = v1beta2.ExecutorStateCompleted
		}
		counts[executorStateIndex(state)]++
		total++
		if len(next) < limit {
			next[pod.name] = state
		}
		if state == v1beta2.ExecutorStateFailed {
			lastFailed = pod
		} else if pod.disrupted {
			disrupted++
		}
	}
	// Executors that were tracked and are gone keep an entry, settled by how the application
	// fared, so that the status tells what happened to each of them.
	for _, name := range sortedNames(prev) {
		if _, seen := next[name]; seen || len(next) >= limit {
			continue
		}
		if d.observedExecutor(name) {
			continue
		}
		state := prev[name]
		if state == v1beta2.ExecutorStatePending || state == v1beta2.ExecutorStateRunning || state == v1beta2.ExecutorStateUnknown {
			state = d.vanishedExecutorState()
		}
		next[name] = state
	}
	if len(next) == 0 {
		next = nil
	}
	d.status.ExecutorState = next
	if lastFailed != nil {
		d.executorFailed(lastFailed.full)
	}
	if !activeStates[d.status.AppState.State] {
		return false // settleConditions retires ExecutorsReady of an attempt that has ended
	}

	running := counts[executorStateIndex(v1beta2.ExecutorStateRunning)]
	want := d.minExecutors()
	msg := fmt.Sprintf("%d of %d executors running (%d pending, %d completed, %d failed)", running, want,
		counts[executorStateIndex(v1beta2.ExecutorStatePending)], counts[executorStateIndex(v1beta2.ExecutorStateCompleted)],
		counts[executorStateIndex(v1beta2.ExecutorStateFailed)])
	if total > limit {
		msg += fmt.Sprintf("; executorState lists %d of %d executors", limit, total)
	}
	if running >= want && running > 0 {
		d.setCondition(condExecutorsReady, metav1.ConditionTrue, "MinimumRunning", msg, d.now)
		return false
	}
	prevCond := d.condition(condExecutorsReady)
	if prevCond != nil && (prevCond.Status == metav1.ConditionTrue || prevCond.Reason == reasonExecutorsBelow) {
		// Below the floor is trouble only when executors were lost while the driver still
		// wants them; the driver stopping its own (exit 0, dynamic allocation, its shutdown)
		// leaves fewer running without a loss. BelowMinimum holds until the floor is back, so
		// a lost executor's Pod, deleted by the driver before its replacement appears, does
		// not make the loss look like a release.
		lost := counts[executorStateIndex(v1beta2.ExecutorStateFailed)] + disrupted
		wanted := counts[executorStateIndex(v1beta2.ExecutorStatePending)]
		if running < d.executorFloor() && (prevCond.Reason == reasonExecutorsBelow || lost > 0 || wanted > 0) {
			d.setCondition(condExecutorsReady, metav1.ConditionFalse, reasonExecutorsBelow, msg, d.now)
			return false
		}
		d.setCondition(condExecutorsReady, metav1.ConditionTrue, reasonExecutorsReleased, msg+"; the driver stopped the others", d.now)
		return false
	}
	d.setCondition(condExecutorsReady, metav1.ConditionFalse, reasonExecutorsStarting, msg, d.now)
	if t := d.timeouts().ExecutorsStartSeconds; t != nil && !driverReady.IsZero() {
		due := driverReady.Add(v1beta2.Seconds(*t))
		if !d.now.Before(due) {
			d.timedOut(ReasonExecutorsTimeout, fmt.Sprintf("executors did not start within spec.timeouts.executorsStartSeconds (%ds) of the driver being ready: %s", *t, msg))
			return true
		}
		d.wakeAt(due)
	}
	return false
}

func (d *decider) observedExecutor(name string) bool {
	for _, pod := range d.in.execs {
		if pod.name == name {
			return true
		}
	}
	return false
}

// vanishedExecutorState settles an executor whose Pod is gone, as the Kubeflow operator does.
func (d *decider) vanishedExecutorState() v1beta2.ExecutorState {
	switch d.status.AppState.State {
	case v1beta2.ApplicationStateCompleted:
		return v1beta2.ExecutorStateCompleted
	case v1beta2.ApplicationStateRunning:
		return v1beta2.ExecutorStateUnknown
	}
	return v1beta2.ExecutorStateFailed
}

func executorStateIndex(s v1beta2.ExecutorState) int {
	switch s {
	case v1beta2.ExecutorStatePending:
		return 0
	case v1beta2.ExecutorStateRunning:
		return 1
	case v1beta2.ExecutorStateCompleted:
		return 2
	case v1beta2.ExecutorStateFailed:
		return 3
	}
	return 4
}

// executorFailed reports why the last failed executor of the attempt failed, and how many
// failed, in the ExecutorFailed condition. The driver replaces lost executors itself, so this
// only explains; but the cause is lost with the Pod, which the driver deletes soon after.
func (d *decider) executorFailed(pod *podView) {
	failed := 0
	for _, state := range d.status.ExecutorState {
		if state == v1beta2.ExecutorStateFailed {
			failed++
		}
	}
	reason, cause := d.executorFailure(pod)
	counted := "1 executor of this attempt failed"
	if failed != 1 {
		counted = fmt.Sprintf("%d executors of this attempt failed", failed)
	}
	d.setCondition(condExecutorFailed, metav1.ConditionTrue, reason, counted+"; the last: "+cause, d.now)
}

// executorContainer is the name Spark gives the executor's main container.
const executorContainer = "spark-kubernetes-executor"

// executorFailure names why a failed executor Pod failed.
func (d *decider) executorFailure(pod *podView) (reason, cause string) {
	name := pod.Metadata.Name
	switch {
	case pod.Status.Reason == "Evicted":
		return "ExecutorEvicted", fmt.Sprintf("executor Pod %s was evicted: %s", name, pod.Status.Message)
	case isDisrupted(pod):
		reason := "ExecutorNodeLost"
		if disruptionReason(pod) == ReasonPreempted {
			reason = "ExecutorPreempted"
		}
		return reason, fmt.Sprintf("executor Pod %s was disrupted: %s", name, disruptionMessage(pod))
	}
	c := findContainer(pod.Status.ContainerStatuses, executorContainer)
	if c == nil || c.State.Terminated == nil {
		return "ExecutorFailed", fmt.Sprintf("executor Pod %s failed: %s %s", name, pod.Status.Reason, pod.Status.Message)
	}
	t := c.State.Terminated
	if t.Reason == "OOMKilled" {
		raw := d.in.related[keyPod][name]
		return "ExecutorOOMKilled", oomKilledMessage("executor Pod "+name, "executor", t.ExitCode, memoryLimit(raw, c.Name))
	}
	cause = fmt.Sprintf("executor Pod %s failed with exit code %d", name, t.ExitCode)
	if t.Reason != "" {
		cause += ", reason " + t.Reason
	}
	if why := failureCause(t.Message); why != "" {
		cause += ": " + why
	}
	return "ExecutorFailed", cause
}
