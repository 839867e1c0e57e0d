package sparkcluster

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Child keys as Metacontroller sends them.
var (
	keyService     = metacontroller.Key("Service", "v1")
	keyStatefulSet = metacontroller.Key("StatefulSet", "apps/v1")
	keyPolicy      = metacontroller.Key("NetworkPolicy", "networking.k8s.io/v1")
	keyHPA         = metacontroller.Key("HorizontalPodAutoscaler", "autoscaling/v2")
	keyPDB         = metacontroller.Key("PodDisruptionBudget", "policy/v1")
	keyPod         = metacontroller.Key("Pod", "v1")
	childKeys      = []string{keyService, keyStatefulSet, keyPolicy, keyHPA, keyPDB}
)

// historyLimit bounds stateTransitionHistory; Apache's grows for ever.
const historyLimit = 20

// RefusedStatefulSetDropped is the label of sparkhooks_hook_refusals_total for an answer that
// would delete an observed StatefulSet of a cluster that is not being deleted.
const RefusedStatefulSetDropped = "StatefulSetDropped"

// result is what a sync decided, for metrics: Sync reports it as a hook.Outcome.
type result struct {
	From, To         string
	ValidationFailed bool
}

// statefulSetView is what the decision reads of a StatefulSet.
type statefulSetView struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Replicas *int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		ReadyReplicas int32 `json:"readyReplicas"`
		Replicas      int32 `json:"replicas"`
	} `json:"status"`
}

type input struct {
	c        *sparkv1.SparkCluster
	specErrs field.ErrorList
	children metacontroller.ChildMap
	sets     map[string]*statefulSetView
	pods     []*podView // the cluster's Pods, sent as related objects (see Customize)
}

// podView is what the decision reads of a master or worker Pod: why it does not run.
type podView struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Status   corev1.PodStatus  `json:"status"`
}

// problem is why a Pod does not run, and whether the cluster cannot be scheduled (as opposed
// to failing once placed); "" when nothing is wrong that the Pod says.
func (p *podView) problem() (msg string, scheduling bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fmt.Sprintf("Pod %s cannot be scheduled: %s", p.Metadata.Name, c.Message), true
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError":
				return fmt.Sprintf("Pod %s: container %s is waiting: %s: %s", p.Metadata.Name, cs.Name, w.Reason, w.Message), false
			}
		}
	}
	return "", false
}

func decodeRequest(req *metacontroller.SyncRequest) (*input, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("empty request")
	}
	c, specErrs, err := metacontroller.DecodeParent(req.Parent, sparkv1.GroupVersion.WithKind(sparkv1.KindSparkCluster), false, sparkv1.DecodeSparkCluster)
	if err != nil {
		return nil, err
	}
	if req.Finalizing && c.DeletionTimestamp == nil {
		return nil, metacontroller.RequestErrorf("finalizing request for SparkCluster %s/%s, which has no metadata.deletionTimestamp: only a parent being deleted is finalized", c.Namespace, c.Name)
	}
	if err := req.TidyObserved(c.Namespace); err != nil {
		return nil, err
	}
	in := &input{c: c, specErrs: specErrs, children: req.Children, sets: map[string]*statefulSetView{}}
	for _, n := range req.Children.Names(keyStatefulSet) {
		v := &statefulSetView{}
		if _, err := req.Children.Decode(keyStatefulSet, n, v); err != nil {
			return nil, metacontroller.RequestErrorf("%w", err)
		}
		in.sets[n] = v
	}
	for _, n := range req.Related.Names(keyPod) {
		p := &podView{}
		if _, err := req.Related.Decode(keyPod, n, p); err != nil {
			return nil, metacontroller.RequestErrorf("%w", err)
		}
		in.pods = append(in.pods, p)
	}
	return in, nil
}

// Hooks are the SparkCluster's hooks.
func Hooks() hook.Kind {
	return hook.Kind{Name: "sparkcluster", Sync: Sync, Finalize: Finalize, Customize: Customize}
}

