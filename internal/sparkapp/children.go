package sparkapp

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// activeChildren sets the desired children of a running attempt: everything built for it, or,
// when the spec can no longer be built (edited into an invalid state mid-run), the observed
// children as they are. withDriver false leaves out a driver Pod that has vanished, so that it
// is not silently created again.
func (d *decider) activeChildren(withDriver bool) {
	if objs := d.currentObjects(); objs != nil {
		list := objs.List()
		d.children = make([]any, 0, len(list))
		for _, obj := range list {
			if obj == objs.Driver() && !withDriver {
				continue
			}
			if obj == any(objs.ConfigMap) {
				if kept := d.attemptConfigMap(objs.ConfigMap); kept != nil {
					obj = kept
				}
			}
			if objs.DriverService != nil && obj == any(objs.DriverService) {
				if kept := d.attemptDriverService(objs.DriverService); kept != nil {
					obj = kept
				}
			}
			d.children = append(d.children, obj)
		}
		return
	}
	d.children = d.observedChildren(func(key string, pod *podView) bool {
		return key != keyPod || (withDriver && pod.Metadata.Labels.SubmissionID == d.status.SubmissionID)
	})
}

// currentObjects rebuilds the objects of the current attempt from the spec, nil when the spec
// is invalid or is no longer the one the attempt was submitted with. A sync that asks twice for
// the same attempt (to predict a refusal, then to answer) builds it once.
func (d *decider) currentObjects() *children.Objects {
	if d.invalid != "" || d.status.SubmittedSpecHash != d.hash || d.status.SubmissionID == "" {
		return nil
	}
	sub := children.Submission{
		Attempt:      d.status.SubmissionAttempts,
		SubmissionID: d.status.SubmissionID,
		AppID:        d.status.SparkApplicationID,
	}
	if d.current != nil && d.current.sub == sub {
		return d.current.objs
	}
	objs, err := children.Build(d.spec, sub, d.buildOptions())
	if err != nil {
		return nil
	}
	d.current = &builtAttempt{sub: sub, objs: objs}
	return objs
}

// builtAttempt is the objects of one attempt, as built in this sync.
type builtAttempt struct {
	sub  children.Submission
	objs *children.Objects
}

// attemptConfigMap returns the observed ConfigMap of the current submission when it has another
// name than the one built now: a sparkhooks release that writes different properties would
// otherwise replace the ConfigMap under a running driver (its content-addressed name changes).
// The driver read its properties at start, so the attempt keeps the ConfigMap it started with.
// Apache's name does not follow the content, so there the observed one is kept when its data
// differs: the API server refuses to change an immutable ConfigMap.
func (d *decider) attemptConfigMap(built *corev1.ConfigMap) any {
	if !d.cfg.Driver.Apache && slices.Contains(d.in.children.Names(keyConfigMap), built.Name) {
		return nil
	}
	var kept any
	for _, obj := range d.observedChildren(func(key string, _ *podView) bool { return key == keyConfigMap }) {
		md, _ := obj.(map[string]any)["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		if sub, _ := labels[sparkpod.LabelSubmissionID].(string); sub == d.status.SubmissionID && sub != "" {
			kept = obj
			if md["name"] == built.Name && sameData(obj.(map[string]any)["data"], built.Data) {
				return nil
			}
		}
	}
	return kept
}

// attemptDriverService returns the observed driver Service of the current attempt when it has
// another name than the one built now (children.IsDriverServiceOf): the attempt keeps the
// Service it started with, whose name its driver gives every executor it starts.
func (d *decider) attemptDriverService(built *corev1.Service) any {
	if slices.Contains(d.in.children.Names(keyService), built.Name) {
		return nil
	}
	for _, obj := range d.observedChildren(func(key string, _ *podView) bool { return key == keyService }) {
		if children.IsDriverServiceOf(obj, built.Spec.Selector[sparkpod.LabelAppSelector]) {
			return obj
		}
	}
	return nil
}

