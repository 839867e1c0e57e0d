package apacheapp

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// historyLimit bounds the entries of one attempt's stateTransitionHistory: an application whose
// executors come and go for days would otherwise grow its object with every change.
const historyLimit = 20

// The core's condition types and reasons read here (internal/sparkapp's).
const (
	condDriverStarted   = "DriverStarted"
	condDriverReady     = "DriverReady"
	condDriverRequested = "DriverRequested"
	condTimedOut        = "TimedOut"
	condFailed          = "Failed"
	reasonInvalidSpec   = "InvalidSpec"
	reasonBuildFailed   = "BuildFailed"
)

// rank orders the states of an attempt's start: a sync that finds the attempt further on
// records the states in between, as Apache records every state its reconcile passes.
var rank = map[string]int{
	sparkv1.AppSubmitted:                          0,
	sparkv1.AppScheduledToRestart:                 0,
	sparkv1.AppDriverRequested:                    1,
	sparkv1.AppDriverStarted:                      2,
	sparkv1.AppDriverReady:                        3,
	sparkv1.AppInitializedBelowThresholdExecutors: 4,
	sparkv1.AppRunningHealthy:                     5,
	sparkv1.AppRunningWithPartialCapacity:         5,
	sparkv1.AppRunningWithBelowThresholdExecutors: 5,
}

// passed are the states recorded on the way to a later one, by rank.
var passed = map[int]string{1: sparkv1.AppDriverRequested, 2: sparkv1.AppDriverStarted, 3: sparkv1.AppDriverReady}

// stopping are Apache's states of an attempt that has stopped and whose resources are not yet
// released or retained.
var stopping = map[string]bool{
	sparkv1.AppDriverStartTimedOut: true, sparkv1.AppExecutorsStartTimedOut: true, sparkv1.AppDriverReadyTimedOut: true,
	sparkv1.AppSucceeded: true, sparkv1.AppFailed: true, sparkv1.AppSchedulingFailure: true, sparkv1.AppDriverEvicted: true,
}

// teller tells the core's answer in Apache's terms.
type teller struct {
	app      *sparkv1.SparkApplication
	req      *metacontroller.SyncRequest
	core     *v1beta2.SparkApplicationStatus // the core's answered status
	now      time.Time
	children []any // the answered children
}

// status is the answered Apache status: the observed one moved on to the state the core's
// answer stands for.
func (t *teller) status() sparkv1.ApplicationStatus {
	st := *t.app.Status.DeepCopy()
	st.ObservedGeneration = t.app.Generation
	st.Conditions = t.core.Conditions
	attempt := *t.core.DeepCopy()
	attempt.Conditions = nil
	st.Attempt = &attempt
	if st.CurrentState.CurrentStateSummary == "" {
		// A new application is Submitted from its creation, as in Apache.
		at := t.app.CreationTimestamp.Time
		if at.IsZero() {
			at = t.now
		}
		st.CurrentAttemptSummary = &sparkv1.ApplicationAttemptSummary{}
		st.StateTransitionHistory = nil
		t.enter(&st, sparkv1.AppSubmitted, "the application was created", at)
	}
	if st.CurrentAttemptSummary == nil {
		st.CurrentAttemptSummary = &sparkv1.ApplicationAttemptSummary{}
	}
	for _, s := range t.path(&st) {
		t.enter(&st, s.state, s.message, t.dated(s.state))
	}
	return st
}

// dated is when the application entered state: the instant the core recorded for that step
// where it has one, so that a sync repeated on a stale read writes the same history.
func (t *teller) dated(state string) time.Time {
	var from time.Time
	cond := func(typ string) {
		if c := meta.FindStatusCondition(t.core.Conditions, typ); c != nil && c.Status == metav1.ConditionTrue {
			from = c.LastTransitionTime.Time
		}
	}
	switch {
	case state == sparkv1.AppDriverRequested:
		// Not the condition's time: it stays True from one attempt to the next.
		from = t.core.LastSubmissionAttemptTime.Time
	case state == sparkv1.AppDriverStarted:
		cond(condDriverStarted)
	case state == sparkv1.AppDriverReady:
		cond(condDriverReady)
	case stopping[state]:
		from = t.core.TerminationTime.Time
	}
	if from.IsZero() || from.After(t.now) {
		return t.now
	}
	return from
}

// finalize records the release of a deleted application's resources.
func (t *teller) finalize(st *sparkv1.ApplicationStatus) {
	if st.CurrentState.CurrentStateSummary != sparkv1.AppResourceReleased {
		t.enter(st, sparkv1.AppResourceReleased, "the application is being deleted: its resources are released", t.now)
	}
}

