package sparkapp

import (
	"encoding/json"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/hook"
)

// metrics tells what Kubeflow's metrics read of this decision. The executors that ended are
// those whose answered state is COMPLETED or FAILED and whose observed state was not: a stale
// sync that repeats the decision tells them again, as it tells its transition again.
func (d *decider) metrics() *hook.Application {
	m := &hook.Application{
		Namespace:          d.in.app.Namespace,
		From:               string(d.decision.From),
		To:                 string(d.decision.To),
		Labels:             d.in.app.Labels,
		SubmissionAttempts: d.status.SubmissionAttempts,
		ExecutionAttempts:  d.status.ExecutionAttempts,
	}
	if created := d.in.app.CreationTimestamp.Time; !created.IsZero() {
		m.SinceCreation = d.realNow.Sub(created)
	}
	if start, end := d.status.LastSubmissionAttemptTime.Time, d.status.TerminationTime.Time; !start.IsZero() && !end.IsZero() {
		m.Execution = end.Sub(start)
	}
	observed := d.in.app.Status.ExecutorState
	for name, st := range d.status.ExecutorState {
		if (st != v1beta2.ExecutorStateCompleted && st != v1beta2.ExecutorStateFailed) || observed[name] == st {
			continue
		}
		m.Executors = append(m.Executors, hook.Executor{Labels: d.executorLabels(name), Failed: st == v1beta2.ExecutorStateFailed})
	}
	return m
}

// executorLabels are the labels of an executor that ended, which Kubeflow's metrics read.
func (d *decider) executorLabels(name string) map[string]string {
	for _, pod := range d.in.execs {
		if pod.name == name && pod.full != nil {
			var labels map[string]string
			if json.Unmarshal(pod.labels, &labels) != nil {
				return nil
			}
			return labels
		}
	}
	return nil
}
