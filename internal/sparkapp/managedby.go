package sparkapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// RefusedManagedElsewhere is the refusal when the parent names another controller in
// spec.managedBy, yet a live Pod of its own is observed. Leaving the Pod out would delete it,
// and keeping it would be running the application for that controller; only a person can tell
// which was meant.
const RefusedManagedElsewhere = "ManagedElsewhere"

// managedView is what the managed-elsewhere answer reads of the parent. Its status stays raw:
// the other controller writes it, in terms (Kueue mirrors a worker cluster's) that need not
// decode as ours do.
type managedView struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		ManagedBy json.RawMessage `json:"managedBy"`
	} `json:"spec"`
	Status json.RawMessage `json:"status"`
}

// manager reads spec.managedBy; set is false when it is unset, or not a string, which the full
// decoding then reports like any other spec it cannot read.
func (v *managedView) manager() (by string, set bool) {
	if len(v.Spec.ManagedBy) == 0 || json.Unmarshal(v.Spec.ManagedBy, &by) != nil || bytes.Equal(v.Spec.ManagedBy, []byte("null")) {
		return "", false
	}
	return by, true
}

// namesManager tells whether the parent may set spec.managedBy. Most parents never name a
// manager; the API server writes keys unescaped, so one that does has the key, and the rest skip
// a second decoding of the parent.
func namesManager(parent []byte) bool {
	return bytes.Contains(parent, []byte(`"managedBy"`))
}

// leaveToManager answers the sync of an application another controller runs (spec.managedBy):
// no children but, for one MultiKueue dispatches, its Workload (see dispatchedWorkload), and the
// observed status unchanged (the empty one while there is none). Metacontroller writes the
// answered status over the stored one with only observedGeneration added, so an omitted status
// would erase what the manager (MultiKueue's copy from the worker) wrote; echoing it writes
// nothing. A finalizing request is answered the same way, finalized once no child is observed:
// the deletion ends whatever runs. handled is false for an application sparkhooks runs.
func leaveToManager(req *metacontroller.SyncRequest, finalizing bool, now time.Time, cfg Config) (resp *metacontroller.SyncResponse, o hook.Outcome, handled bool, err error) {
	if !namesManager(req.Parent) {
		return nil, hook.Outcome{}, false, nil
	}
	var v managedView
	if json.Unmarshal(req.Parent, &v) != nil {
		return nil, hook.Outcome{}, false, nil // the full decoding says what is wrong
	}
	by, set := v.manager()
	if !set || by == v1beta2.ManagedBySparkOperator {
		return nil, hook.Outcome{}, false, nil
	}
	if err := metacontroller.CheckParentType(v.TypeMeta, v1beta2.GroupVersion.WithKind(v1beta2.KindSparkApplication)); err != nil {
		return nil, hook.Outcome{}, true, err
	}
	if v.Metadata.Name == "" || v.Metadata.UID == "" {
		return nil, hook.Outcome{}, true, metacontroller.RequestErrorf("parent SparkApplication lacks metadata.name or metadata.uid")
	}
	if finalizing && v.Metadata.DeletionTimestamp == nil {
		return nil, hook.Outcome{}, true, metacontroller.RequestErrorf("finalizing SparkApplication %s/%s, which has no metadata.deletionTimestamp: only a parent being deleted is finalized", v.Metadata.Namespace, v.Metadata.Name)
	}
	if err := req.TidyObserved(v.Metadata.Namespace); err != nil {
		return nil, hook.Outcome{}, true, err
	}
	// With no status yet, the empty one: Metacontroller writes observedGeneration into whatever
	// is answered, and the CRD refuses a status without driverInfo.
	var status any = &v1beta2.SparkApplicationStatus{}
	if len(v.Status) > 0 && !bytes.Equal(v.Status, []byte("null")) {
		status = v.Status
	}
	if finalizing {
		observed := 0
		for _, key := range childKeys {
			observed += len(req.Children[key])
		}
		return &metacontroller.SyncResponse{Status: status, Children: []any{}, Finalized: observed == 0}, hook.Outcome{}, true, nil
	}
	for _, name := range req.Children.Names(keyPod) {
		pod := &podView{}
		if _, err := req.Children.Decode(keyPod, name, pod); err != nil {
			return nil, hook.Outcome{}, true, metacontroller.RequestErrorf("%w", err)
		}
		if terminatedPod(pod) || pod.Metadata.DeletionTimestamp != nil {
			continue
		}
		return nil, hook.Outcome{}, true, metacontroller.Refusef(RefusedManagedElsewhere,
			"refusing to decide: spec.managedBy is %q, so sparkhooks must not run this application, but its Pod %s is live and leaving it out would delete it: delete the Pod to leave the application to its manager, or delete the SparkApplication",
			by, name)
	}
	// An application whose value the validation refuses is counted as one, though left alone:
	// its manager, if any, may be running it.
	valid := by == v1beta2.ManagedByMultiKueue
	resp = &metacontroller.SyncResponse{Status: status, Children: []any{}}
	events := managedElsewhereEvents(by, v.Status)
	if valid {
		wl, err := dispatchedWorkload(req, now, cfg)
		if err != nil {
			return nil, hook.Outcome{}, true, err
		}
		if wl.child != nil {
			resp.Children = append(resp.Children, metacontroller.Wire(wl.child))
		}
		if wl.resync {
			resp.ResyncAfterSeconds = promptResync.Seconds()
		}
		if wl.problem != "" {
			events = append(events, event.New(event.Warning, EventAdmissionPending, actionQueue,
				"no Workload for MultiKueue to dispatch: "+wl.problem))
		}
	}
	story := event.Story{Regarding: event.Regarding(v.TypeMeta, &v.Metadata), Events: events}
	return resp, hook.Outcome{
		Kind:             v1beta2.KindSparkApplication,
		ValidationFailed: !valid,
		Story:            func() (event.Story, error) { return story, nil },
	}, true, nil
}

