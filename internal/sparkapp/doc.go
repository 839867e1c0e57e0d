// Package sparkapp decides, for one SparkApplication, what Metacontroller should make true: the
// desired children (driver Pod, its ConfigMap, Services, Ingress), the next status and when to be
// asked again. It is a pure function of (request, now, config) and keeps no memory of its own:
// everything it needs to remember lives in the status it returns (and in the labels of the
// children it asked for).
//
// The states are the Kubeflow Spark Operator's, so tools that watch applicationState keep
// working. Deliberate differences, each because a stateless hook can do better or must:
//
//   - A terminated driver leads straight to COMPLETED or FAILED when no restart follows; the
//     Kubeflow operator passes through SUCCEEDING/FAILING first. FAILING here means "failed,
//     a retry is scheduled", and the old attempt's children are released at once.
//   - A submission cannot fail the way spark-submit fails: building the driver is deterministic.
//     An invalid spec (or one the builder rejects) is SUBMISSION_FAILED with the reason and is
//     not retried, because a retry would fail the same way; it is submitted again as soon as the
//     spec changes. The retryable submission failure is a driver Pod that does not appear within
//     SubmissionGrace of the submission (quota, admission webhook, name clash): that one follows
//     onSubmissionFailureRetries and onSubmissionFailureRetryInterval.
//   - Attempts count as in Kubeflow (submissionAttempts per submission, executionAttempts per
//     submission whose driver Pod was created, both reset when the spec changes), and the retry
//     wait grows linearly with submissionAttempts as there, but it is measured from the
//     termination of the failed attempt, not from its submission: measured from the submission,
//     a run that fails after an hour would be retried with no wait at all.
//   - The Kubeflow operator writes an INVALIDATING state from an event filter, best effort. Here
//     the submitted spec's hash is kept in status.submittedSpecHash, and a valid spec with a
//     different hash invalidates the attempt on the next sync, whatever the state. An invalid
//     edit never stops a running attempt: it is reported in the SpecValid condition.
//   - Metacontroller cannot delete the parent, so timeToLiveSeconds releases every child and
//     sets the Expired condition instead of deleting the SparkApplication.
//
// Safety: a request that cannot be understood is an error (HTTP 4xx/5xx, so Metacontroller
// changes nothing and retries), and a running driver Pod the status does not account for is
// never dropped from the desired set: that is an error too, because it means the request is
// stale or the Pod is foreign.
package sparkapp
