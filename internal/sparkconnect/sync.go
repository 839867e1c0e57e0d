package sparkconnect

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Config holds the operator's settings for servers: those of the driver builder.
type Config struct {
	Driver children.Options
}

// result is what a sync decided, for metrics: Sync reports it as a hook.Outcome.
type result struct {
	From, To v1alpha1.SparkConnectState
	// Restart is non-empty when this decision gives up a live server: why.
	Restart          string
	ValidationFailed bool
}

// Condition types and reasons.
const (
	condServerPodReady = "ServerPodReady"
	condReady          = "Ready"
	condSpecValid      = "SpecValid"
	maxMessage         = 4096
)

// Refusal reasons, the label of sparkhooks_hook_refusals_total.
const (
	// RefusedUnknownServer: a live Pod carries a submission the status does not name; the
	// request may be stale, or the status was lost.
	RefusedUnknownServer = "UnknownServer"
	// RefusedServerDropped: the answer would delete a live server Pod without a spec change
	// that ends it.
	RefusedServerDropped = "ServerDropped"
)

// Hooks are the SparkConnect's hooks with the settings cfg.
func Hooks(cfg Config) hook.Kind {
	return hook.Kind{
		Name: "sparkconnect",
		Sync: func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
			return Sync(req, now, cfg)
		},
		Finalize:  hook.Silent(Finalize),
		Customize: Customize,
	}
}

// Sync is the sync hook of a SparkConnect. A finalizing request is answered as by Finalize.
func Sync(req *metacontroller.SyncRequest, now time.Time, cfg Config) (*metacontroller.SyncResponse, hook.Outcome, error) {
	in, err := decodeRequest(req)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	// The decision edits a copy of the status: the observed one stays as decoded, for the story.
	told := hook.NewTeller(in.sc.TypeMeta, &in.sc.ObjectMeta, in.sc.Status, Events)
	if req.Finalizing {
		resp := finalize(in)
		return resp, outcome(told, result{From: in.sc.Status.State, To: in.sc.Status.State}, resp), nil
	}
	d := &decider{in: in, cfg: cfg, now: now.UTC().Truncate(time.Second), status: *in.sc.Status.DeepCopy()}
	d.result.From = in.sc.Status.State
	if err := d.decide(); err != nil {
		return nil, hook.Outcome{}, err
	}
	if err := checkServersKept(in, d.children, d.result.Restart != ""); err != nil {
		return nil, hook.Outcome{}, err
	}
	resp := d.response()
	return resp, outcome(told, d.result, resp), nil
}

// outcome reports result r and its answer resp.
func outcome(told hook.Teller[v1alpha1.SparkConnectStatus], r result, resp *metacontroller.SyncResponse) hook.Outcome {
	return hook.Outcome{Kind: v1alpha1.KindSparkConnect, From: string(r.From), To: string(r.To),
		RestartReason: r.Restart, ValidationFailed: r.ValidationFailed, Story: told.Story(resp.Status)}
}

// Finalize is the finalize hook: every child goes, and the SparkConnect may go once none is
// observed. The executors follow their server Pod, which owns them.
func Finalize(req *metacontroller.SyncRequest) (*metacontroller.SyncResponse, error) {
	if req != nil && !req.Finalizing {
		req.Finalizing = true
	}
	in, err := decodeRequest(req)
	if err != nil {
		return nil, err
	}
	return finalize(in), nil
}

func finalize(in *input) *metacontroller.SyncResponse {
	status := in.sc.Status
	return &metacontroller.SyncResponse{Status: &status, Children: []any{}, Finalized: in.observedCount() == 0}
}

// Customize asks Metacontroller for the server's executor Pods, which the server creates, and
// while the status is Kubeflow's operator's, for the server Pod by name (kubeflowServerRule).
func Customize(req *metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("empty request")
	}
	sc, _, err := decodeParent(req.Parent)
	if err != nil {
		return nil, err
	}
	// The executors, in the parent's namespace only: a v2 rule without one lists every
	// namespace's Pods on each sync, and would take in another namespace's application of the
	// same name.
	rules := []metacontroller.RelatedResourceRule{{
		APIVersion:    "v1",
		Resource:      "pods",
		Namespace:     sc.Namespace,
		LabelSelector: &metav1.LabelSelector{MatchLabels: executorSelector(sc)},
	}}
	if rule := kubeflowServerRule(sc); rule != nil {
		rules = append(rules, *rule)
	}
	if sc.Labels[kueue.QueueNameLabel] != "" && metacontroller.DeclaresChild(req.Controller, kueue.APIVersion, kueue.WorkloadResource) {
		rules = append(rules, kueue.RelatedRules()...)
	}
	return &metacontroller.CustomizeResponse{RelatedResources: rules}, nil
}

