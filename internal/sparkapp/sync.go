package sparkapp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// decision is what one sync decided, for metrics: Sync reports it as a hook.Outcome.
type decision struct {
	From, To         v1beta2.ApplicationStateType
	Submitted        bool   // a new attempt was requested
	RestartReason    string // non-empty when an attempt was given up to run the application again
	ValidationFailed bool   // the spec did not validate
}

// maxMessage bounds errorMessage and condition messages: the status is written on every change
// and read by every watcher.
const maxMessage = 4096

// Hooks are the SparkApplication's hooks with the operator-wide settings cfg.
func Hooks(cfg Config) hook.Kind {
	return hook.Kind{
		Name: "sparkapplication",
		Sync: func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
			return Sync(req, now, cfg)
		},
		Finalize:  hook.Silent(Finalize),
		Customize: Customize,
	}
}

// Sync is the sync hook: the desired children, next status and resync delay of one
// SparkApplication, and the outcome that reports them. A finalizing request is answered as by
// Finalize.
func Sync(req *metacontroller.SyncRequest, now time.Time, cfg Config) (*metacontroller.SyncResponse, hook.Outcome, error) {
	if req != nil {
		if resp, o, handled, err := leaveToManager(req, req.Finalizing, now, cfg); handled {
			return resp, o, err
		}
	}
	in, err := decodeRequest(req)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	return decideSync(req, in, now, cfg)
}

// SyncTranslated is the sync hook of an application of another API translated into app (the
// Apache operator's, internal/apacheapp): the very decision Sync makes, on app instead of the
// request's parent. specErrs, when any, are the translation's refusals; like the parts of a
// spec that did not decode, they stand for the spec's validation.
func SyncTranslated(req *metacontroller.SyncRequest, app *v1beta2.SparkApplication, specErrs field.ErrorList, now time.Time, cfg Config) (*metacontroller.SyncResponse, hook.Outcome, error) {
	if req == nil || app == nil {
		return nil, hook.Outcome{}, metacontroller.RequestErrorf("empty request")
	}
	in, err := decodeObserved(req, app, specErrs)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	return decideSync(req, in, now, cfg)
}

// decideSync decides one decoded sync request.
func decideSync(req *metacontroller.SyncRequest, in *input, now time.Time, cfg Config) (*metacontroller.SyncResponse, hook.Outcome, error) {
	told := newTeller(in.app)
	if req.Finalizing {
		resp := finalize(in)
		st := in.app.Status.AppState.State
		return resp, outcome(told, decision{From: st, To: st}, &hook.Application{From: string(st), To: string(st)}, resp), nil
	}
	hold, err := cfg.Namespaces.notSelected(in)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	if hold != "" && in.app.Status.AppState.State == v1beta2.ApplicationStateNew && in.app.Status.SubmissionID == "" && in.observedCount() == 0 {
		resp := leftAlone(in, now, hold)
		return resp, outcome(told, decision{}, &hook.Application{}, resp), nil
	}
	d := newDecider(in, now, cfg)
	d.namespaceHold = hold
	if hold == "" && d.condition(condNamespaceSelected) != nil {
		d.removeCondition(condNamespaceSelected)
	}
	if err := d.decide(); err != nil {
		return nil, hook.Outcome{}, err
	}
	d.kueueConditions()
	d.kueueModeConflict()
	d.settleConditions()
	d.queueChildren()
	if err := d.checkLivePodsKept(); err != nil {
		return nil, hook.Outcome{}, err
	}
	resp := d.response()
	return resp, outcome(told, d.decision, d.metrics(), resp), nil
}

// decider carries one sync's inputs and the answer being built.
type decider struct {
	in      *input
	cfg     Config
	now     time.Time // truncated to seconds, the precision of every time in the status
	realNow time.Time
	spec    *v1beta2.SparkApplication // the parent, defaulted
	// knownSubmission is the submission the observed status accounts for.
	knownSubmission string
	invalid         string // validation message; empty when the spec is valid
	hash            string // of the stored spec, see specHash

	status   v1beta2.SparkApplicationStatus // next status; starts as the observed one
	children []any
	queue    *queue    // nil unless queued with Kueue
	workload any       // the Workload child of the answer, when the queue decided one
	deadline time.Time // nearest instant at which a decision changes by itself
	decision decision
	// failReason names the failure this sync decided, for the Failed condition.
	failReason string
	// retry says when the next attempt starts, when this sync scheduled a retry.
	retry string
	// namespaceHold says why the parent's namespace is not selected; empty when it is.
	namespaceHold string
	// current is the attempt currentObjects built last.
	current *builtAttempt
}

