package sparkapp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Kueue's kinds as Metacontroller files them in a request.
var (
	// keyWorkload is declared only where the operator enables Kueue; its presence in a request
	// is the switch.
	keyWorkload       = kueue.KeyWorkload
	keyResourceFlavor = kueue.KeyResourceFlavor
	keyPriorityClass  = kueue.KeyPriorityClass
)

// condQueued is true while the application waits for Kueue to admit its Workload, with Kueue's
// reason and message; false (reason Admitted) once the current attempt runs under an admission.
const (
	condQueued     = "Queued"
	reasonAdmitted = "Admitted"
)

// queue is a queued application's view of Kueue in one request.
type queue struct {
	name     string          // the LocalQueue, from the queue-name label
	workload string          // the Workload's name
	observed *kueue.Observed // nil when the request shows no Workload of that name
	raw      json.RawMessage
	// prebuilt is true for a Workload another controller made for the application and named in
	// kueue.x-k8s.io/prebuilt-workload-name: on a MultiKueue worker, the copy of the manager's.
	// It is read as a related object, never answered as a child: not ours to create, keep or
	// delete.
	prebuilt bool
	// placeErr is why an admitted Workload's placement cannot be applied yet.
	placeErr error
	// foreign are the other Workloads the application owns, by name: Kueue's own
	// SparkApplication integration queues it too (both Kueue modes are on).
	foreign []string
}

// newQueue reads the queue of an application: nil when it is not queued, because the operator
// does not enable Kueue (the registration declares no Workload child) or the application has
// neither a queue-name label nor a prebuilt Workload.
func newQueue(in *input) (*queue, error) {
	if _, enabled := in.children[keyWorkload]; !enabled {
		return nil, nil
	}
	name := in.app.Labels[kueue.QueueNameLabel]
	prebuilt := kueue.PrebuiltWorkloadName(in.app.ObjectMeta)
	if name == "" && prebuilt == "" {
		return nil, nil
	}
	q := &queue{name: name, workload: kueue.WorkloadName("sparkapplication", in.app.Name)}
	observed := in.children[keyWorkload]
	if prebuilt != "" {
		q.workload, q.prebuilt, observed = prebuilt, true, in.related[keyWorkload]
	}
	if !q.prebuilt {
		for name := range in.children[keyWorkload] {
			if name != q.workload {
				q.foreign = append(q.foreign, name)
			}
		}
		slices.Sort(q.foreign)
	}
	if raw, ok := observed[q.workload]; ok {
		obs, err := kueue.Observe(raw)
		if err != nil {
			return nil, metacontroller.RequestErrorf("%w", err)
		}
		q.observed, q.raw = obs, raw
	}
	return q, nil
}

// admitted is true when the observed Workload is admitted.
func (q *queue) admitted() bool { return q != nil && q.observed != nil && q.observed.Admitted() }

// applyAdmission adds what the admission grants to the spec, decoded for this sync alone (see
// kueue.ApplyAdmission); placeErr says when the placement is not known yet.
func (d *decider) applyAdmission() {
	if q := d.queue; q.admitted() {
		q.placeErr = kueue.ApplyAdmission(q.observed, d.in.related[keyResourceFlavor], &d.spec.Spec)
	}
}

// queueAdmits is the queue's gate in front of every submission. It is true when the Workload is
// admitted and its placement known; otherwise it parks the application in SUSPENDED with the
// Queued condition saying why, its Workload created or kept (a spent one is left out, which
// deletes it and frees its quota; the next sync creates a fresh one).
func (d *decider) queueAdmits() bool {
	q := d.queue
	if q == nil {
		return true
	}
	if len(q.foreign) > 0 {
		d.parkQueued(reasonKueueModeConflict, q.conflict())
		return false
	}
	obs := q.observed
	// keep answers the observed Workload; a prebuilt one is no child of ours.
	keep := func() {
		if !q.prebuilt {
			d.workload = obs.Answered(q.raw)
		}
	}
	switch {
	case obs == nil && q.prebuilt:
		d.parkQueued("WorkloadNotFound", fmt.Sprintf("waiting for Workload %s, named in %s, which the controller that made this application (MultiKueue) creates", q.workload, kueue.PrebuiltWorkloadKey))
	case obs == nil:
		wl, reason, msg := d.buildWorkload()
		if wl == nil && reason == reasonBuildFailed {
			d.failSpec(reasonBuildFailed, msg)
			return false
		}
		if wl == nil {
			d.parkQueued(reason, msg)
			return false
		}
		d.workload = wl
		d.parkQueued("Pending", fmt.Sprintf("Workload %s created in LocalQueue %s; waiting for Kueue", q.workload, q.name))
	case obs.Spent() && q.prebuilt:
		reason, msg := obs.Message()
		d.parkQueued(conditionReason(reason), fmt.Sprintf("Workload %s is spent (%s); the controller that made it (MultiKueue) replaces it or removes this application", q.workload, msg))
	case obs.Spent():
		reason, msg := obs.Message()
		d.parkQueued(conditionReason(reason), fmt.Sprintf("Workload %s is spent (%s); it is deleted to free its quota and a new one is queued", q.workload, msg))
		d.wakeAt(d.now.Add(promptResync))
	case !q.prebuilt && !obs.Reusable(q.name, d.hash):
		d.parkQueued("Requeueing", fmt.Sprintf("Workload %s was queued for another spec or LocalQueue (%s); a new one replaces it", q.workload, obs.QueueName))
		d.wakeAt(d.now.Add(promptResync))
	case !obs.Admitted():
		keep()
		reason, msg := obs.Message()
		d.parkQueued(conditionReason(reason), msg)
	case q.placeErr != nil:
		keep()
		d.parkQueued("PlacementUnknown", q.placeErr.Error())
	default:
		keep()
		d.setCondition(condQueued, metav1.ConditionFalse, reasonAdmitted,
			fmt.Sprintf("Workload %s admitted by Kueue", q.workload), d.now)
		return true
	}
	return false
}