// Sync is the sync hook of a SparkCluster; a finalizing request is answered as by Finalize.
func Sync(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
	in, err := decodeRequest(req)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	// The decision edits a copy of the status: the observed one stays as decoded, for the story.
	told := hook.NewTeller(in.c.TypeMeta, &in.c.ObjectMeta, in.c.Status, Events)
	d := &decider{in: in, now: now.UTC().Truncate(time.Second), status: *in.c.Status.DeepCopy()}
	d.result.From = in.c.Status.CurrentState.CurrentStateSummary
	if req.Finalizing {
		d.setState(sparkv1.StateResourceReleased, "the SparkCluster is deleted: its master and workers are released")
		resp := d.response(in.observedCount() == 0)
		return resp, d.outcome(told, resp), nil
	}
	d.decide()
	if err := checkStatefulSetsKept(in, d.children, &d.status); err != nil {
		return nil, hook.Outcome{}, err
	}
	resp := d.response(false)
	return resp, d.outcome(told, resp), nil
}

// Finalize is the finalize hook: every child goes; the SparkCluster may go once none is seen.
// Its outcome tells no story: the parent is on its way out.
func Finalize(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
	if req != nil {
		req.Finalizing = true
	}
	resp, outcome, err := Sync(req, now)
	outcome.Story = nil
	return resp, outcome, err
}

func (d *decider) outcome(told hook.Teller[sparkv1.ClusterStatus], resp *metacontroller.SyncResponse) hook.Outcome {
	return hook.Outcome{Kind: sparkv1.KindSparkCluster, From: d.result.From, To: d.result.To,
		ValidationFailed: d.result.ValidationFailed, Story: told.Story(resp.Status)}
}

type decider struct {
	in       *input
	now      time.Time
	status   sparkv1.ClusterStatus
	children []any
	result   result
}

func (d *decider) decide() {
	c := d.in.c
	d.status.ObservedGeneration = c.Generation
	d.status.CurrentAttemptSummary = &sparkv1.ClusterAttemptSummary{}
	errs := d.in.specErrs
	if len(errs) == 0 {
		errs = sparkv1.ValidateSparkCluster(c)
	}
	if len(errs) > 0 {
		d.result.ValidationFailed = true
		// Whatever runs stays; the spec is reported until it is fixed.
		d.keepObserved()
		d.setState(sparkv1.StateFailed, "the spec is invalid: "+errs.ToAggregate().Error())
		return
	}
	objs := build(c)
	if c.Spec.Suspend {
		d.suspend(objs)
		return
	}
	if objs.hpa != nil {
		objs.worker.Spec.Replicas = workerReplicas(c, d.in.sets[objs.worker.Name])
	}
	d.children = objs.list()
	d.keepForeignStatefulSets()
	master, workers := d.ready(name(c, roleMaster)), d.ready(name(c, roleWorker))
	want := c.Spec.ClusterTolerations.InstanceConfig.MinWorkers
	if master >= 1 && workers >= want {
		d.setState(sparkv1.StateRunningHealthy, fmt.Sprintf("the master is ready at %s with %d ready workers", MasterURL(c), workers))
		return
	}
	waiting := fmt.Sprintf("the master (%d/1 ready) and at least %d workers (%d ready)", master, want, workers)
	for _, p := range d.in.pods {
		if msg, scheduling := p.problem(); msg != "" {
			state := sparkv1.StateFailed
			if scheduling {
				state = sparkv1.StateSchedulingFailure
			}
			d.setState(state, msg+"; waiting for "+waiting)
			return
		}
	}
	d.setState(sparkv1.StateSubmitted, "waiting for "+waiting)
}