// executorSelector selects the executors of every server of sc, by the connect-name label the
// server asks Spark to put on them: a SparkApplication of the same name is never counted.
func executorSelector(sc *v1alpha1.SparkConnect) map[string]string {
	return map[string]string{LabelConnectName: sc.Name, sparkpod.LabelSparkRole: sparkpod.RoleExecutor}
}

type decider struct {
	in       *input
	cfg      Config
	now      time.Time
	status   v1alpha1.SparkConnectStatus
	children []any
	result   result
}

func (d *decider) decide() error {
	sc := d.in.sc
	st := &d.status
	st.ObservedGeneration = sc.Generation
	if st.StartTime.IsZero() {
		st.StartTime = metav1.NewTime(d.now)
	}
	st.Server.PodName = v1alpha1.ServerPodName(sc)
	st.Server.ServiceName = v1alpha1.ServiceName(sc)
	st.Executors = countExecutors(d.in.execs)

	hash := specHash(&sc.Spec)
	sub := children.NewSubmission(types.UID(string(sc.UID)+"/"+hash), 1)
	if err := d.checkKnown(sub); err != nil {
		return err
	}

	errs := d.in.specErrs
	if len(errs) == 0 {
		errs = v1alpha1.ValidateSparkConnect(sc)
	}
	if len(errs) > 0 {
		msg := truncate(errs.ToAggregate().Error())
		d.result.ValidationFailed = true
		d.setCondition(condSpecValid, metav1.ConditionFalse, "ValidationFailed", msg)
		// A running server stays as it is, on the spec it was built from.
		if pod := d.runningServer(); pod != nil {
			d.keepObserved()
			d.reportPod(pod)
			return nil
		}
		d.keepObserved()
		d.setState(v1alpha1.StateFailed, "ServerNotBuilt", "the spec is invalid: "+msg)
		return nil
	}
	d.setCondition(condSpecValid, metav1.ConditionTrue, "Valid", "the spec is valid")
	if pod, child := d.kubeflowServer(); pod != nil {
		d.followKubeflowServer(pod, child)
		return nil
	}
	q := d.in.queue
	if q == nil && meta.FindStatusCondition(st.Conditions, condQueued) != nil {
		meta.RemoveStatusCondition(&st.Conditions, condQueued) // the label was removed, or Kueue turned off
	}
	if q != nil && d.livePod(st.SubmissionID) != nil && d.admissionLost() {
		d.evicted()
		return nil
	}

	if st.SubmissionID != "" && st.SubmissionID != sub.SubmissionID {
		// The spec changed: the old server goes first, as the new one takes its name.
		if old := d.podOf(st.SubmissionID); old != nil {
			if old.live() {
				d.result.Restart = "SpecChanged"
			}
			d.keepObservedExcept(old.Metadata.Name)
			d.setNotReady("Restarting", "the spec changed: the server restarts with it")
			return nil
		}
	}
	var place func(*v1beta2.SparkApplicationSpec) error
	if q != nil {
		if d.livePod(sub.SubmissionID) == nil && !d.gate(hash, sub) {
			return nil
		}
		if q.admitted() {
			place = q.placement
		}
	}
	objs, err := build(sc, sub, d.buildOptions(), place)
	if err != nil {
		msg := truncate(err.Error())
		d.keepObserved()
		d.setState(v1alpha1.StateFailed, "ServerNotBuilt", msg)
		return nil
	}
	st.SubmissionID = sub.SubmissionID
	st.SubmittedSpecHash = hash
	meta.RemoveStatusCondition(&st.Conditions, condAdopted) // a server of Kubeflow's, if any, is gone
	d.reportRoutes(objs)

	pod := d.podOf(sub.SubmissionID)
	// Pods of other submissions are not live here (see checkKnown and the restart above); they
	// are left out, which deletes them, and the new Pod waits for its name to be free.
	nameTaken := false
	for _, other := range d.in.pods {
		nameTaken = nameTaken || other != pod && other.Metadata.Name == objs.pod.Name
	}
	switch {
	case pod == nil && nameTaken:
		d.children = objs.rest
		d.setNotReady("ServerPodReplaced", "the previous server Pod is being removed")
	case pod == nil:
		d.children = objs.list()
		d.setNotReady("ServerPodRequested", "the server Pod is requested")
	case !pod.live():
		// Deleted now, created again from the spec at the next sync.
		d.children = objs.rest
		d.setNotReady("ServerPodExited", fmt.Sprintf("the server Pod %s ended (%s%s): it starts again", pod.Metadata.Name, pod.Status.Phase, reasonSuffix(pod)))
	default:
		d.children = objs.list()
		// The running server keeps the Pod as Metacontroller recorded it at creation: its
		// containers cannot change, and a release that builds them differently must not ask
		// for an update the API server refuses on every sync.
		if answered := metacontroller.AnsweredPod[struct{}](pod.Metadata.Name, pod.Metadata.Annotations[metacontroller.LastAppliedAnnotation]); answered != nil {
			d.children[0] = answered
		}
		d.keepDriverService(objs.driverService)
		d.reportPod(pod)
	}
	d.keepWorkload()
	return nil
}

