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
//   - An application taken over from the Kubeflow operator (docs/migrate-from-kubeflow.md) keeps
//     the attempt Kubeflow submitted: its driver Pod is followed to its end, as a child when
//     labelled for adoption, else found by name as a related object, and never submitted again
//     (kubeflow.go; the Adopted condition).
//   - Metacontroller cannot delete the parent, so timeToLiveSeconds (or the operator default,
//     Config.DefaultTimeToLiveSeconds) releases every child and sets the Expired condition; a
//     separate pass, sparkhooks gc, deletes the SparkApplications that condition marks. The
//     condition goes again when a raised or removed TTL no longer holds.
//
// Safety. Metacontroller deletes every observed child an answer leaves out, so every answer keeps
// one invariant: each observed Pod child that has not terminated is in the desired set, with the
// submission id it carries, unless the Pod belongs to the attempt the observed status names and
// the decision gives that attempt up (an active state to a releasing one — FAILING,
// PENDING_RERUN, COMPLETED, FAILED, INVALIDATING, SUSPENDING, SUSPENDED, RESUMING — or a
// releasing state already), or the parent is being deleted. Every Pod child counts, whatever
// its spark-role label says, and a Pod belongs to the attempt its submission-id label names.
// checkLivePodsKept enforces this last, on the finished answer: when the observed children
// contradict the status (a stale request, an edited label, an erased state), the hook refuses
// with a metacontroller.Refusal (HTTP 409), and Metacontroller keeps everything and asks again.
// A request that cannot be understood is a RequestError (HTTP 400); 5xx is left for faults.
//
// Stale reads. Metacontroller reads the parent from its cache, so a sync can come before the
// status the previous answer wrote; it drops an answer's status on a write conflict without
// asking again, and a status change alone starts no sync (ignoreStatusChanges). So every
// submission asks for its driver start deadline, and an answer whose next step is due at once
// asks to be called again within a second (promptResync) rather than count on an event a stale
// sync may take: a restated submission, and a queued attempt's end, eviction or spent Workload.
package sparkapp