// suspend releases the master and the workers: only the Services stay, and the NetworkPolicy
// once made (a cluster created suspended gets none until it runs), as Apache's operator does.
// Leaving the cluster's StatefulSets out of the answer is what deletes them; checkStatefulSetsKept
// allows it for this decision alone.
func (d *decider) suspend(objs *objects) {
	d.children = []any{objs.masterSvc, objs.workerSvc}
	if _, made := d.in.children[keyPolicy][objs.policy.Name]; made {
		d.children = append(d.children, objs.policy)
	}
	d.keepForeignStatefulSets()
	d.setState(sparkv1.StateSuspended, "spec.suspend is true: the master and the workers are released until it is false; the Services are kept")
	d.status.CurrentState.SuspendReason = sparkv1.SuspendReasonSpec
}

// keepForeignStatefulSets keeps, as they are, the StatefulSets the cluster owns but its spec
// does not make (adopted, or left by another version): deleting one could take running
// executors down, and suspending is not theirs.
func (d *decider) keepForeignStatefulSets() {
	own := map[string]bool{name(d.in.c, roleMaster): true, name(d.in.c, roleWorker): true}
	for _, n := range d.in.children.Names(keyStatefulSet) {
		if !own[n] {
			if obj := metacontroller.AsAnswered(d.in.children[keyStatefulSet][n]); obj != nil {
				d.children = append(d.children, obj)
			}
		}
	}
}

// Customize asks Metacontroller for the cluster's Pods, which its StatefulSets create, so that
// the state can say why they do not run.
func Customize(req *metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("request has no parent")
	}
	c, _, err := metacontroller.DecodeParent(req.Parent, sparkv1.GroupVersion.WithKind(sparkv1.KindSparkCluster), false, sparkv1.DecodeSparkCluster)
	if err != nil {
		return nil, err
	}
	return &metacontroller.CustomizeResponse{RelatedResources: []metacontroller.RelatedResourceRule{{
		APIVersion: "v1", Resource: "pods",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelClusterName: c.Name}},
	}}}, nil
}

// workerReplicas is the worker count to answer while an autoscaler scales the workers: initWorkers
// when the StatefulSet is made or initWorkers was edited since it was last answered, else the
// count the StatefulSet has now, which is the autoscaler's (or kubectl scale's). Metacontroller's
// apply writes every desired scalar on every sync, whether or not it changed since the last
// apply, so answering initWorkers each time would undo each scaling; answering no count would
// start the pool at one worker.
func workerReplicas(c *sparkv1.SparkCluster, observed *statefulSetView) *int32 {
	init := c.Spec.ClusterTolerations.InstanceConfig.InitWorkers
	if observed == nil || observed.Spec.Replicas == nil {
		return &init
	}
	if recorded, ok := observed.Metadata.Annotations[AnnotationInitWorkers]; ok {
		if recorded != strconv.Itoa(int(init)) {
			return &init
		}
		return observed.Spec.Replicas
	}
	// Not recorded: the pool was answered a fixed count (no autoscaler until this edit), and
	// the new initWorkers applies; or it was answered no count (a version that left it to the
	// autoscaler alone) or was adopted, and the running pool is kept.
	var applied struct {
		Spec struct {
			Replicas *int32 `json:"replicas"`
		} `json:"spec"`
	}
	if last := observed.Metadata.Annotations[metacontroller.LastAppliedAnnotation]; last != "" &&
		json.Unmarshal([]byte(last), &applied) == nil && applied.Spec.Replicas != nil {
		return &init
	}
	return observed.Spec.Replicas
}

func (d *decider) ready(stsName string) int32 {
	// A StatefulSet being deleted (a suspended cluster's, before it resumes) counts no more.
	if v := d.in.sets[stsName]; v != nil && v.Metadata.DeletionTimestamp == nil {
		return v.Status.ReadyReplicas
	}
	return 0
}