// sameData is whether an observed ConfigMap's data is data.
func sameData(observed any, data map[string]string) bool {
	m, _ := observed.(map[string]any)
	if len(m) != len(data) {
		return false
	}
	for k, v := range data {
		if m[k] != v {
			return false
		}
	}
	return true
}

// answeredDriver returns the driver Pod of submission as Metacontroller recorded it when it
// created the Pod, nil when it recorded nothing for that submission. A Pod's containers cannot
// be changed once it exists: a sparkhooks release that builds them differently (a new default, a
// fixed property) must not ask Metacontroller to update a running driver, which the API server
// would refuse on every sync. Built by the same release, the two answers are the same bytes.
func (d *decider) answeredDriver(name, submission string) any {
	pod := d.findDriver(name)
	if pod == nil || submission == "" || pod.Metadata.Labels.SubmissionID != submission {
		return nil
	}
	answered := metacontroller.AnsweredPod[submissionLabel](name, pod.Metadata.Annotations.LastApplied)
	if answered == nil || answered.Metadata.Labels.SubmissionID != submission {
		return nil
	}
	return answered
}

// observedChildren returns the observed children that keep passes, in a fixed order, each as
// the hook answered it when it was created: Metacontroller's last-applied annotation holds that
// answer, and answering it again byte for byte is what keeps Metacontroller from rewriting the
// child. A child without the annotation (made by an older Metacontroller, or by hand and
// adopted) is returned as observed, minus status and server-owned metadata. Pods are passed to
// keep decoded; other kinds with a nil Pod.
func (d *decider) observedChildren(keep func(key string, pod *podView) bool) []any {
	var out []any
	for _, key := range childKeys {
		for _, name := range d.in.children.Names(key) {
			var pod *podView
			if key == keyPod {
				pod = d.findDriver(name)
				if pod == nil {
					continue
				}
			}
			if !keep(key, pod) {
				continue
			}
			if obj := metacontroller.AsAnswered(d.in.children[key][name]); obj != nil {
				out = append(out, obj)
			}
		}
	}
	return out
}

func (d *decider) findDriver(name string) *podView {
	for _, pod := range d.in.drivers {
		if pod.Metadata.Name == name {
			return pod
		}
	}
	return nil
}

func terminatedPod(pod *podView) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// stoppedPod tells whether nothing runs in the Pod any more: it terminated, or every container
// has while the phase still says Running. A kubelet reports the terminal phase only once it has
// stopped the Pod's sandbox, seconds after the last container exited on a busy node; the
// attempt may be decided over in between (observeDriver reads the Spark container), and its
// driver Pod is kept for its logs like one whose phase has caught up.
func stoppedPod(pod *podView) bool {
	if terminatedPod(pod) {
		return true
	}
	if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Terminated == nil {
			return false
		}
	}
	return true
}

// Refusal reasons, the label of sparkhooks_hook_refusals_total.
const (
	// RefusedUnknownAttempt: a live Pod carries no submission id, or one the status does not
	// know; the request may be stale, or the Pod was relabelled.
	RefusedUnknownAttempt = "UnknownAttempt"
	// RefusedIdentityChanged: the answer keeps a Pod's name but for another attempt, which would
	// leave the live Pod in place under an identity it does not have.
	RefusedIdentityChanged = "IdentityChanged"
	// RefusedAttemptNotEnded: the answer would delete a live Pod of the current attempt without
	// deciding that the attempt is over.
	RefusedAttemptNotEnded = "AttemptNotEnded"
)