func newDecider(in *input, now time.Time, cfg Config) *decider {
	// The parent was decoded for this sync alone, so it is defaulted in place, after hashing
	// what the user wrote; the status is copied by value and only ever replaced field by field
	// (conditions are edited in place, and nothing reads the observed ones afterwards).
	hash := specHash(&in.app.Spec)
	errs := v1beta2.DefaultAndValidate(in.app)
	if len(in.specErrs) > 0 {
		// What the validation says of a value that did not decode would only confuse.
		errs = in.specErrs
	}
	d := &decider{
		in:      in,
		cfg:     cfg,
		now:     now.UTC().Truncate(time.Second),
		realNow: now,
		spec:    in.app,
		hash:    hash,
		status:  in.app.Status,
	}
	if len(errs) > 0 {
		d.invalid = errs.ToAggregate().Error()
	}
	d.status.ObservedGeneration = in.app.Generation
	d.decision.From = in.app.Status.AppState.State
	d.knownSubmission = in.app.Status.SubmissionID
	d.now = firstDecisionTime(in.app, d.now)
	d.queue = in.queue
	if d.queue == nil && !d.kueueJob() {
		if d.condition(condQueued) != nil {
			d.removeCondition(condQueued) // the label was removed, or the operator turned Kueue off
		}
	} else if d.invalid == "" {
		d.applyAdmission()
	}
	return d
}

// firstDecisionWindow is how long after its creation an application's first decision is dated
// at the creation.
const firstDecisionWindow = 10 * time.Second

// firstDecisionTime dates the decisions about a new application, which has no status yet, at
// its creation rather than at the sync, when the sync comes soon after it. Metacontroller may
// sync a new application again before its cache holds the first status write; that sync decides
// the very same first attempt, and dated by its own clock it would write other times over the
// first one's (and the next stale read would write them back). The creation time is the same
// for every such sync. A first sync long after the creation (sparkhooks or Metacontroller was
// down) is dated now, so the submission's grace period is not already spent.
func firstDecisionTime(app *v1beta2.SparkApplication, now time.Time) time.Time {
	if app.Status.AppState.State != v1beta2.ApplicationStateNew || app.Status.SubmissionID != "" {
		return now
	}
	created := app.CreationTimestamp.UTC().Truncate(time.Second)
	if created.IsZero() || created.After(now) || now.Sub(created) >= firstDecisionWindow {
		return now
	}
	return created
}

