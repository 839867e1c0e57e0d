package sparkapp

import (
	"bytes"
	"encoding/json"
	"fmt"

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
// no children, and the observed status unchanged (the empty one while there is none). Metacontroller writes the answered status
// over the stored one with only observedGeneration added, so an omitted status would erase what
// the manager (MultiKueue's copy from the worker) wrote; echoing it writes nothing. A finalizing
// request is answered the same way, finalized once no child is observed: the deletion ends
// whatever runs. handled is false for an application sparkhooks runs.
func leaveToManager(req *metacontroller.SyncRequest, finalizing bool) (resp *metacontroller.SyncResponse, o hook.Outcome, handled bool, err error) {
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
	story := event.Story{Regarding: event.Regarding(v.TypeMeta, &v.Metadata), Events: managedElsewhereEvents(by, v.Status)}
	return &metacontroller.SyncResponse{Status: status, Children: []any{}}, hook.Outcome{
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
	who := fmt.Sprintf("the controller %q", by)
	if by == v1beta2.ManagedByMultiKueue {
		who = "Kueue's MultiKueue, which runs it on a worker cluster and copies its status here,"
	}
	return []event.Event{event.New(event.Normal, EventManagedElsewhere, actionSubmit,
		fmt.Sprintf("spec.managedBy is %q: %s manages this application; sparkhooks creates nothing for it and leaves its status alone", by, who))}
}
