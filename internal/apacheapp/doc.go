// Package apacheapp runs the Apache Spark Kubernetes Operator's SparkApplication
// (spark.apache.org/v1) on the attempt core of the Kubeflow-API SparkApplication: one driver
// builder (internal/driver) and one state machine (internal/sparkapp) underneath both APIs.
//
// Each sync translates the Apache spec into the SparkApplication it runs as
// (sparkv1.CoreApplication), hands it to sparkapp.SyncTranslated with the core's own status,
// which the Apache status carries in status.attempt (its conditions in status.conditions), and
// reads the core's answer back as Apache's states: currentState and the
// stateTransitionHistory, the attempt summaries and their counters. The children, the resync
// and the refusals (409) are the core's, unchanged, so the core's invariant holds here as it
// does there.
//
// What the core does not know of Apache's model is decided here, from the request alone: the
// executor thresholds of the running states (instanceConfig, counted from the ready executor
// Pods), the retain duration (the core's retain policy turns Never once it has passed, and the
// core then releases the children), and the intermediate states Apache records when one of its
// reconciles sees several steps at once.
//
// The history is bounded: a restart moves the attempt's history to previousAttemptSummary, as
// Apache does by default, and an attempt keeps its last historyLimit entries.
package apacheapp