// specHash identifies the stored spec, minus the fields that change how a run is watched but
// not the run itself. It hashes what the user wrote, not the defaulted spec, so that a new
// sparkhooks release with new defaults does not restart every running application.
func specHash(spec *v1beta2.SparkApplicationSpec) string {
	s := *spec
	s.Suspend = nil
	s.TimeToLiveSeconds = nil
	s.RestartPolicy = v1beta2.RestartPolicy{}
	s.Timeouts = nil
	s.ResourceRetainPolicy = nil
	// The manager cannot change (only be written out or left to its default), and an
	// application this hook decides is ours either way.
	s.ManagedBy = nil
	b, err := json.Marshal(&s)
	if err != nil {
		// The spec was just decoded from JSON, so it encodes; an empty hash would only mean
		// "always changed", which is the safe side.
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func (d *decider) suspended() bool { return d.spec.Spec.Suspend != nil && *d.spec.Spec.Suspend }

// specChanged is true when a valid spec differs from the one the current attempt runs.
func (d *decider) specChanged() bool {
	if d.invalid != "" {
		return false
	}
	if submittedByKubeflow(&d.status) {
		return d.kubeflowSpecChanged()
	}
	return d.status.SubmittedSpecHash != "" && d.status.SubmittedSpecHash != d.hash
}

func (d *decider) decide() error {
	d.reportSpecValidity()
	d.adoptKubeflowStatus()
	switch st := d.status.AppState.State; st {
	case v1beta2.ApplicationStateNew:
		if d.suspended() {
			d.setState(v1beta2.ApplicationStateSuspended, "")
			return nil
		}
		d.submitWhenClear(v1beta2.ApplicationStateNew)
	case v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning,
		v1beta2.ApplicationStateUnknown, v1beta2.ApplicationStateSucceeding:
		// A suspension wins over a spec change: Kueue's eviction suspends the application and
		// puts its placement back in one update, and a suspended spec runs nothing either way.
		switch {
		case d.suspended() && d.kueueJob():
			d.kueueEvicted()
		case d.suspended():
			d.suspend()
		case d.specChanged():
			d.invalidate()
		case d.admissionLost():
			d.evicted()
		default:
			d.track()
		}
	case v1beta2.ApplicationStateFailing:
		switch {
		case d.suspended():
			d.suspend()
		case d.specChanged():
			d.invalidate()
		default:
			d.retryRun()
		}
	case v1beta2.ApplicationStatePendingRerun:
		switch {
		case d.suspended():
			d.suspend()
		case d.specChanged():
			d.invalidate()
		default:
			d.submitWhenClear(v1beta2.ApplicationStatePendingRerun)
		}
	case v1beta2.ApplicationStateInvalidating:
		if d.suspended() {
			d.suspend()
			return nil
		}
		d.resetAttempts()
		d.submitWhenClear(v1beta2.ApplicationStateInvalidating)
	case v1beta2.ApplicationStateFailedSubmission:
		d.submissionFailed()
	case v1beta2.ApplicationStateSuspending:
		d.suspend()
	case v1beta2.ApplicationStateSuspended, v1beta2.ApplicationStateResuming:
		switch {
		case d.suspended():
			d.suspend()
		case d.specChanged() && !d.kueueJob():
			// Kueue's own edits while it held the application (its placement) are no new
			// spec of the user's: the attempts go on.
			d.resetAttempts()
			d.submitWhenClear(v1beta2.ApplicationStateResuming)
		default:
			d.submitWhenClear(v1beta2.ApplicationStateResuming)
		}
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
		if d.specChanged() {
			d.invalidate()
			return nil
		}
		d.trackExecutors(time.Time{})
		d.terminal()
	default:
		return metacontroller.RequestErrorf("status.applicationState.state %q is not a state sparkhooks knows", st)
	}
	return nil
}

// reportSpecValidity keeps the SpecValid condition in line with the spec. A spec that turns
// invalid while an attempt runs leaves the attempt alone: only this condition says so.
func (d *decider) reportSpecValidity() {
	if d.invalid != "" {
		d.decision.ValidationFailed = true
		d.setCondition(condSpecValid, metav1.ConditionFalse, "ValidationFailed", d.invalid, d.now)
		return
	}
	d.setCondition(condSpecValid, metav1.ConditionTrue, "Valid", "the spec is valid", d.now)
}

// submitWhenClear submits the next attempt once every child of the previous one is gone: the
// new attempt reuses the driver Pod and Service names. Until then it stays in waitState.
func (d *decider) submitWhenClear(waitState v1beta2.ApplicationStateType) {
	// A new application whose status write was lost sees its own first attempt among the
	// children; submitting again yields the very same objects. A driver Pod Kubeflow's operator
	// made and Metacontroller released holds the name the next driver takes, so it counts too.
	busy := d.in.observedCount() > 0 || d.releasedDriver() != nil
	if busy && waitState != v1beta2.ApplicationStateNew && !d.nextAttemptObserved() {
		d.setState(waitState, d.status.AppState.ErrorMessage)
		return
	}
	if d.namespaceHold != "" && !d.nextAttemptObserved() {
		// Restating an attempt whose driver exists starts nothing; a new one waits.
		d.holdForNamespace(waitState)
		return
	}
	d.submit()
}

// nextAttemptObserved is true when a driver Pod of the attempt this sync would submit already
// exists: the status write of the sync that submitted it was lost. Submitting again yields the
// very same objects and puts the status back in line with them.
func (d *decider) nextAttemptObserved() bool {
	if d.invalid != "" {
		return false
	}
	return d.driverObserved(d.nextSubmission())
}

// driverObserved is true when a driver Pod of submission sub is among the observed children.
func (d *decider) driverObserved(sub children.Submission) bool {
	for _, pod := range d.in.drivers {
		if pod.Metadata.Labels.SubmissionID == sub.SubmissionID {
			return true
		}
	}
	return false
}

// nextSubmission identifies the next attempt. The spec hash keeps the ids of a resubmitted,
// edited spec apart from the previous run's, whose executors may still be terminating.
func (d *decider) nextSubmission() children.Submission {
	return children.NewSubmission(types.UID(string(d.in.app.UID)+"/"+d.hash), d.status.SubmissionAttempts+1)
}

// submit requests the next attempt: the driver Pod, its ConfigMap and Services.
func (d *decider) submit() {
	if d.invalid != "" {
		d.failSpec(reasonInvalidSpec, d.invalid)
		return
	}
	if !d.queueAdmits() {
		return
	}
	sub := d.nextSubmission()
	attempt := sub.Attempt
	objs, err := children.Build(d.spec, sub, d.buildOptions())
	if err != nil {
		d.failSpec(reasonBuildFailed, err.Error())
		return
	}

	st := &d.status
	st.SubmissionAttempts = attempt
	st.ExecutionAttempts++
	st.SubmissionID = sub.SubmissionID
	st.SparkApplicationID = sub.AppID
	st.SubmittedSpecHash = d.hash
	st.LastSubmissionAttemptTime = metav1.NewTime(d.now)
	st.TerminationTime = metav1.Time{}
	st.ExecutorState = nil
	st.DriverInfo = d.driverInfo(objs)
	st.HistoryURL = historyURL(d.cfg.HistoryServerURL, objs.DefaultEventLog, sub.AppID)
	d.setState(v1beta2.ApplicationStateSubmitted, "")
	d.kueueAdmitted()

	d.removeCondition(condDriverMissing, condTimedOut, condFailed, condComplete, condExpired, condExecutorFailed, condAdopted)
	d.setCondition(condDriverRequested, metav1.ConditionTrue, "Submitted",
		fmt.Sprintf("attempt %d submitted as %s (Spark application %s)", attempt, sub.SubmissionID, sub.AppID), d.now)
	d.driverNotStarted()
	d.setCondition(condExecutorsReady, metav1.ConditionFalse, reasonExecutorsStarting, "waiting for the driver", d.now)

	if r := d.predictRefusal(objs.DriverPod); r != nil {
		if !d.now.Before(r.from) {
			d.refuseSubmission(r)
			return
		}
		d.wakeAt(r.from) // asked for all the same: the related objects' cache may lag
	}
	d.children = objs.List()
	d.wakeAt(d.now.Add(d.cfg.SubmissionGrace))
	if t := d.timeouts().DriverStartSeconds; t != nil {
		// The timeout counts from the driver Pod's creation, which follows this answer. A driver
		// that never starts may give no later sync a reason to run (a Pod the scheduler cannot
		// place changes once), so the deadline is asked for now.
		d.wakeAt(d.now.Add(v1beta2.Seconds(*t)))
	}
	if d.driverObserved(sub) {
		// A stale request: the attempt's driver already exists, so an earlier answer submitted
		// it and its status write is on its way. Metacontroller drops this answer's status when
		// that write lands first (a conflict) and does not sync for a status change, so what
		// the driver Pod says now (unschedulable, running, ended) would wait for the next
		// deadline. A sync in a second reads it against the landed status.
		d.wakeAt(d.now.Add(promptResync))
	}
	d.decision.Submitted = true
}

// promptResync is how soon an answer asks to be called again when its next step is due at once
// and would otherwise wait for an event: a restated submission, or a queued application whose
// attempt has just been released (its spent Workload goes, and the next sync queues a fresh
// one). A stale sync can take that event and decide from the old status, and Metacontroller
// drops its status write on the conflict; the resync comes regardless.
const promptResync = time.Second

// failSpec records a submission that cannot succeed until the spec changes.
func (d *decider) failSpec(reason, msg string) {
	d.status.SubmittedSpecHash = d.hash
	d.setState(v1beta2.ApplicationStateFailedSubmission, msg)
	d.setCondition(condDriverRequested, metav1.ConditionFalse, reason, msg, d.now)
	d.decision.ValidationFailed = d.decision.ValidationFailed || reason == reasonInvalidSpec
}

// buildOptions are the operator's build settings for this request (RequestOptions), with the
// driver Pods answered before.
func (d *decider) buildOptions() children.Options {
	opts := RequestOptions(d.cfg.Driver, d.in.children)
	opts.AnsweredDriver = d.answeredDriver
	return opts
}

// RequestOptions are the operator's build settings opts for a request whose observed children
// are observed: PodGroups, driver PodDisruptionBudgets, executor NetworkPolicies and Gateway API
// routes only where the controller registration declares them, which the request shows by
// carrying the child type.
func RequestOptions(opts children.Options, observed metacontroller.ChildMap) children.Options {
	_, opts.VolcanoPodGroups = observed[keyPodGroup]
	_, opts.SchedulerPluginsPodGroups = observed[keyCoschedulingPodGroup]
	_, opts.DriverPDBs = observed[keyPDB]
	_, opts.NetworkPolicies = observed[keyNetworkPolicy]
	_, opts.Routes.HTTPRoutes = observed[keyHTTPRoute]
	_, opts.Routes.GRPCRoutes = observed[keyGRPCRoute]
	return opts
}

// driverInfo is what the status says of a new attempt's driver. The UI Service's address is left
// to refreshUIAddress even when the Service is observed already: a sync that reads the parent
// from before the submission's status write (Metacontroller's cache lags behind the child
// events the submission causes) submits the same attempt again and now sees the Service with
// its cluster IP; reporting it then would make that sync's status differ from the submission's,
// and cost a write of its own.
func (d *decider) driverInfo(objs *children.Objects) v1beta2.DriverInfo {
	info := v1beta2.DriverInfo{PodName: objs.DriverPodName}
	if svc := objs.UIService; svc != nil {
		info.WebUIServiceName = svc.Name
		if len(svc.Spec.Ports) > 0 {
			info.WebUIPort = svc.Spec.Ports[0].Port
		}
	}
	if ing := objs.UIIngress; ing != nil {
		info.WebUIIngressName = ing.Name
		info.WebUIIngressAddress = ingressAddress(ing)
	}
	if route := objs.UIHTTPRoute; route != nil {
		info.WebUIHTTPRouteName = route.Metadata.Name
		info.WebUIHTTPRouteAddress = children.HTTPRouteAddress(route)
	}
	return info
}

// invalidate gives up the current attempt because the spec changed, and submits the new spec
// once the old children are gone.
func (d *decider) invalidate() {
	d.decision.RestartReason = "SpecChanged"
	d.resetAttempts()
	if d.in.observedCount() == 0 {
		d.submitWhenClear(v1beta2.ApplicationStateInvalidating)
		return
	}
	d.setState(v1beta2.ApplicationStateInvalidating, "")
}

// resetAttempts clears what belongs to the previous spec, as the Kubeflow operator does when
// it invalidates an application. submissionID stays until the next submission replaces it: it
// names the attempt whose children are being released, and without it a driver Pod whose
// deletion failed could no longer be told from a Pod the status knows nothing of.
func (d *decider) resetAttempts() {
	st := &d.status
	st.SubmissionAttempts = 0
	st.ExecutionAttempts = 0
	st.LastSubmissionAttemptTime = metav1.Time{}
	st.TerminationTime = metav1.Time{}
	st.SparkApplicationID = ""
	st.HistoryURL = ""
	st.DriverInfo = v1beta2.DriverInfo{}
	st.ExecutorState = nil
	st.AppState.ErrorMessage = ""
	d.removeCondition(condDriverRequested, condDriverStarted, condDriverReady, condExecutorsReady,
		condDriverMissing, condTimedOut, condFailed, condComplete, condExpired, condExecutorFailed, condAdopted)
}

// suspend releases every child and parks the application until spec.suspend is false again.
func (d *decider) suspend() {
	st := &d.status
	st.SparkApplicationID = ""
	st.HistoryURL = ""
	st.DriverInfo = v1beta2.DriverInfo{}
	st.ExecutorState = nil
	st.AppState.ErrorMessage = ""
	if d.in.observedCount() > 0 {
		d.setState(v1beta2.ApplicationStateSuspending, "")
		return
	}
	d.setState(v1beta2.ApplicationStateSuspended, "")
	if !d.suspended() {
		// Evicted (queued again next), or resumed (by the user, or by Kueue's readmission)
		// while the children were going: this sync's status write starts no sync
		// (ignoreStatusChanges), and no child is left whose deletion would.
		d.wakeAt(d.now.Add(promptResync))
	}
}

// retryRun waits out the retry interval of a failed attempt, then submits the next one.
func (d *decider) retryRun() {
	due := d.retryDue(d.spec.Spec.RestartPolicy.OnFailureRetryInterval, d.status.TerminationTime.Time)
	if d.now.Before(due) {
		d.wakeAt(due)
		return
	}
	d.submitWhenClear(v1beta2.ApplicationStatePendingRerun)
}

// retryDue is when the next attempt may start: the interval grows linearly with the number of
// submissions, as in the Kubeflow operator.
func (d *decider) retryDue(intervalSeconds *int64, from time.Time) time.Time {
	interval := v1beta2.DefaultRetryIntervalSeconds
	if intervalSeconds != nil {
		interval = *intervalSeconds
	}
	attempts := int64(max(d.status.SubmissionAttempts, 1))
	return from.Add(v1beta2.SecondsTimes(interval, attempts))
}

// submissionFailed handles SUBMISSION_FAILED: an edited spec is submitted afresh, a failure
// the spec caused waits for an edit, and a driver Pod that was never created is retried by
// the restart policy.
func (d *decider) submissionFailed() {
	changed := d.status.SubmittedSpecHash != d.hash
	if submittedByKubeflow(&d.status) {
		// Kubeflow's failed spark-submit: retried by the restart policy like a driver Pod that
		// never appeared, unless the spec changed since.
		changed = d.kubeflowSpecChanged()
	}
	if changed {
		d.resetAttempts()
		d.submitWhenClear(v1beta2.ApplicationStateFailedSubmission)
		return
	}
	if c := d.condition(condDriverRequested); c != nil && (c.Reason == reasonInvalidSpec || c.Reason == reasonBuildFailed) {
		return
	}
	if !d.shouldRetrySubmission() {
		d.terminate(v1beta2.ApplicationStateFailed, d.status.AppState.ErrorMessage, d.now)
		// As every later sync of a FAILED application does: this status is then the last one
		// written, with no sync left to change it (ignoreStatusChanges).
		d.trackExecutors(time.Time{})
		d.terminal()
		return
	}
	due := d.retryDue(d.spec.Spec.RestartPolicy.OnSubmissionFailureRetryInterval, d.status.LastSubmissionAttemptTime.Time)
	if d.now.Before(due) {
		d.retry = d.retryNote(due, d.spec.Spec.RestartPolicy.OnSubmissionFailureRetries, d.status.SubmissionAttempts)
		d.wakeAt(due)
		return
	}
	d.submitWhenClear(v1beta2.ApplicationStateFailedSubmission)
}

func (d *decider) shouldRetrySubmission() bool {
	return d.retryAllowed(d.spec.Spec.RestartPolicy.OnSubmissionFailureRetries, d.status.SubmissionAttempts)
}

func (d *decider) shouldRetryRun() bool {
	return d.retryAllowed(d.spec.Spec.RestartPolicy.OnFailureRetries, d.status.ExecutionAttempts)
}

// retryAllowed applies the restart policy to a failure: Always retries, OnFailure while the
// attempts so far do not exceed the retries allowed (Kubeflow's count), Never does not.
func (d *decider) retryAllowed(retries *int32, attempts int32) bool {
	switch d.spec.Spec.RestartPolicy.Type {
	case v1beta2.RestartPolicyAlways:
		return true
	case v1beta2.RestartPolicyOnFailure:
		return retries != nil && attempts <= *retries
	}
	return false
}

// retryNote says when the next attempt starts and how many retries the restart policy has
// left; it is dated, not counted down, so that a repeated sync writes the same words.
func (d *decider) retryNote(due time.Time, retries *int32, attempts int32) string {
	policy := d.spec.Spec.RestartPolicy.Type
	note := fmt.Sprintf("the next attempt starts at %s (restartPolicy %s", due.UTC().Format(time.RFC3339), policy)
	if policy == v1beta2.RestartPolicyOnFailure && retries != nil {
		note += fmt.Sprintf(", retry %d of %d", attempts, *retries)
	}
	return note + ")"
}

// terminate records the end of the current attempt, keeping the first termination time seen.
func (d *decider) terminate(state v1beta2.ApplicationStateType, msg string, at time.Time) {
	if d.status.TerminationTime.IsZero() {
		if at.IsZero() {
			at = d.now
		}
		d.status.TerminationTime = metav1.NewTime(at.UTC().Truncate(time.Second))
	}
	d.setState(state, msg)
}

// attemptSucceeded handles a driver that exited 0.
func (d *decider) attemptSucceeded(finished time.Time) {
	if d.spec.Spec.RestartPolicy.Type == v1beta2.RestartPolicyAlways {
		d.terminate(v1beta2.ApplicationStatePendingRerun, "", finished)
		d.decision.RestartReason = "Always"
		d.releaseChildren()
		return
	}
	d.terminate(v1beta2.ApplicationStateCompleted, "", finished)
	d.terminal()
}

// attemptFailed handles a failed attempt: retried by the restart policy (its children are
// released now, the next attempt starts after the retry interval) or final.
func (d *decider) attemptFailed(reason, msg string, at time.Time) {
	d.failReason = reason
	if d.shouldRetryRun() {
		d.terminate(v1beta2.ApplicationStateFailing, msg, at)
		d.decision.RestartReason = reason
		d.releaseChildren()
		due := d.retryDue(d.spec.Spec.RestartPolicy.OnFailureRetryInterval, d.status.TerminationTime.Time)
		d.retry = d.retryNote(due, d.spec.Spec.RestartPolicy.OnFailureRetries, d.status.ExecutionAttempts)
		d.wakeAt(due)
		return
	}
	d.terminate(v1beta2.ApplicationStateFailed, msg, at)
	d.terminal()
}

// terminal decides which children a terminated application keeps: the retain policy, then the
// time to live. Only children that still exist are kept; nothing is created for a finished
// application, and a driver Pod in which something still runs (a timed-out attempt, a sidecar)
// is released.
func (d *decider) terminal() {
	release := false
	switch policy(d.spec.Spec.ResourceRetainPolicy) {
	case v1beta2.ResourceRetainPolicyNever:
		release = true
	case v1beta2.ResourceRetainPolicyOnFailure:
		release = d.status.AppState.State == v1beta2.ApplicationStateCompleted
	}
	// sparkhooks gc deletes the application on the Expired condition alone, so a condition
	// that no longer holds (the TTL raised or removed since) must go.
	expired := false
	if ttl, source := d.timeToLive(); ttl != nil && !d.status.TerminationTime.IsZero() {
		expiry := d.status.TerminationTime.Add(v1beta2.Seconds(*ttl))
		if d.now.Before(expiry) {
			d.wakeAt(expiry)
		} else {
			expired, release = true, true
			d.setCondition(condExpired, metav1.ConditionTrue, "TimeToLiveExpired",
				fmt.Sprintf("%s (%d) passed since termination; all resources were released and the SparkApplication is due for deletion (sparkhooks gc)", source, *ttl), expiry)
		}
	}
	if !expired {
		d.removeCondition(condExpired)
	}
	// A finished attempt keeps its driver Pod for its logs, but nothing needs protecting from
	// evictions or gang-scheduling any more (Kubeflow too deletes the PodGroup on termination),
	// and no executor of it serves blocks any more, so its NetworkPolicy goes too.
	keep := func(key string, pod *podView) bool {
		switch key {
		case keyPDB, keyNetworkPolicy, keyPodGroup, keyCoschedulingPodGroup:
			return false
		case keyPod:
			return !release && stoppedPod(pod)
		}
		return !release
	}
	if d.endsAttempt() {
		// Whatever this decides to drop goes in the next sync; see releaseChildren.
		all := d.observedChildren(func(string, *podView) bool { return true })
		if len(d.observedChildren(keep)) != len(all) {
			d.wakeAt(d.now)
		}
		d.children = all
		return
	}
	d.children = d.observedChildren(keep)
}

// timeToLive is the effective time to live, as in Kubeflow: the spec's whenever set (even 0,
// which expires at once), else the operator default when there is one. source names it in the
// Expired condition.
func (d *decider) timeToLive() (ttl *int64, source string) {
	if ttl := d.spec.Spec.TimeToLiveSeconds; ttl != nil {
		return ttl, "timeToLiveSeconds"
	}
	if def := d.cfg.DefaultTimeToLiveSeconds; def > 0 {
		return &def, "the operator default TTL, --default-time-to-live-seconds"
	}
	return nil, ""
}

// endsAttempt is true in the sync that decides the current attempt is over: the observed
// status still shows it active.
func (d *decider) endsAttempt() bool {
	return d.status.AppState.State != d.decision.From
}

// releaseChildren drops the attempt's children from the desired set, but not in the sync that
// decides the attempt is over. Deleting the driver Pod starts another sync at once, and that
// one may read the parent from before this sync's status write: it would see an active attempt
// whose driver vanished, and its answer would overwrite the newer status. So this sync keeps
// what is observed, and the next one, whose input shows the finished state (informer caches
// never go back), releases it.
func (d *decider) releaseChildren() {
	if d.endsAttempt() {
		d.children = d.observedChildren(func(string, *podView) bool { return true })
		if len(d.children) > 0 {
			d.wakeAt(d.now) // the status write triggers that sync too; this does not depend on it
		}
		return
	}
	d.children = nil
}

func policy(p *v1beta2.ResourceRetainPolicy) v1beta2.ResourceRetainPolicy {
	if p == nil {
		return v1beta2.DefaultResourceRetainPolicy
	}
	return *p
}

func (d *decider) setState(state v1beta2.ApplicationStateType, msg string) {
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	d.status.AppState = v1beta2.ApplicationState{State: state, ErrorMessage: msg}
}

// wakeAt asks for a sync at t, keeping the nearest of all requested instants.
func (d *decider) wakeAt(t time.Time) {
	if d.deadline.IsZero() || t.Before(d.deadline) {
		d.deadline = t
	}
}

func (d *decider) response() *metacontroller.SyncResponse {
	d.decision.To = d.status.AppState.State
	resp := &metacontroller.SyncResponse{Status: &d.status, Children: make([]any, len(d.children))}
	for i, obj := range d.children {
		resp.Children[i] = metacontroller.Wire(obj)
	}
	if !d.deadline.IsZero() {
		wait := min(d.deadline.Sub(d.realNow), maxResync).Seconds()
		resp.ResyncAfterSeconds = math.Max(1, math.Ceil(wait))
	}
	return resp
}

// maxResync bounds resyncAfterSeconds. A deadline years away (a long TTL or timeout) is looked
// at again daily, which costs nothing, and Metacontroller turns the seconds back into a
// time.Duration, which a deadline near the 292-year limit of one would overflow.
const maxResync = 24 * time.Hour

// ingressAddress is the URL of the UI behind an Ingress, from its first rule.
func ingressAddress(ing *networkingv1.Ingress) string {
	if len(ing.Spec.Rules) == 0 {
		return ""
	}
	rule := ing.Spec.Rules[0]
	scheme := "http"
	if len(ing.Spec.TLS) > 0 {
		scheme = "https"
	}
	path := ""
	if rule.HTTP != nil && len(rule.HTTP.Paths) > 0 {
		path = rule.HTTP.Paths[0].Path
		// A regex path ("/ns/app(/|$)(.*)") serves the UI at its literal prefix.
		if cut := strings.IndexAny(path, "(["); cut >= 0 {
			path = path[:cut]
		}
	}
	return scheme + "://" + rule.Host + strings.TrimSuffix(path, "/")
}