// activeStates are the states in which the attempt status.submissionID names may have a live
// driver; releasingStates are those in which it is over and its children go.
var (
	activeStates = map[v1beta2.ApplicationStateType]bool{
		v1beta2.ApplicationStateSubmitted: true, v1beta2.ApplicationStateRunning: true,
		v1beta2.ApplicationStateUnknown: true, v1beta2.ApplicationStateSucceeding: true,
	}
	releasingStates = map[v1beta2.ApplicationStateType]bool{
		v1beta2.ApplicationStateFailing: true, v1beta2.ApplicationStatePendingRerun: true,
		v1beta2.ApplicationStateCompleted: true, v1beta2.ApplicationStateFailed: true,
		v1beta2.ApplicationStateInvalidating: true, v1beta2.ApplicationStateSuspending: true,
		v1beta2.ApplicationStateSuspended: true, v1beta2.ApplicationStateResuming: true,
		v1beta2.ApplicationStateFailedSubmission: true,
	}
)

// releasesAttempt tells whether a decision from state from to state to gives up the attempt
// the observed status names: it ends it now (an active state to a releasing one) or the status
// already shows it over. A new application has no attempt to give up, and a submission that
// fails cannot have a live driver of its own.
func releasesAttempt(from, to v1beta2.ApplicationStateType) bool {
	if !releasingStates[to] {
		return false
	}
	if releasingStates[from] {
		return true
	}
	return activeStates[from] && to != v1beta2.ApplicationStateFailedSubmission
}

// checkLivePodsKept is the last step of every sync: it refuses an answer that would delete a
// live Pod (Metacontroller deletes every observed child the answer leaves out) unless this
// decision gives up the attempt that Pod belongs to, and an answer that would keep a live Pod
// under another attempt's identity. A Pod belongs to the attempt its submission-id label names,
// which the hook writes and no other controller has a reason to touch; a Pod that carries none
// cannot be placed, so the hook refuses rather than guess.
func (d *decider) checkLivePodsKept() error {
	desired := map[string]string{} // Pod name → submission id
	for _, obj := range d.children {
		switch pod := obj.(type) {
		case *corev1.Pod:
			desired[pod.Name] = pod.Labels[sparkpod.LabelSubmissionID]
		case *metacontroller.RecordedPod[submissionLabel]:
			desired[pod.Metadata.Name] = pod.Metadata.Labels.SubmissionID
		case map[string]any:
			if pod["kind"] != "Pod" {
				continue
			}
			md, _ := pod["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			labels, _ := md["labels"].(map[string]any)
			sub, _ := labels[sparkpod.LabelSubmissionID].(string)
			desired[name] = sub
		}
	}
	from, to := d.decision.From, d.status.AppState.State
	known := d.knownSubmission
	for _, pod := range d.in.drivers {
		if terminatedPod(pod) || pod.Metadata.DeletionTimestamp != nil {
			continue
		}
		name := pod.Metadata.Name
		sub := pod.Metadata.Labels.SubmissionID
		want, kept := desired[name]
		switch {
		case kept && want == sub && sub != "":
		case kept:
			return metacontroller.Refusef(RefusedIdentityChanged,
				"refusing to decide: live Pod %s carries submission id %q, but the answer keeps it as submission %q; the request may be stale, or the Pod's %s label was edited",
				name, sub, want, sparkpod.LabelSubmissionID)
		case sub == "" || sub != known:
			return metacontroller.Refusef(RefusedUnknownAttempt,
				"refusing to decide: live Pod %s belongs to submission %q, which the status (submission %q) does not account for; the request may be stale, or the Pod's %s label was edited",
				name, sub, known, sparkpod.LabelSubmissionID)
		case !releasesAttempt(from, to):
			return metacontroller.Refusef(RefusedAttemptNotEnded,
				"refusing to decide: the answer (state %s to %s) would delete live Pod %s of submission %q without ending that attempt",
				stateName(from), stateName(to), name, sub)
		}
	}
	return nil
}

// submissionLabel is the label the invariant reads of a driver Pod answered as Metacontroller
// recorded it: sparkpod.LabelSubmissionID, which a struct tag cannot name (a test holds the two
// together).
type submissionLabel struct {
	SubmissionID string `json:"sparkoperator.k8s.io/submission-id"`
}

func stateName(s v1beta2.ApplicationStateType) string {
	if s == "" {
		return "NEW"
	}
	return string(s)
}