type step struct{ state, message string }

// path is the states the core's answer moves the application through, from its current one.
func (t *teller) path(st *sparkv1.ApplicationStatus) []step {
	cur := st.CurrentState.CurrentStateSummary
	core := t.core
	msg := core.AppState.ErrorMessage
	switch core.AppState.State {
	case v1beta2.ApplicationStateNew:
		return nil
	case v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateSucceeding:
		if stopping[cur] || cur == sparkv1.AppResourceReleased || cur == sparkv1.AppTerminatedWithoutReleaseResources {
			// The core started a new attempt (an edited spec) without a sync in between.
			return append([]step{{sparkv1.AppScheduledToRestart, "a new attempt starts"}}, t.starting(sparkv1.AppScheduledToRestart)...)
		}
		return t.starting(cur)
	case v1beta2.ApplicationStateUnknown:
		return nil // the driver's node does not answer: the state stays until it does
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
		return t.stopped(cur, t.stopState(), msg, final)
	case v1beta2.ApplicationStateFailing:
		return t.stopped(cur, t.stopState(), msg, restart)
	case v1beta2.ApplicationStatePendingRerun:
		state := sparkv1.AppSucceeded
		if meta.IsStatusConditionFalse(core.Conditions, condFailed) {
			state = t.stopState()
		}
		return t.stopped(cur, state, msg, restart)
	case v1beta2.ApplicationStateFailedSubmission:
		if c := meta.FindStatusCondition(core.Conditions, condDriverRequested); c != nil && (c.Reason == reasonInvalidSpec || c.Reason == reasonBuildFailed) {
			// Nothing was created: there is nothing to release, and nothing runs until the
			// spec changes.
			return t.stopped(cur, sparkv1.AppFailed, msg, final)
		}
		if meta.IsStatusConditionFalse(core.Conditions, condFailed) {
			return t.stopped(cur, sparkv1.AppSchedulingFailure, msg, restart)
		}
		return t.stopped(cur, sparkv1.AppSchedulingFailure, msg, undecided)
	case v1beta2.ApplicationStateInvalidating:
		if cur == sparkv1.AppScheduledToRestart {
			return nil
		}
		return []step{{sparkv1.AppScheduledToRestart, "the spec changed: the attempt is given up and a new one starts with the new spec"}}
	}
	return nil // suspension: this API version has no spec.suspend, and Kueue is refused
}

// starting is the way from cur to where the core's running attempt is.
func (t *teller) starting(cur string) []step {
	core := t.core
	target, msg := sparkv1.AppDriverRequested, "the driver Pod is requested"
	switch {
	case meta.IsStatusConditionTrue(core.Conditions, condDriverReady):
		target, msg = t.running(cur)
	case meta.IsStatusConditionTrue(core.Conditions, condDriverStarted):
		target, msg = sparkv1.AppDriverStarted, "the driver has started"
	}
	from, ok := rank[cur]
	if !ok {
		from = -1
	}
	to := rank[target]
	if target == cur || to < from && to < rank[sparkv1.AppDriverReady] {
		return nil // no way back before the driver is ready within an attempt
	}
	var out []step
	for r := from + 1; r < to; r++ {
		if s, ok := passed[r]; ok {
			out = append(out, step{s, passedMessage[s]})
		}
	}
	return append(out, step{target, msg})
}

var passedMessage = map[string]string{
	sparkv1.AppDriverRequested: "the driver Pod is requested",
	sparkv1.AppDriverStarted:   "the driver has started",
	sparkv1.AppDriverReady:     "the driver is ready",
}

// running is the state of an attempt whose driver is ready, by the executor thresholds of
// instanceConfig, counted on the ready executor Pods of the attempt.
func (t *teller) running(cur string) (string, string) {
	var ic sparkv1.ExecutorInstanceConfig
	if tol := t.app.Spec.ApplicationTolerations; tol != nil && tol.InstanceConfig != nil {
		ic = *tol.InstanceConfig
	}
	startingUp := rank[cur] < rank[sparkv1.AppRunningHealthy]
	if ic.InitExecutors == 0 || (!startingUp && ic.MinExecutors == 0) {
		return sparkv1.AppRunningHealthy, "the application is running"
	}
	n := t.readyExecutors()
	counted := fmt.Sprintf("%d executors ready (initExecutors %d, minExecutors %d, maxExecutors %d)", n, ic.InitExecutors, ic.MinExecutors, ic.MaxExecutors)
	healthy := func() (string, string) {
		if !dynamicAllocation(t.app) && ic.MaxExecutors > 0 && n < ic.MaxExecutors {
			return sparkv1.AppRunningWithPartialCapacity, "running below maxExecutors: " + counted
		}
		return sparkv1.AppRunningHealthy, "the application is running: " + counted
	}
	if startingUp {
		switch {
		case n >= ic.InitExecutors:
			return healthy()
		case n > 0:
			return sparkv1.AppInitializedBelowThresholdExecutors, "fewer executors than initExecutors are ready: " + counted
		}
		return sparkv1.AppDriverReady, "the driver is ready; waiting for executors: " + counted
	}
	if n >= ic.MinExecutors {
		return healthy()
	}
	return sparkv1.AppRunningWithBelowThresholdExecutors, "fewer executors than minExecutors are ready: " + counted
}

