package sparkapp

import (
	"regexp"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types in status.conditions: the Apache Spark Kubernetes Operator's finer phases of
// an attempt, next to the Kubeflow applicationState.
const (
	condSpecValid       = "SpecValid"
	condDriverRequested = "DriverRequested"
	condDriverStarted   = "DriverStarted"
	condDriverReady     = "DriverReady"
	condExecutorsReady  = "ExecutorsReady"
	condDriverMissing   = "DriverMissing"
	condTimedOut        = "TimedOut"
	condFailed          = "Failed"
	condExpired         = "Expired"
)

// Condition reasons that the decision reads back.
const (
	reasonInvalidSpec       = "InvalidSpec"
	reasonBuildFailed       = "BuildFailed"
	reasonExecutorsStarting = "Starting"
	reasonExecutorsBelow    = "BelowMinimum"
)

// setCondition sets a condition; at is its lastTransitionTime when the status flips. Taking
// the instant from what was observed (a container's start, the Pod's Ready transition) rather
// than from the clock keeps repeated syncs byte-identical.
func (d *decider) setCondition(typ string, status metav1.ConditionStatus, reason, msg string, at time.Time) {
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	meta.SetStatusCondition(&d.status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		ObservedGeneration: d.in.app.Generation,
		LastTransitionTime: metav1.NewTime(at.UTC().Truncate(time.Second)),
	})
}

func (d *decider) removeCondition(types ...string) {
	for _, t := range types {
		meta.RemoveStatusCondition(&d.status.Conditions, t)
	}
	if len(d.status.Conditions) == 0 {
		d.status.Conditions = nil
	}
}

func (d *decider) condition(typ string) *metav1.Condition {
	return meta.FindStatusCondition(d.status.Conditions, typ)
}

// reasonPattern is the CRD's pattern for condition reasons; a kubelet waiting reason outside it
// would make the whole status invalid.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

func conditionReason(s string) string {
	if len(s) <= 1024 && reasonPattern.MatchString(s) {
		return s
	}
	return "Waiting"
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