// setState records the state; the history gets an entry only when the state changes, and keeps
// the last historyLimit.
func (d *decider) setState(summary, msg string) {
	st := &d.status
	if st.CurrentState.CurrentStateSummary == summary {
		st.CurrentState.Message = msg
		return
	}
	st.CurrentState = sparkv1.ClusterState{CurrentStateSummary: summary, LastTransitionTime: d.now.Format(time.RFC3339), Message: msg}
	keys := historyKeys(st.StateTransitionHistory)
	next := 0
	if len(keys) > 0 {
		next = keys[len(keys)-1] + 1
	}
	if st.StateTransitionHistory == nil {
		st.StateTransitionHistory = map[string]sparkv1.ClusterState{}
	}
	st.StateTransitionHistory[strconv.Itoa(next)] = st.CurrentState
	for _, k := range historyKeys(st.StateTransitionHistory) {
		if len(st.StateTransitionHistory) <= historyLimit {
			break
		}
		delete(st.StateTransitionHistory, strconv.Itoa(k))
	}
}

// conditionReady is the condition `kubectl wait --for=condition=Ready` waits on.
const conditionReady = "Ready"

// setReady derives the Ready condition from the state: it moves, and its transition time with it,
// only when the state does.
func (d *decider) setReady() {
	state := d.status.CurrentState
	status, reason := metav1.ConditionFalse, state.CurrentStateSummary
	if reason == "" {
		reason = "Unknown"
	}
	if reason == sparkv1.StateRunningHealthy {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&d.status.Conditions, metav1.Condition{
		Type: conditionReady, Status: status, Reason: reason, Message: state.Message,
		ObservedGeneration: d.in.c.Generation, LastTransitionTime: metav1.NewTime(d.now),
	})
}

// historyKeys are the numeric keys of the history in order; others are dropped.
func historyKeys(h map[string]sparkv1.ClusterState) []int {
	var keys []int
	for k := range h {
		if n, err := strconv.Atoi(k); err == nil {
			keys = append(keys, n)
		}
	}
	sort.Ints(keys)
	return keys
}

func (d *decider) keepObserved() {
	for _, key := range childKeys {
		for _, n := range d.in.children.Names(key) {
			if obj := metacontroller.AsAnswered(d.in.children[key][n]); obj != nil {
				d.children = append(d.children, obj)
			}
		}
	}
}

func (d *decider) response(finalized bool) *metacontroller.SyncResponse {
	d.result.To = d.status.CurrentState.CurrentStateSummary
	d.setReady()
	resp := &metacontroller.SyncResponse{Status: &d.status, Children: make([]any, len(d.children)), Finalized: finalized}
	for i, obj := range d.children {
		resp.Children[i] = metacontroller.Wire(obj)
	}
	return resp
}

func (in *input) observedCount() int {
	n := 0
	for _, key := range childKeys {
		n += len(in.children[key])
	}
	return n
}

// checkStatefulSetsKept is the invariant on a finished answer: every observed StatefulSet is
// in it (a cluster not being deleted keeps its master and workers), except the cluster's own
// master and worker when the answer suspends it: spec.suspend is true and the state answered
// is Suspended. It runs apart from the decision, so that a mistake there is refused (409)
// instead of deleting a running cluster.
func checkStatefulSetsKept(in *input, children []any, status *sparkv1.ClusterStatus) error {
	suspends := in.c.Spec.Suspend && status.CurrentState.CurrentStateSummary == sparkv1.StateSuspended
	answered := map[string]bool{}
	for _, child := range children {
		kind, name, err := metacontroller.Identity(child)
		if err != nil {
			return err
		}
		if kind == "StatefulSet" {
			answered[name] = true
		}
	}
	for n := range in.sets {
		if suspends && (n == name(in.c, roleMaster) || n == name(in.c, roleWorker)) {
			continue
		}
		if !answered[n] {
			return metacontroller.Refusef(RefusedStatefulSetDropped,
				"SparkCluster %s/%s: the answer would delete the StatefulSet %s of a cluster that is not being deleted; keeping every child",
				in.c.Namespace, in.c.Name, n)
		}
	}
	return nil
}
