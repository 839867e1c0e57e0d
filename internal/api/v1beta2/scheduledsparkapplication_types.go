package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=scheduledsparkapp,singular=scheduledsparkapplication
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubeflow/spark-operator/pull/1298"
// +kubebuilder:subresource:status
// Kubeflow's columns, types included (Suspend is a string here, a boolean on SparkApplication);
// crds/printer_columns_test.go pins them.
// +kubebuilder:printcolumn:name=Schedule,type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name=TimeZone,type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name=Suspend,type=string,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name=Last Run,type=date,JSONPath=`.status.lastRun`
// +kubebuilder:printcolumn:name=Last Run Name,type=string,JSONPath=`.status.lastRunName`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

// ScheduledSparkApplication creates a SparkApplication from its template on a cron schedule.
type ScheduledSparkApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ScheduledSparkApplicationSpec   `json:"spec,omitempty"`
	Status ScheduledSparkApplicationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ScheduledSparkApplicationList is a list of ScheduledSparkApplications.
type ScheduledSparkApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledSparkApplication `json:"items"`
}

// ScheduledSparkApplicationSpec is when to run which application.
type ScheduledSparkApplicationSpec struct {
	// Schedule is a cron schedule: five fields (minute hour day-of-month month day-of-week) or
	// a descriptor such as @hourly or "@every 30m", optionally prefixed with CRON_TZ=<zone>.
	// +kubebuilder:validation:MinLength=1
	Schedule string `json:"schedule"`
	// TimeZone is the IANA time zone the schedule is read in, for example Europe/Paris.
	// Defaults to UTC.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// Template is the spec of each SparkApplication created.
	Template SparkApplicationSpec `json:"template"`
	// Suspend, when true, stops new runs from being created; runs already created go on.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// ConcurrencyPolicy says what happens when a run is due while an earlier one is still
	// going: Allow starts it anyway, Forbid skips it, Replace deletes the earlier run first.
	// Defaults to Allow (the Kubeflow operator, with no default, starts no run at all once one
	// exists).
	// +kubebuilder:validation:Enum=Allow;Forbid;Replace
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// StartingDeadlineSeconds, as in a Kubernetes CronJob: a due time older than this, because
	// sparkhooks was down or the run was held back by suspend or Forbid, is skipped rather than
	// run late. Unset means a missed time runs however late (only the latest one, once). This is
	// a sparkhooks extension; the Kubeflow operator has no such field.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=315360000
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// SuccessfulRunHistoryLimit is how many completed runs are kept. Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulRunHistoryLimit *int32 `json:"successfulRunHistoryLimit,omitempty"`
	// FailedRunHistoryLimit is how many failed runs are kept. Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedRunHistoryLimit *int32 `json:"failedRunHistoryLimit,omitempty"`
}

// ConcurrencyPolicy says what happens when a run is due while an earlier one is still going.
type ConcurrencyPolicy string

// Concurrency policies.
const (
	// ConcurrencyAllow starts the new run next to the earlier ones.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyForbid skips the new run while the latest one has not finished.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace deletes the latest run if it has not finished and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// ScheduledSparkApplicationStatus is what the operator observed and decided.
type ScheduledSparkApplicationStatus struct {
	// LastRun is when the latest run was created.
	// +nullable
	// +optional
	LastRun metav1.Time `json:"lastRun,omitempty"`
	// NextRun is when the next run is due.
	// +nullable
	// +optional
	NextRun metav1.Time `json:"nextRun,omitempty"`
	// LastRunName is the name of the latest run's SparkApplication.
	// +optional
	LastRunName string `json:"lastRunName,omitempty"`
	// PastSuccessfulRunNames are the completed runs kept, newest first.
	// +optional
	PastSuccessfulRunNames []string `json:"pastSuccessfulRunNames,omitempty"`
	// PastFailedRunNames are the failed runs kept, newest first.
	// +optional
	PastFailedRunNames []string `json:"pastFailedRunNames,omitempty"`
	// ScheduleState is whether the schedule is valid and running.
	// +optional
	ScheduleState ScheduleState `json:"scheduleState,omitempty"`
	// Reason explains the schedule state, for example why the schedule is invalid.
	// +optional
	Reason string `json:"reason,omitempty"`

	// ObservedGeneration is the metadata.generation of the spec this status describes. This
	// is a sparkhooks extension.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions report the schedule's health in the standard Kubernetes form. This is a
	// sparkhooks extension.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ScheduleState is the state of a schedule.
type ScheduleState string

// Schedule states.
const (
	ScheduleStateNew              ScheduleState = ""
	ScheduleStateValidating       ScheduleState = "Validating"
	ScheduleStateScheduled        ScheduleState = "Scheduled"
	ScheduleStateFailedValidation ScheduleState = "FailedValidation"
)