// buildOptions are the operator's build settings with the Gateway API routes the controller
// registration declares, which the request shows by carrying the child types.
func (d *decider) buildOptions() children.Options {
	opts := d.cfg.Driver
	_, opts.Routes.HTTPRoutes = d.in.children[keyHTTPRoute]
	_, opts.Routes.GRPCRoutes = d.in.children[keyGRPCRoute]
	return opts
}

// reportRoutes names the server's routes in the status, and clears those it no longer has.
func (d *decider) reportRoutes(objs *objects) {
	srv := &d.status.Server
	srv.GRPCRouteName, srv.WebUIHTTPRouteName, srv.WebUIHTTPRouteAddress = "", "", ""
	if r := objs.grpcRoute; r != nil {
		srv.GRPCRouteName = r.Metadata.Name
	}
	if r := objs.httpRoute; r != nil {
		srv.WebUIHTTPRouteName = r.Metadata.Name
		srv.WebUIHTTPRouteAddress = children.HTTPRouteAddress(r)
	}
}

// checkKnown refuses a request with a live Pod whose submission is neither the one the status
// names nor the one the current spec makes: the status may have been lost or the request be
// stale, and deleting a server a client is using is not a guess to make.
func (d *decider) checkKnown(sub children.Submission) error {
	for _, pod := range d.in.pods {
		s := pod.submission()
		if !pod.live() || s == d.status.SubmissionID && s != "" || s == sub.SubmissionID || madeByKubeflow(d.in.sc, pod) {
			continue
		}
		return metacontroller.Refusef(RefusedUnknownServer,
			"SparkConnect %s/%s: live Pod %s has submission %q, which neither status.submissionID (%q) nor the current spec names; keeping every child until the status says which server it is",
			d.in.sc.Namespace, d.in.sc.Name, pod.Metadata.Name, s, d.status.SubmissionID)
	}
	return nil
}

// reportPod sets the state from the server Pod: Ready when its readiness probe passes, with
// where to find it, in the same status write, as the Kubeflow SDK requires.
func (d *decider) reportPod(pod *podView) {
	d.status.Server.PodIP = pod.Status.PodIP
	if pod.ready() {
		d.setState(v1alpha1.StateReady, "ServerPodReady", "the server is ready at "+clientURL(d.in.sc))
		return
	}
	msg := "the server Pod is not ready"
	if pod.Status.Message != "" {
		msg += ": " + pod.Status.Message
	}
	d.setNotReady("ServerPodNotReady", msg)
}

// setNotReady reports a server that is not ready: Provisioning until the first server was
// ready, NotReady after.
func (d *decider) setNotReady(reason, msg string) {
	state := v1alpha1.StateNotReady
	if d.status.State == "" || d.status.State == v1alpha1.StateProvisioning {
		state = v1alpha1.StateProvisioning
	}
	if reason != "ServerPodNotReady" {
		d.status.Server.PodIP = ""
	}
	d.setState(state, reason, msg)
}