// parkQueued holds the application in SUSPENDED, Kubeflow's state for an application that may
// not run yet, with Kueue's word for why in the Queued condition.
func (d *decider) parkQueued(reason, msg string) {
	d.setState(v1beta2.ApplicationStateSuspended, "")
	d.setCondition(condQueued, metav1.ConditionTrue, reason, msg, d.now)
}

// buildWorkload builds the Workload of the spec as it is, before any admission. A nil Workload
// comes with the reason it cannot be built yet.
func (d *decider) buildWorkload() (wl any, reason, msg string) {
	// Not a spec error: the label is no part of the spec, and an edit of it must be seen again.
	if problem := kueue.QueueNameProblem(d.queue.name); problem != "" {
		return nil, "InvalidQueueName", problem
	}
	opts := d.buildOptions()
	opts.PodSets = true
	objs, err := children.Build(d.spec, d.nextSubmission(), opts)
	if err != nil {
		return nil, reasonBuildFailed, err.Error()
	}
	meta := metav1.ObjectMeta{Name: d.queue.workload, Namespace: d.in.app.Namespace, Labels: map[string]string{sparkpod.LabelAppName: d.in.app.Name}}
	w, err := kueue.NewWorkload(meta, d.hash, d.queue.name, objs.PodSets, d.in.related[keyPriorityClass])
	if err != nil {
		return nil, "PriorityClassNotFound", err.Error()
	}
	return w, "", ""
}

// admissionLost is true when the current attempt started under an admission that is gone: the
// Workload was evicted (preempted, deactivated), finished, or deleted.
func (d *decider) admissionLost() bool {
	if d.queue == nil {
		return false
	}
	c := d.condition(condQueued)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reasonAdmitted {
		return false // started before the application was queued: it runs on as it started
	}
	return !d.queue.admitted()
}

// evicted ends an attempt whose admission is gone: its driver goes, so do the executors it
// owns, and the application waits in the queue again. The attempt is not counted against the
// restart policy's retries.
func (d *decider) evicted() {
	reason, msg := "WorkloadDeleted", fmt.Sprintf("Workload %s was deleted", d.queue.workload)
	if obs := d.queue.observed; obs != nil {
		reason, msg = obs.Message()
	}
	d.decision.RestartReason = "Evicted"
	if d.status.ExecutionAttempts > 0 {
		d.status.ExecutionAttempts--
	}
	d.suspend()
	d.setCondition(condQueued, metav1.ConditionTrue, conditionReason(reason),
		fmt.Sprintf("the attempt was stopped by Kueue and waits in LocalQueue %s again: %s", d.queue.name, msg), d.now)
	d.removeCondition(condDriverRequested, condDriverStarted, condDriverReady, condExecutorsReady, condDriverMissing, condTimedOut, condExecutorFailed)
}

// queueChildren adds the Workload to the answer: the one the gate created or kept, else the
// observed one while an attempt runs under it and in the sync that ends that attempt (whose
// status may not have reached the next sync's input yet; see releaseChildren). Anywhere else a
// Workload is left out, which deletes it and frees its quota at once.
func (d *decider) queueChildren() {
	if d.workload == nil && d.queue != nil && !d.queue.prebuilt && d.queue.observed != nil && activeStates[d.decision.From] && !d.queue.observed.Deleting {
		d.workload = d.queue.observed.Answered(d.queue.raw)
		if !activeStates[d.status.AppState.State] {
			// This sync ends the attempt: the next releases the Workload, and frees its quota
			// for the applications waiting on it, without waiting for an event.
			d.wakeAt(d.now.Add(promptResync))
		}
	}
	if d.workload != nil {
		d.children = append(d.children, d.workload)
	}
	if d.queue != nil {
		// Kueue's; answered as observed so that Metacontroller leaves them be (OnDelete).
		for _, name := range d.queue.foreign {
			d.children = append(d.children, metacontroller.AsAnswered(d.in.children[keyWorkload][name]))
		}
	}
}

// reasonKueueModeConflict is the Queued reason of an application both Kueue modes queue.
const reasonKueueModeConflict = "KueueModeConflict"

// conflict says why an application both Kueue modes queue does not start.
func (q *queue) conflict() string {
	return fmt.Sprintf("Kueue's own SparkApplication integration queues this application too (its Workload %s): choose one Kueue mode (docs/kueue.md#two-modes): leave sparkoperator.k8s.io/sparkapplication out of Kueue's integrations.frameworks, or turn the chart's metacontroller.kueue off and kueue.sparkApplicationIntegration on", strings.Join(q.foreign, ", "))
}

// kueueModeConflict reports, on an application both Kueue modes queue, why it waits, whatever
// the decision (Kueue's integration suspends it too); an attempt already running is left be.
func (d *decider) kueueModeConflict() {
	if d.queue == nil || len(d.queue.foreign) == 0 || activeStates[d.status.AppState.State] {
		return
	}
	d.setCondition(condQueued, metav1.ConditionTrue, reasonKueueModeConflict, d.queue.conflict(), d.now)
}