// readyExecutors counts the ready executor Pods of the current attempt.
func (t *teller) readyExecutors() int64 {
	appID := t.core.SparkApplicationID
	var n int64
	for _, name := range t.req.Related.Names(keyPod) {
		var pod struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Status   corev1.PodStatus  `json:"status"`
		}
		if ok, err := t.req.Related.Decode(keyPod, name, &pod); !ok || err != nil {
			continue // the core read every related Pod already, and refused what it could not
		}
		if pod.Metadata.Labels[sparkpod.LabelSparkRole] != sparkpod.RoleExecutor || pod.Metadata.Labels[sparkpod.LabelAppSelector] != appID {
			continue
		}
		if pod.Status.Phase == corev1.PodRunning && podReady(&pod.Status) {
			n++
		}
	}
	return n
}

var keyPod = metacontroller.Key("Pod", "v1")

func podReady(st *corev1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func dynamicAllocation(app *sparkv1.SparkApplication) bool {
	return strings.EqualFold(strings.TrimSpace(app.Spec.SparkConf["spark.dynamicAllocation.enabled"]), "true")
}

// stopState names how the core's attempt stopped, in Apache's terms.
func (t *teller) stopState() string {
	conds := t.core.Conditions
	if c := meta.FindStatusCondition(conds, condTimedOut); c != nil && c.Status == metav1.ConditionTrue {
		switch c.Reason {
		case sparkapp.ReasonDriverStartTimeout, sparkapp.ReasonDriverReadyTimeout, sparkapp.ReasonExecutorsTimeout:
			return c.Reason // the core names its timeouts as Apache names the states
		}
	}
	if t.core.AppState.State == v1beta2.ApplicationStateCompleted {
		return sparkv1.AppSucceeded
	}
	reason := ""
	if c := meta.FindStatusCondition(conds, condFailed); c != nil {
		reason = c.Reason
		if c.Status == metav1.ConditionFalse {
			// A retry is scheduled: the condition's message starts with the failure's reason.
			reason, _, _ = strings.Cut(c.Message, ":")
		}
	}
	switch reason {
	case sparkapp.ReasonEvicted:
		return sparkv1.AppDriverEvicted
	case sparkapp.ReasonDriverNotCreated:
		return sparkv1.AppSchedulingFailure
	}
	return sparkv1.AppFailed
}

// next is what the core decided follows a stopped attempt.
type next int

const (
	undecided next = iota // a driver Pod that never appeared: retry or not is the next sync's
	restart               // a retry is scheduled
	final                 // the last attempt: its resources are released or retained
)

// stopped is the way from cur to a stopped attempt: the stopping state, then what follows it.
func (t *teller) stopped(cur, state, msg string, then next) []step {
	switch {
	case cur == sparkv1.AppResourceReleased:
		return nil
	case cur == sparkv1.AppTerminatedWithoutReleaseResources:
		if then == final && !t.anyKept() {
			return []step{{sparkv1.AppResourceReleased, "the retain duration has passed: the attempt's resources are released"}}
		}
		return nil
	case cur == sparkv1.AppScheduledToRestart && then == restart:
		return nil // waiting out the back-off
	}
	var out []step
	if r, inChain := rank[cur]; inChain && r < rank[sparkv1.AppDriverStarted] && meta.IsStatusConditionTrue(t.core.Conditions, condDriverStarted) {
		// The driver started and stopped between two syncs.
		out = append(out, t.starting(cur)...)
	}
	if msg == "" {
		msg = stopMessage[state]
	}
	if cur != state {
		out = append(out, step{state, msg})
	}
	switch then {
	case restart:
		out = append(out, step{sparkv1.AppScheduledToRestart, "the attempt stopped; the restart policy starts another"})
	case final:
		if !t.anyKept() {
			out = append(out, step{sparkv1.AppResourceReleased, "the attempt's resources are released"})
		} else if t.retained() {
			out = append(out, step{sparkv1.AppTerminatedWithoutReleaseResources, "the driver and its resources are kept by resourceRetainPolicy"})
		}
	}
	return out
}

var stopMessage = map[string]string{
	sparkv1.AppSucceeded:              "the driver completed",
	sparkv1.AppFailed:                 "the driver failed",
	sparkv1.AppDriverEvicted:          "the driver Pod was evicted",
	sparkv1.AppSchedulingFailure:      "the driver Pod was not created",
	sparkv1.AppDriverStartTimedOut:    "the driver did not start in time",
	sparkv1.AppDriverReadyTimedOut:    "the driver was not ready in time",
	sparkv1.AppExecutorsStartTimedOut: "the executors did not start in time",
}

// anyKept is true when the answer keeps any child: the release of a stopped attempt is over
// once it keeps none.
func (t *teller) anyKept() bool { return len(t.children) > 0 }

// retained is true when the retain policy in force keeps the last attempt's resources.
func (t *teller) retained() bool {
	policy, _ := sparkv1.EffectiveRetainPolicy(t.app, t.core.TerminationTime, metav1.NewTime(t.now))
	switch policy {
	case v1beta2.ResourceRetainPolicyAlways:
		return true
	case v1beta2.ResourceRetainPolicyOnFailure:
		return t.core.AppState.State == v1beta2.ApplicationStateFailed
	}
	return false
}

// enter records state as the current one. Entering ScheduledToRestart starts the next attempt:
// the counters move on, and the finished attempt's history moves to previousAttemptSummary.
func (t *teller) enter(st *sparkv1.ApplicationStatus, state, msg string, at time.Time) {
	if st.CurrentState.CurrentStateSummary == state {
		return
	}
	prev := st.CurrentState.CurrentStateSummary
	if since, err := time.Parse(time.RFC3339, st.CurrentState.LastTransitionTime); err == nil && at.Before(since) {
		at = since // never before the state it follows
	}
	next := sparkv1.ApplicationState{CurrentStateSummary: state, LastTransitionTime: at.UTC().Format(time.RFC3339), Message: truncate(msg)}
	if stopping[state] && state != sparkv1.AppSucceeded {
		next.LastObservedDriverStatus = t.driverStatus()
	}
	keys := historyKeys(st.StateTransitionHistory)
	key := 0
	if len(keys) > 0 {
		key = keys[len(keys)-1] + 1
	}
	if state == sparkv1.AppScheduledToRestart && prev != "" {
		cur := st.CurrentAttemptSummary
		info := cur.AttemptInfo
		st.PreviousAttemptSummary = &sparkv1.ApplicationAttemptSummary{AttemptInfo: info, StateTransitionHistory: st.StateTransitionHistory}
		failure := prev != sparkv1.AppSucceeded && stopping[prev]
		info.ID++
		info.RestartCounter++
		info.FailureRestartCounter = counter(failure, info.FailureRestartCounter)
		info.SchedulingFailureRestartCounter = counter(prev == sparkv1.AppSchedulingFailure, info.SchedulingFailureRestartCounter)
		st.CurrentAttemptSummary = &sparkv1.ApplicationAttemptSummary{AttemptInfo: info}
		st.StateTransitionHistory = nil
	}
	if st.StateTransitionHistory == nil {
		st.StateTransitionHistory = map[string]sparkv1.ApplicationState{}
	}
	st.StateTransitionHistory[strconv.Itoa(key)] = next
	for _, k := range historyKeys(st.StateTransitionHistory) {
		if len(st.StateTransitionHistory) <= historyLimit {
			break
		}
		delete(st.StateTransitionHistory, strconv.Itoa(k))
	}
	st.CurrentState = next
}

func counter(bump bool, n int64) int64 {
	if bump {
		return n + 1
	}
	return 0
}

// driverStatus is the observed driver Pod's status, for a state the driver caused.
func (t *teller) driverStatus() *corev1.PodStatus {
	var pod struct {
		Status corev1.PodStatus `json:"status"`
	}
	name := sparkv1.DriverPodName(t.app)
	if ok, err := t.req.Children.Decode(keyPod, name, &pod); !ok || err != nil {
		return nil
	}
	return &pod.Status
}

// historyKeys are the history's keys in numeric order; keys that are not numbers (an edited
// status) are left out.
func historyKeys[V any](h map[string]V) []int {
	keys := make([]int, 0, len(h))
	for k := range h {
		if n, err := strconv.Atoi(k); err == nil {
			keys = append(keys, n)
		}
	}
	sort.Ints(keys)
	return keys
}

const maxMessage = 4096

func truncate(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage]
	}
	return s
}
