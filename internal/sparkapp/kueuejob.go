package sparkapp

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
)

// Under Kueue's own SparkApplication integration (Config.KueueIntegration) Kueue makes the
// Workload itself and drives the application through spec.suspend: its webhook creates a
// labelled application suspended; on admission one update unsuspends it and writes the
// admission's node selectors, tolerations, labels and annotations into spec.driver and
// spec.executor; on eviction one update suspends it again and puts those fields back. The hooks
// then run the spec as it stands when it is unsuspended, and tell Kueue's part in the Queued
// condition, as they do for their own Workloads.

// kueueJob is true when Kueue's integration queues this application: the operator says so, the
// application names a LocalQueue, and the registration declares no Workload child of ours.
func (d *decider) kueueJob() bool {
	return d.cfg.KueueIntegration && d.queue == nil && d.in.app.Labels[kueue.QueueNameLabel] != ""
}

// kueueEvicted ends the attempt Kueue suspended while it was active: its children go, it is
// not counted against the restart policy's retries (as for an eviction of our own Workload),
// and the application waits in its LocalQueue. The placement Kueue put back in the same update
// is no spec change of the user's, so it does not invalidate the attempt.
func (d *decider) kueueEvicted() {
	attempt := d.status.SubmissionAttempts
	d.decision.RestartReason = "Evicted"
	if d.status.ExecutionAttempts > 0 {
		d.status.ExecutionAttempts--
	}
	d.suspend()
	d.setCondition(condQueued, metav1.ConditionTrue, "Evicted",
		fmt.Sprintf("Kueue suspended the application (spec.suspend): attempt %d is stopped, and the application waits in LocalQueue %s again", attempt, d.in.app.Labels[kueue.QueueNameLabel]), d.now)
	d.removeCondition(condDriverRequested, condDriverStarted, condDriverReady, condExecutorsReady, condDriverMissing, condTimedOut, condExecutorFailed)
}

// kueueConditions keeps the Queued condition of an application Kueue's integration queues: true
// while it is held suspended, false (Admitted) from the submission Kueue's resume started.
func (d *decider) kueueConditions() {
	if !d.kueueJob() {
		return
	}
	st := d.status.AppState.State
	held := d.suspended() && (st == v1beta2.ApplicationStateSuspended || st == v1beta2.ApplicationStateSuspending)
	if c := d.condition(condQueued); held && (c == nil || c.Status != metav1.ConditionTrue) {
		d.setCondition(condQueued, metav1.ConditionTrue, "Pending",
			fmt.Sprintf("spec.suspend is true: Kueue's SparkApplication integration starts the application once it admits its Workload in LocalQueue %s", d.in.app.Labels[kueue.QueueNameLabel]), d.now)
	}
}

// kueueAdmitted marks a submission that Kueue's resume started: the application was held in its
// queue (Queued true) and runs now, with the admission's placement in its spec.
func (d *decider) kueueAdmitted() {
	if !d.kueueJob() {
		return
	}
	if c := d.condition(condQueued); c == nil || c.Status != metav1.ConditionTrue {
		return // never held: created unsuspended, before Kueue saw it
	}
	d.setCondition(condQueued, metav1.ConditionFalse, reasonAdmitted,
		fmt.Sprintf("Kueue admitted the application (spec.suspend is false): attempt %d runs with the admission's placement in its spec", d.status.SubmissionAttempts), d.now)
}