// managedElsewhereEvents tells, once, that the application is left to its manager: in the sync
// that finds no observedGeneration in the status, which Metacontroller writes after every
// answer (and MultiKueue's copy of the worker's status carries), so every later sync has it.
func managedElsewhereEvents(by string, status json.RawMessage) []event.Event {
	var seen struct {
		ObservedGeneration int64 `json:"observedGeneration"`
	}
	if len(status) > 0 && json.Unmarshal(status, &seen) == nil && seen.ObservedGeneration != 0 {
		return nil
	}
	who, what := fmt.Sprintf("the controller %q", by), "creates nothing for it"
	if by == v1beta2.ManagedByMultiKueue {
		who = "Kueue's MultiKueue, which runs it on a worker cluster and copies its status here,"
		what = "creates no Pod for it (only the Kueue Workload MultiKueue dispatches, when it is queued)"
	}
	return []event.Event{event.New(event.Normal, EventManagedElsewhere, actionSubmit,
		fmt.Sprintf("spec.managedBy is %q: %s manages this application; sparkhooks %s and leaves its status alone", by, who, what))}
}

// managerWorkload is the Workload answer for an application MultiKueue dispatches.
type managerWorkload struct {
	child   any    // the Workload to keep or create; nil to have none
	resync  bool   // a spent Workload was left out: the next sync queues a fresh one
	problem string // why none can be built, for an Event
}

// dispatchedWorkload decides the one child of a queued application MultiKueue dispatches, on
// the manager cluster: the Workload, built as for an application sparkhooks runs. Kueue's
// MultiKueue admission check finds the application through the Workload's owner, copies the
// application (spec.managedBy removed, the Workload's name in kueue.x-k8s.io/prebuilt-workload-name)
// and the Workload to the worker it picks, and copies the worker's status back. The Workload
// is released, which frees the quota on both clusters (MultiKueue deletes the worker's copy
// with it), once the copied status is final for the current spec; a spent one (evicted here or
// on the worker, or deleted) is replaced, as for an application sparkhooks runs. No Workload
// without the queue-name label, or where the operator does not enable Kueue.
func dispatchedWorkload(req *metacontroller.SyncRequest, now time.Time, cfg Config) (managerWorkload, error) {
	if _, enabled := req.Children[keyWorkload]; !enabled {
		return managerWorkload{}, nil
	}
	in, err := decodeRequest(req)
	if err != nil {
		return managerWorkload{}, err
	}
	if in.queue == nil || in.queue.prebuilt {
		return managerWorkload{}, nil
	}
	hold, err := cfg.Namespaces.notSelected(in)
	if err != nil {
		return managerWorkload{}, err
	}
	d := newDecider(in, now, cfg)
	q := d.queue
	switch obs := q.observed; {
	case d.invalid != "":
		return managerWorkload{problem: "the spec is invalid: " + d.invalid}, nil
	case d.mirroredFinal():
		return managerWorkload{}, nil
	case obs == nil && hold != "":
		return managerWorkload{problem: hold}, nil
	case obs == nil:
		wl, _, msg := d.buildWorkload()
		if wl == nil {
			return managerWorkload{problem: msg}, nil
		}
		return managerWorkload{child: wl}, nil
	case obs.Spent() || !obs.Reusable(q.name, d.hash):
		return managerWorkload{resync: true}, nil
	default:
		return managerWorkload{child: obs.Answered(q.raw)}, nil
	}
}

// mirroredFinal is true when the status MultiKueue copied from the worker is final for the
// current spec: the worker's sparkhooks hashes the same spec (managedBy is no part of the hash)
// into submittedSpecHash. A spec edited since runs again, under a new Workload. A final status
// without a hash comes from a worker whose operator writes none (Kubeflow's), and is final.
func (d *decider) mirroredFinal() bool {
	st := d.status.AppState.State
	return (st == v1beta2.ApplicationStateCompleted || st == v1beta2.ApplicationStateFailed) &&
		(d.status.SubmittedSpecHash == d.hash || d.status.SubmittedSpecHash == "")
}
