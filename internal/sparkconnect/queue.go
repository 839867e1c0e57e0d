package sparkconnect

import (
	"encoding/json"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// condQueued is true while the server waits for Kueue to admit its Workload, with Kueue's reason
// and message; false (reason Admitted) once the server runs under an admission.
const (
	condQueued     = "Queued"
	reasonAdmitted = "Admitted"
)

// queue is a queued SparkConnect's view of Kueue in one request: nil unless the operator
// enables Kueue (the registration declares Workloads) and the SparkConnect has the queue label.
type queue struct {
	name     string
	workload string
	observed *kueue.Observed
	raw      json.RawMessage
	related  metacontroller.ChildMap
}

func newQueue(in *input, related metacontroller.ChildMap) (*queue, error) {
	if _, enabled := in.children[kueue.KeyWorkload]; !enabled {
		return nil, nil
	}
	name := in.sc.Labels[kueue.QueueNameLabel]
	if name == "" {
		return nil, nil
	}
	q := &queue{name: name, workload: kueue.WorkloadName("sparkconnect", in.sc.Name), related: related}
	if raw, ok := in.children[kueue.KeyWorkload][q.workload]; ok {
		obs, err := kueue.Observe(raw)
		if err != nil {
			return nil, metacontroller.RequestErrorf("%w", err)
		}
		q.observed, q.raw = obs, raw
	}
	return q, nil
}

func (q *queue) admitted() bool { return q.observed != nil && q.observed.Admitted() }

// placement applies the admission to the server's application spec, for build.
func (q *queue) placement(spec *v1beta2.SparkApplicationSpec) error {
	return kueue.ApplyAdmission(q.observed, q.related[kueue.KeyResourceFlavor], spec)
}

// gate decides for a queued SparkConnect whose server does not run: true when the server may
// start (the Workload is admitted and its placement known); otherwise the answer is the
// Workload alone (created, kept, or left out when spent or built for another spec, which
// deletes it and frees its quota; the next sync queues a new one) and the state says why.
func (d *decider) gate(hash string, sub children.Submission) bool {
	q := d.in.queue
	obs := q.observed
	switch {
	case obs == nil:
		if problem := kueue.QueueNameProblem(q.name); problem != "" {
			d.queued("InvalidQueueName", problem)
			return false
		}
		objs, err := build(d.in.sc, sub, d.podSetOptions(), nil)
		if err != nil {
			d.keepObserved()
			d.setState(v1alpha1.StateFailed, "ServerNotBuilt", truncate(err.Error()))
			return false
		}
		meta := metav1.ObjectMeta{Name: q.workload, Namespace: d.in.sc.Namespace, Labels: map[string]string{LabelConnectName: d.in.sc.Name}}
		wl, err := kueue.NewWorkload(meta, hash, q.name, objs.podSets, q.related[kueue.KeyPriorityClass])
		if err != nil {
			d.queued("PriorityClassNotFound", err.Error())
			return false
		}
		d.children = []any{wl}
		d.queued("Pending", fmt.Sprintf("Workload %s created in LocalQueue %s; waiting for Kueue", q.workload, q.name))
	case obs.Spent():
		reason, msg := obs.Message()
		d.queued(reason, fmt.Sprintf("Workload %s is spent (%s); it is deleted to free its quota and a new one is queued", q.workload, msg))
	case !obs.Reusable(q.name, hash):
		d.queued("Requeueing", fmt.Sprintf("Workload %s was queued for another spec or LocalQueue (%s); a new one replaces it", q.workload, obs.QueueName))
	case !obs.Admitted():
		d.children = []any{q.observed.Answered(q.raw)}
		reason, msg := obs.Message()
		d.queued(reason, msg)
	default:
		if err := q.placement(&v1beta2.SparkApplicationSpec{}); err != nil {
			d.children = []any{q.observed.Answered(q.raw)}
			d.queued("PlacementUnknown", err.Error())
			return false
		}
		d.setCondition(condQueued, metav1.ConditionFalse, reasonAdmitted, fmt.Sprintf("Workload %s admitted by Kueue", q.workload))
		return true
	}
	return false
}

// queued reports a server waiting in its queue: not ready, with Kueue's reason and message.
func (d *decider) queued(reason, msg string) {
	d.setNotReady("Queued", fmt.Sprintf("waiting for Kueue to admit Workload %s", d.in.queue.workload))
	d.setCondition(condQueued, metav1.ConditionTrue, conditionReason(reason), msg)
}

// evicted stops a server whose admission is gone (evicted, deleted): the server Pod goes, and
// its executors with it, and the SparkConnect waits in its queue again.
func (d *decider) evicted() {
	q := d.in.queue
	reason, msg := "WorkloadDeleted", fmt.Sprintf("Workload %s was deleted", q.workload)
	if q.observed != nil {
		reason, msg = q.observed.Message()
		d.children = []any{q.observed.Answered(q.raw)}
	}
	d.result.Restart = "Evicted"
	d.setNotReady("Evicted", "the server was stopped by Kueue")
	d.setCondition(condQueued, metav1.ConditionTrue, conditionReason(reason),
		fmt.Sprintf("the server was stopped by Kueue and waits in LocalQueue %s again: %s", q.name, msg))
}

// keepWorkload adds the observed Workload to an answer that runs a server under it.
func (d *decider) keepWorkload() {
	if q := d.in.queue; q != nil && q.observed != nil && !q.observed.Deleting {
		d.children = append(d.children, q.observed.Answered(q.raw))
	}
}

// reasonPattern is the CRD's pattern for condition reasons; Kueue's reasons fit it, but a
// reason that does not would make the whole status invalid.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

func conditionReason(s string) string {
	if len(s) <= 1024 && reasonPattern.MatchString(s) {
		return s
	}
	return "Waiting"
}

// admissionLost is true when the running server started under an admission that is gone.
func (d *decider) admissionLost() bool {
	c := meta.FindStatusCondition(d.status.Conditions, condQueued)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == reasonAdmitted && !d.in.queue.admitted()
}

func (d *decider) podSetOptions() children.Options {
	opts := d.cfg.Driver
	opts.PodSets = true
	return opts
}
