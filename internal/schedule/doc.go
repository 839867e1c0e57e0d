// Package schedule decides the sync of a ScheduledSparkApplication: which SparkApplication runs
// should exist and what the status says, from the parent, the observed runs and the clock alone.
//
// The state lives in status.nextRun: the earliest scheduled time not yet handled. A sync moves it
// forward only when a run is created or a due time is skipped, so repeated syncs answer with the
// same status byte for byte.
//
// Semantics, and where they differ from the Kubeflow operator:
//   - The schedule is a robfig/cron standard expression (five fields, @hourly, "@every 90m", an
//     optional CRON_TZ= or TZ= prefix). The zone is the prefix's, else spec.timeZone, else UTC;
//     never the hook's own local zone, so "Local" is refused. "@every" under one second is
//     refused rather than silently rounded up. DST follows robfig/cron, as Kubernetes CronJobs do: a time
//     that does not exist on the spring-forward day (02:30 in America/New_York) does not fire
//     that day, and a time that occurs twice on the fall-back day fires at both occurrences.
//   - An invalid schedule, time zone or template sets scheduleState FailedValidation with the
//     reason, creates no runs and keeps the existing ones. Unlike Kubeflow it is not final: the
//     next sync after the spec is fixed schedules again.
//   - A run is named <name>-<unix seconds of its scheduled time>, hash-shortened to 63
//     characters, so a sync that is retried after a lost status write finds the run it already
//     asked for instead of creating a second one. status.lastRun is that scheduled time (the
//     creation time, give or take the sync's delay, except for a late catch-up run).
//   - After downtime (or a run held back by Forbid or suspend) only the latest missed time runs,
//     once, and only if it is not older than spec.startingDeadlineSeconds when that is set. (That
//     field is a sparkhooks extension, as Kubernetes CronJobs define it; Kubeflow has none.)
//   - concurrencyPolicy Allow starts the run next to active ones, Forbid waits until no run is
//     active, Replace deletes every active run (Kubeflow: the newest only) and starts the new
//     one. An unset policy is Allow (Kubeflow starts no run at all once any run exists). A run
//     being deleted does not hold Forbid back.
//   - Editing the schedule recomputes nextRun at once (Kubeflow keeps the old time).
//   - suspend stops new runs and leaves every existing run in place, history included; on resume
//     the latest missed time runs once, as for downtime.
//   - Finished runs beyond successfulRunHistoryLimit / failedRunHistoryLimit (default 1 each)
//     are left out of the desired set, so Metacontroller deletes them. COMPLETED counts as
//     successful, FAILED and SUBMISSION_FAILED as failed, any other state as active.
//
// Safety. Metacontroller deletes every observed child an answer leaves out, so every answer keeps
// one invariant: each run that has not finished and is not being deleted is in the desired set,
// unless concurrencyPolicy Replace starts a new run in the same decision; and every child the
// schedule did not name or label is kept, finished or not. checkKeepsLive enforces this last, on
// the finished answer, reading the observed objects afresh: it never fires for a correct
// decision, and if it does the hook refuses with a metacontroller.Refusal (HTTP 409,
// LiveRunDropped or ForeignChildDropped) and Metacontroller keeps everything. A request that
// cannot be understood is a RequestError (HTTP 400): a parent of another kind or apiVersion, a
// child filed under a name other than its own, or finalizing for a parent with no
// deletionTimestamp (no finalize hook is registered, so Metacontroller never sends one). Null
// observed objects are dropped, never taken for runs nor echoed back.
package schedule