func (d *decider) setState(state v1alpha1.SparkConnectState, reason, msg string) {
	d.status.State = state
	status := metav1.ConditionFalse
	if state == v1alpha1.StateReady {
		status = metav1.ConditionTrue
	}
	d.setCondition(condServerPodReady, status, reason, msg)
	// Ready says the same under the name kubectl wait --for=condition=Ready and other tools
	// look for; ServerPodReady stays for the Kubeflow SDK.
	d.setCondition(condReady, status, reason, msg)
}

func (d *decider) setCondition(typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&d.status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: truncate(msg),
		ObservedGeneration: d.in.sc.Generation, LastTransitionTime: metav1.NewTime(d.now),
	})
}

// podOf is the observed Pod of a submission.
func (d *decider) podOf(sub string) *podView {
	for _, pod := range d.in.pods {
		if sub != "" && pod.submission() == sub {
			return pod
		}
	}
	return nil
}

// runningServer is the live server Pod the status names, or the one Kubeflow's operator made.
func (d *decider) runningServer() *podView {
	if pod := d.livePod(d.status.SubmissionID); pod != nil {
		return pod
	}
	if pod, _ := d.kubeflowServer(); pod != nil && pod.live() {
		return pod
	}
	return nil
}

func (d *decider) livePod(sub string) *podView {
	if pod := d.podOf(sub); pod != nil && pod.live() {
		return pod
	}
	return nil
}

// keepDriverService answers, in place of the driver Service built for the running server, the
// one Metacontroller made for it under another name (children.IsDriverServiceOf): the server
// gives that name to every executor it starts.
func (d *decider) keepDriverService(built *corev1.Service) {
	if built == nil || slices.Contains(d.in.children.Names(keyService), built.Name) {
		return
	}
	for _, name := range d.in.children.Names(keyService) {
		observed := metacontroller.AsAnswered(d.in.children[keyService][name])
		if !children.IsDriverServiceOf(observed, built.Spec.Selector[sparkpod.LabelAppSelector]) {
			continue
		}
		for i, obj := range d.children {
			if obj == any(built) {
				d.children[i] = observed
			}
		}
		return
	}
}

// keepObserved answers every observed child as it was answered.
func (d *decider) keepObserved() { d.keepObservedExcept("") }

func (d *decider) keepObservedExcept(podName string) {
	for _, key := range childKeys {
		for _, name := range d.in.children.Names(key) {
			if key == keyPod && name == podName {
				continue
			}
			if obj := metacontroller.AsAnswered(d.in.children[key][name]); obj != nil {
				d.children = append(d.children, obj)
			}
		}
	}
}

// response wraps the decision. lastUpdateTime moves only when something else in the status
// did, so a sync with nothing new writes nothing.
func (d *decider) response() *metacontroller.SyncResponse {
	before := d.in.sc.Status
	after := d.status
	after.LastUpdateTime = before.LastUpdateTime
	if !equality.Semantic.DeepEqual(before, after) {
		d.status.LastUpdateTime = metav1.NewTime(d.now)
	}
	d.result.To = d.status.State
	resp := &metacontroller.SyncResponse{Status: &d.status, Children: make([]any, len(d.children))}
	for i, obj := range d.children {
		resp.Children[i] = metacontroller.Wire(obj)
	}
	return resp
}

// countExecutors counts the executor Pods by lower-cased phase, as Kubeflow does.
func countExecutors(execs []*podView) map[string]int {
	if len(execs) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, pod := range execs {
		phase := strings.ToLower(string(pod.Status.Phase))
		if phase == "" {
			phase = "pending"
		}
		out[phase]++
	}
	return out
}

// specHash identifies a spec; any change restarts the server, since every field shapes it.
func specHash(spec *v1alpha1.SparkConnectSpec) string {
	b, err := json.Marshal(spec)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func reasonSuffix(pod *podView) string {
	if pod.Metadata.DeletionTimestamp != nil {
		return ", being deleted"
	}
	if pod.Status.Reason != "" {
		return ": " + pod.Status.Reason
	}
	return ""
}

func truncate(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage]
	}
	return s
}
