package sparkapp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// The invariant, written from the words and apart from checkLivePodsKept so that the
// two can disagree: a 200 answer keeps every observed Pod child that has not terminated (with
// the submission id it has), unless the Pod belongs to the attempt the observed status names
// and the answer's state gives that attempt up, or the parent is really being finalized. Every
// error is the caller's (400) or a refusal (409), never a fault.
var givesUpAttempt = map[string]bool{
	"FAILING": true, "PENDING_RERUN": true, "COMPLETED": true, "FAILED": true, "INVALIDATING": true,
	"SUSPENDING": true, "SUSPENDED": true, "RESUMING": true, "SUBMISSION_FAILED": true,
}

func checkInvariant(t testing.TB, body []byte, resp *metacontroller.SyncResponse, err error) {
	t.Helper()
	if !coretest.Answered(t, "sync", err) {
		return
	}
	out, mErr := json.Marshal(resp)
	require.NoError(t, mErr, "the response encodes")
	var answer struct {
		Status struct {
			ApplicationState struct {
				State string `json:"state"`
			} `json:"applicationState"`
		} `json:"status"`
		Children []map[string]any `json:"children"`
	}
	require.NoError(t, json.Unmarshal(out, &answer))
	kept := map[string]string{}
	answeredWorkload := false
	for i, c := range answer.Children {
		md, _ := c["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if c == nil || c["kind"] == nil || c["apiVersion"] == nil || name == "" {
			t.Fatalf("desired child %d is not an object with kind, apiVersion and name: %v", i, c)
		}
		answeredWorkload = answeredWorkload || c["kind"] == "Workload"
		if c["kind"] == "Pod" {
			labels, _ := md["labels"].(map[string]any)
			sub, _ := labels["sparkoperator.k8s.io/submission-id"].(string)
			kept[name] = sub
		}
	}

	var req struct {
		Parent struct {
			Metadata struct {
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Status struct {
				SubmissionID     string `json:"submissionID"`
				ApplicationState struct {
					State string `json:"state"`
				} `json:"applicationState"`
			} `json:"status"`
		} `json:"parent"`
		Finalizing bool `json:"finalizing"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	if req.Finalizing && req.Parent.Metadata.DeletionTimestamp != nil {
		return
	}
	checkLeftToManager(t, body, out)
	children := observedChildren(t, body)
	checkNoDriverWithoutAdmission(t, body, children, kept, answeredWorkload)
	status := req.Parent.Status
	for name, raw := range children["Pod.v1"] {
		var pod struct {
			Metadata struct {
				Labels            map[string]string `json:"labels"`
				DeletionTimestamp *string           `json:"deletionTimestamp"`
			} `json:"metadata"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		}
		if json.Unmarshal(raw, &pod) != nil || string(raw) == "null" {
			continue
		}
		if pod.Status.Phase == "Succeeded" || pod.Status.Phase == "Failed" || pod.Metadata.DeletionTimestamp != nil {
			continue
		}
		sub := pod.Metadata.Labels["sparkoperator.k8s.io/submission-id"]
		if want, ok := kept[name]; ok {
			if want != sub {
				t.Fatalf("live Pod %s of submission %q kept as submission %q", name, sub, want)
			}
			continue
		}
		ours := sub != "" && sub == status.SubmissionID
		from, to := status.ApplicationState.State, answer.Status.ApplicationState.State
		if !ours || from == "" || !givesUpAttempt[to] || (to == "SUBMISSION_FAILED" && !givesUpAttempt[from]) {
			t.Fatalf("live Pod %s (submission %q) dropped: status submission %q, state %q -> %q",
				name, sub, status.SubmissionID, from, to)
		}
	}
}

// checkLeftToManager is the managed-elsewhere half: a 200 answer for a parent whose
// spec.managedBy names another controller asks for no child and restates the stored status as
// it is (the empty one, which the CRD accepts, when there is none), so that Metacontroller writes
// nothing over the manager's.
func checkLeftToManager(t testing.TB, body, answer []byte) {
	t.Helper()
	var req struct {
		Parent struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				ManagedBy any `json:"managedBy"`
			} `json:"spec"`
			Status json.RawMessage `json:"status"`
		} `json:"parent"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	by, ok := req.Parent.Spec.ManagedBy.(string)
	if !ok || by == v1beta2.ManagedBySparkOperator {
		return
	}
	var resp struct {
		Status   json.RawMessage `json:"status"`
		Children []any           `json:"children"`
	}
	require.NoError(t, json.Unmarshal(answer, &resp))
	for _, c := range resp.Children {
		if !dispatchable(t, body, by) || len(resp.Children) > 1 {
			t.Fatalf("an application managed by %q was given %d children", by, len(resp.Children))
		}
		var wl struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(coretest.MustJSON(t, c), &wl))
		if wl.Kind != "Workload" || wl.Metadata.Name != "sparkapplication-"+req.Parent.Metadata.Name {
			t.Fatalf("an application MultiKueue dispatches was given the child %s %s, not its Workload", wl.Kind, wl.Metadata.Name)
		}
	}
	want := req.Parent.Status
	if len(want) == 0 || string(want) == "null" {
		want = coretest.MustJSON(t, &v1beta2.SparkApplicationStatus{})
	}
	require.JSONEq(t, string(want), string(resp.Status), "the status of an application managed by %q was changed", by)
}

// dispatchable tells whether an application managed by by may have a child: the Workload
// MultiKueue dispatches, for an application with a queue-name label where Kueue is enabled.
func dispatchable(t testing.TB, body []byte, by string) bool {
	t.Helper()
	var req struct {
		Parent struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		} `json:"parent"`
		Children map[string]json.RawMessage `json:"children"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	_, enabled := req.Children["Workload.kueue.x-k8s.io/v1beta2"]
	return by == v1beta2.ManagedByMultiKueue && enabled && req.Parent.Metadata.Labels["kueue.x-k8s.io/queue-name"] != ""
}

// observedRelated are the request's related objects filed by name, as observedChildren.
func observedRelated(t testing.TB, body []byte) metacontroller.ChildMap {
	t.Helper()
	var req metacontroller.SyncRequest
	require.NoError(t, json.Unmarshal(body, &req))
	var parent metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal(req.Parent, &parent))
	require.NoError(t, req.TidyObserved(parent.Namespace), "a request the hook answered 200")
	return req.Related
}

// observedChildren are the request's children filed by name, whichever hook version's request
// body is (what the hook decided from, after a 200).
func observedChildren(t testing.TB, body []byte) metacontroller.ChildMap {
	t.Helper()
	var req metacontroller.SyncRequest
	require.NoError(t, json.Unmarshal(body, &req))
	var parent metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal(req.Parent, &parent))
	require.NoError(t, req.TidyObserved(parent.Namespace), "a request the hook answered 200")
	return req.Children
}

// checkNoDriverWithoutAdmission is the queue's half of the invariant: an answer that creates a
// driver Pod (one the request does not show) for a queued application has an admitted Workload
// behind it: Admitted true, not evicted, finished or being deleted, with an admission.
func checkNoDriverWithoutAdmission(t testing.TB, body []byte, children metacontroller.ChildMap, kept map[string]string, answeredWorkload bool) {
	t.Helper()
	var req struct {
		Parent struct {
			Metadata struct {
				Name        string            `json:"name"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"parent"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	workloads, enabled := children["Workload.kueue.x-k8s.io/v1beta2"]
	wlName := "sparkapplication-" + req.Parent.Metadata.Name
	prebuilt := req.Parent.Metadata.Annotations[kueue.PrebuiltWorkloadKey]
	if prebuilt == "" {
		prebuilt = req.Parent.Metadata.Labels[kueue.PrebuiltWorkloadKey]
	}
	if enabled && prebuilt != "" {
		// The Workload another controller made is a related object, never a child.
		if answeredWorkload {
			t.Fatalf("a Workload child answered for an application that names the prebuilt Workload %s", prebuilt)
		}
		wlName, workloads = prebuilt, observedRelated(t, body)["Workload.kueue.x-k8s.io/v1beta2"]
	}
	if !enabled || (req.Parent.Metadata.Labels["kueue.x-k8s.io/queue-name"] == "" && prebuilt == "") {
		return
	}
	for name := range kept {
		if raw, observed := children["Pod.v1"][name]; observed && string(raw) != "null" {
			continue
		}
		var wl struct {
			Metadata struct {
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
				Admission  map[string]any     `json:"admission"`
			} `json:"status"`
		}
		raw := workloads[wlName]
		if raw == nil || json.Unmarshal(raw, &wl) != nil || wl.Metadata.DeletionTimestamp != nil || wl.Status.Admission == nil {
			t.Fatalf("driver Pod %s created without an admitted Workload", name)
		}
		truth := map[string]bool{}
		for _, c := range wl.Status.Conditions {
			truth[c.Type] = c.Status == metav1.ConditionTrue
		}
		if !truth["Admitted"] || truth["Evicted"] || truth["Finished"] {
			t.Fatalf("driver Pod %s created under a Workload whose conditions are %v", name, truth)
		}
	}
}

// mutation changes one thing in a decoded request.
type mutation struct {
	name  string
	apply func(req map[string]any)
	shift time.Duration // added to the clock
	// notNew, when set, is a condition type the answer must not set to True unless the request
	// had it: a deadline that lies years ahead has not passed.
	notNew string
	// noRetry: a failed attempt or submission is not retried, its interval lies years ahead.
	noRetry bool
}

// TestInvariantUnderMutations changes every golden sync request in one plausible way at a
// time and checks the invariant on each answer.
func TestInvariantUnderMutations(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync", "*", "request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	runs, answered := 0, 0
	for _, file := range files {
		dir := filepath.Dir(file)
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		now := caseNow(t, dir)
		var probe map[string]any
		require.NoError(t, json.Unmarshal(body, &probe))
		for _, m := range mutations(probe) {
			var req map[string]any
			require.NoError(t, json.Unmarshal(body, &req))
			m.apply(req)
			mutated, err := json.Marshal(req)
			require.NoError(t, err)
			runs++
			t.Run(filepath.Base(dir)+"/"+m.name, func(t *testing.T) {
				var sr metacontroller.SyncRequest
				if json.Unmarshal(mutated, &sr) != nil {
					return
				}
				resp, _, err := Sync(&sr, now.Add(m.shift), DefaultConfig())
				if err == nil {
					answered++
				}
				checkInvariant(t, mutated, resp, err)
				if err == nil && m.noRetry {
					from, to := stateAt(t, mutated, "parent", "status"), stateAt(t, coretest.MustJSON(t, resp), "status")
					if (from == "FAILING" || from == "SUBMISSION_FAILED") && (to == "SUBMITTED" || to == "PENDING_RERUN") {
						t.Fatalf("retried (%s -> %s) although the retry interval is years away", from, to)
					}
				}
				if err == nil && m.notNew != "" {
					before := trueConditions(t, mutated, "parent", "status")
					after := trueConditions(t, coretest.MustJSON(t, resp), "status")
					if after[m.notNew] && !before[m.notNew] {
						t.Fatalf("condition %s set although its deadline is years away", m.notNew)
					}
				}
			})
		}
	}
	t.Logf("%d mutated requests, %d answered 200", runs, answered)
}

// mutations lists the single-field changes for one request: for each observed Pod, its labels,
// phase and deletion; for the parent, its state, submission, identity, finalizing flag and the
// spec fields that drive deadlines; for the children, nulls and strays; and the clock.
func mutations(req map[string]any) []mutation {
	var ms []mutation
	add := func(name string, f func(map[string]any)) { ms = append(ms, mutation{name: name, apply: f}) }
	parent := func(r map[string]any) map[string]any { return obj(r, "parent") }
	status := func(r map[string]any) map[string]any { return obj(parent(r), "status") }
	spec := func(r map[string]any) map[string]any { return obj(parent(r), "spec") }
	meta := func(r map[string]any) map[string]any { return obj(parent(r), "metadata") }

	for _, pod := range sortedKeys(obj(obj(req, "children"), "Pod.v1")) {
		podOf := func(r map[string]any) map[string]any { return obj(obj(obj(r, "children"), "Pod.v1"), pod) }
		labels := func(r map[string]any) map[string]any { return obj(obj(podOf(r), "metadata"), "labels") }
		for _, key := range []string{"spark-role", "sparkoperator.k8s.io/submission-id", "spark-app-selector", "controller-uid"} {
			add(pod+"/remove-label-"+key, func(r map[string]any) { delete(labels(r), key) })
			for _, v := range []string{"executor", "Driver", "", "other"} {
				add(fmt.Sprintf("%s/label-%s=%q", pod, key, v), func(r map[string]any) { labels(r)[key] = v })
			}
		}
		for _, phase := range []string{"Pending", "Running", "Succeeded", "Failed", "Unknown", ""} {
			add(pod+"/phase-"+phase, func(r map[string]any) { obj(podOf(r), "status")["phase"] = phase })
		}
		add(pod+"/no-status", func(r map[string]any) { delete(podOf(r), "status") })
		add(pod+"/deleting", func(r map[string]any) { obj(podOf(r), "metadata")["deletionTimestamp"] = "2026-03-08T06:00:00Z" })
		add(pod+"/null", func(r map[string]any) { obj(obj(r, "children"), "Pod.v1")[pod] = nil })
		add(pod+"/misfiled", func(r map[string]any) { obj(podOf(r), "metadata")["name"] = pod + "-x" })
		add(pod+"/copied-under-another-name", func(r map[string]any) {
			pods := obj(obj(r, "children"), "Pod.v1")
			var cp map[string]any
			b, _ := json.Marshal(pods[pod])
			_ = json.Unmarshal(b, &cp)
			obj(cp, "metadata")["name"] = "stray-driver"
			pods["stray-driver"] = cp
		})
		add(pod+"/also-related-executor", func(r map[string]any) { obj(obj(r, "related"), "Pod.v1")[pod] = podOf(r) })
	}

	// A driver Pod among the related objects is one Kubeflow's operator made and Metacontroller
	// released (kubeflow.go): whatever it says, the answer keeps every live child.
	for _, pod := range sortedKeys(obj(obj(req, "related"), "Pod.v1")) {
		relOf := func(r map[string]any) map[string]any { return obj(obj(obj(r, "related"), "Pod.v1"), pod) }
		if obj(obj(relOf(req), "metadata"), "labels")["spark-role"] != "driver" {
			continue
		}
		for _, phase := range []string{"Pending", "Running", "Succeeded", "Failed", "Unknown"} {
			add(pod+"/related-phase-"+phase, func(r map[string]any) { obj(relOf(r), "status")["phase"] = phase })
		}
		add(pod+"/related-submission-other", func(r map[string]any) {
			obj(obj(relOf(r), "metadata"), "labels")["sparkoperator.k8s.io/submission-id"] = "other"
		})
		add(pod+"/related-deleting", func(r map[string]any) { obj(relOf(r), "metadata")["deletionTimestamp"] = "2026-03-08T06:00:00Z" })
		add(pod+"/related-also-child", func(r map[string]any) { obj(obj(r, "children"), "Pod.v1")[pod] = relOf(r) })
	}

	for _, st := range []string{"", "SUBMITTED", "RUNNING", "SUCCEEDING", "COMPLETED", "FAILING", "FAILED",
		"SUBMISSION_FAILED", "PENDING_RERUN", "INVALIDATING", "SUSPENDING", "SUSPENDED", "RESUMING", "UNKNOWN", "DANCING"} {
		add("state="+stateName(v1beta2.ApplicationStateType(st)), func(r map[string]any) { obj(status(r), "applicationState")["state"] = st })
	}
	add("no-status", func(r map[string]any) { delete(parent(r), "status") })
	add("status-submission-removed", func(r map[string]any) { delete(status(r), "submissionID") })
	add("status-submission-other", func(r map[string]any) { status(r)["submissionID"] = "other" })
	add("status-spec-hash-removed", func(r map[string]any) { delete(status(r), "submittedSpecHash") })
	add("status-spec-hash-other", func(r map[string]any) { status(r)["submittedSpecHash"] = "0000000000000000" })
	add("status-attempts-zero", func(r map[string]any) { status(r)["submissionAttempts"] = 0; status(r)["executionAttempts"] = 0 })
	add("status-attempts-huge", func(r map[string]any) { status(r)["submissionAttempts"] = 2147483647 })
	add("status-conditions-removed", func(r map[string]any) { delete(status(r), "conditions") })
	add("status-termination-cleared", func(r map[string]any) { status(r)["terminationTime"] = nil })
	add("status-driver-info-removed", func(r map[string]any) { delete(status(r), "driverInfo") })

	add("finalizing", func(r map[string]any) { r["finalizing"] = true })
	add("finalizing-being-deleted", func(r map[string]any) {
		r["finalizing"] = true
		meta(r)["deletionTimestamp"] = "2026-03-08T06:00:00Z"
	})
	add("being-deleted", func(r map[string]any) { meta(r)["deletionTimestamp"] = "2026-03-08T06:00:00Z" })
	add("api-version-other", func(r map[string]any) { parent(r)["apiVersion"] = "sparkoperator.k8s.io/v1beta1" })
	add("kind-removed", func(r map[string]any) { delete(parent(r), "kind") })
	add("uid-other", func(r map[string]any) { meta(r)["uid"] = "00000000-0000-4000-8000-000000000099" })
	add("name-other", func(r map[string]any) { meta(r)["name"] = "other-app" })
	add("generation-bumped", func(r map[string]any) { meta(r)["generation"] = 99 })
	add("labels-edited", func(r map[string]any) { meta(r)["labels"] = map[string]any{"team": "x"} })

	for _, by := range []any{v1beta2.ManagedByMultiKueue, "example.com/my-controller", "", v1beta2.ManagedBySparkOperator, 7} {
		add(fmt.Sprintf("spec-managed-by-%v", by), func(r map[string]any) { spec(r)["managedBy"] = by })
	}
	add("spec-suspend", func(r map[string]any) { spec(r)["suspend"] = true })
	add("spec-arguments-edited", func(r map[string]any) { spec(r)["arguments"] = []any{"7"} })
	add("spec-invalid", func(r map[string]any) { obj(spec(r), "executor")["memory"] = "lots" })
	add("spec-does-not-decode", func(r map[string]any) {
		obj(spec(r), "executor")["template"] = map[string]any{"spec": map[string]any{"containers": "spark"}}
	})
	add("spec-quantity-does-not-parse", func(r map[string]any) {
		obj(spec(r), "driver")["template"] = map[string]any{"spec": map[string]any{"overhead": map[string]any{"cpu": "lots"}}}
	})
	add("spec-retain-never", func(r map[string]any) { spec(r)["resourceRetainPolicy"] = "Never" })
	add("spec-ttl-zero", func(r map[string]any) { spec(r)["timeToLiveSeconds"] = 0 })
	for _, secs := range []int64{315360000, 10000000000, 9223372036854775807} {
		ms = append(ms, mutation{name: fmt.Sprintf("spec-timeouts-%d", secs), notNew: condTimedOut, apply: func(r map[string]any) {
			spec(r)["timeouts"] = map[string]any{"driverStartSeconds": secs, "driverReadySeconds": secs, "executorsStartSeconds": secs}
		}})
		ms = append(ms, mutation{name: fmt.Sprintf("spec-ttl-%d", secs), notNew: condExpired, apply: func(r map[string]any) {
			spec(r)["timeToLiveSeconds"] = secs
		}})
		ms = append(ms, mutation{name: fmt.Sprintf("spec-retry-interval-%d", secs), noRetry: true, apply: func(r map[string]any) {
			spec(r)["restartPolicy"] = map[string]any{"type": "OnFailure", "onFailureRetries": 3, "onFailureRetryInterval": secs,
				"onSubmissionFailureRetries": 3, "onSubmissionFailureRetryInterval": secs}
		}})
	}
	add("spec-timeouts-one-second", func(r map[string]any) {
		spec(r)["timeouts"] = map[string]any{"driverStartSeconds": 1, "driverReadySeconds": 1, "executorsStartSeconds": 1}
	})

	const wlKey = "Workload.kueue.x-k8s.io/v1beta2"
	for _, wl := range sortedKeys(obj(obj(req, "children"), wlKey)) {
		wlOf := func(r map[string]any) map[string]any { return obj(obj(obj(r, "children"), wlKey), wl) }
		conds := func(r map[string]any) []any { c, _ := obj(wlOf(r), "status")["conditions"].([]any); return c }
		setCond := func(typ, status string) func(map[string]any) {
			return func(r map[string]any) {
				var out []any
				for _, c := range conds(r) {
					if c.(map[string]any)["type"] != typ {
						out = append(out, c)
					}
				}
				out = append(out, map[string]any{"type": typ, "status": status, "reason": "Test", "message": "mutated",
					"lastTransitionTime": "2026-03-08T06:00:00Z"})
				obj(wlOf(r), "status")["conditions"] = out
			}
		}
		add(wl+"/removed", func(r map[string]any) { delete(obj(obj(r, "children"), wlKey), wl) })
		add(wl+"/null", func(r map[string]any) { obj(obj(r, "children"), wlKey)[wl] = nil })
		add(wl+"/evicted", setCond("Evicted", "True"))
		add(wl+"/finished", setCond("Finished", "True"))
		add(wl+"/admitted", setCond("Admitted", "True"))
		add(wl+"/not-admitted", setCond("Admitted", "False"))
		add(wl+"/no-status", func(r map[string]any) { delete(wlOf(r), "status") })
		add(wl+"/no-admission", func(r map[string]any) { delete(obj(wlOf(r), "status"), "admission") })
		add(wl+"/deleting", func(r map[string]any) { obj(wlOf(r), "metadata")["deletionTimestamp"] = "2026-03-08T06:00:00Z" })
		add(wl+"/queue-other", func(r map[string]any) { obj(wlOf(r), "spec")["queueName"] = "other" })
		add(wl+"/spec-hash-other", func(r map[string]any) {
			obj(obj(wlOf(r), "metadata"), "annotations")["sparkoperator.k8s.io/spec-hash"] = "0000000000000000"
		})
		add(wl+"/flavor-unknown", func(r map[string]any) {
			adm := obj(obj(wlOf(r), "status"), "admission")
			as, _ := adm["podSetAssignments"].([]any)
			for _, a := range as {
				a.(map[string]any)["flavors"] = map[string]any{"cpu": "ghost"}
			}
		})
		add(wl+"/misfiled", func(r map[string]any) { obj(wlOf(r), "metadata")["name"] = wl + "-x" })
	}
	for _, wl := range sortedKeys(obj(obj(req, "children"), wlKey)) {
		// The same Workload as MultiKueue's copy on a worker: named by the parent, related, no child.
		prebuilt := func(r map[string]any) {
			wls := obj(obj(r, "children"), wlKey)
			obj(obj(r, "related"), wlKey)[wl] = wls[wl]
			delete(wls, wl)
			obj(meta(r), "annotations")[kueue.PrebuiltWorkloadKey] = wl
		}
		add(wl+"/prebuilt", prebuilt)
		add(wl+"/prebuilt-label", func(r map[string]any) {
			prebuilt(r)
			delete(obj(meta(r), "annotations"), kueue.PrebuiltWorkloadKey)
			obj(meta(r), "labels")[kueue.PrebuiltWorkloadKey] = wl
		})
		add(wl+"/prebuilt-and-child", func(r map[string]any) {
			obj(obj(r, "related"), wlKey)[wl] = obj(obj(r, "children"), wlKey)[wl]
			obj(meta(r), "annotations")[kueue.PrebuiltWorkloadKey] = wl
		})
		add(wl+"/prebuilt-evicted", func(r map[string]any) {
			prebuilt(r)
			st := obj(obj(obj(obj(r, "related"), wlKey), wl), "status")
			conds, _ := st["conditions"].([]any)
			st["conditions"] = append(conds, map[string]any{"type": "Evicted", "status": "True", "reason": "Preempted",
				"message": "mutated", "lastTransitionTime": "2026-03-08T06:00:00Z"})
		})
		// On the manager: dispatched by MultiKueue, with the worker's final status copied.
		for _, st := range []string{"COMPLETED", "FAILED", "RUNNING"} {
			add(wl+"/multikueue-mirrored-"+st, func(r map[string]any) {
				spec(r)["managedBy"] = v1beta2.ManagedByMultiKueue
				obj(status(r), "applicationState")["state"] = st
			})
		}
	}
	if _, ok := obj(req, "children")[wlKey]; ok {
		add("prebuilt-missing", func(r map[string]any) { obj(meta(r), "annotations")[kueue.PrebuiltWorkloadKey] = "ghost" })
		add("kueue-disabled", func(r map[string]any) { delete(obj(r, "children"), wlKey) })
		add("flavors-gone", func(r map[string]any) { delete(obj(r, "related"), "ResourceFlavor.kueue.x-k8s.io/v1beta2") })
		add("priority-classes-gone", func(r map[string]any) { delete(obj(r, "related"), "PriorityClass.scheduling.k8s.io/v1") })
		add("queue-label-removed", func(r map[string]any) { delete(obj(meta(r), "labels"), "kueue.x-k8s.io/queue-name") })
		add("queue-label-other", func(r map[string]any) { obj(meta(r), "labels")["kueue.x-k8s.io/queue-name"] = "team-b" })
	} else {
		add("kueue-enabled", func(r map[string]any) {
			obj(r, "children")[wlKey] = map[string]any{}
			obj(meta(r), "labels")["kueue.x-k8s.io/queue-name"] = "team-a"
		})
	}

	add("child-null", func(r map[string]any) { obj(obj(r, "children"), "ConfigMap.v1")["ghost"] = nil })
	add("child-group-null", func(r map[string]any) { obj(r, "children")["Service.v1"] = nil })
	add("children-null", func(r map[string]any) { r["children"] = nil })
	add("configmaps-gone", func(r map[string]any) { obj(r, "children")["ConfigMap.v1"] = map[string]any{} })
	add("related-null", func(r map[string]any) { obj(obj(r, "related"), "Pod.v1")["ghost"] = nil })
	add("related-gone", func(r map[string]any) { delete(r, "related") })
	// What admission refuses, seen among the related objects of a v2 sync request: no
	// ServiceAccount at all, and a namespace that enforces restricted.
	add("service-accounts-gone", func(r map[string]any) {
		r["controller"] = json.RawMessage(v2Sync)
		obj(r, "related")[keyServiceAccount] = map[string]any{}
	})
	add("namespace-restricted", func(r map[string]any) {
		r["controller"] = json.RawMessage(v2Sync)
		ns, _ := meta(r)["namespace"].(string)
		obj(r, "related")[keyNamespace] = map[string]any{ns: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ns, "labels": map[string]any{"pod-security.kubernetes.io/enforce": "restricted"}}}}
	})

	for _, shift := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 11 * 365 * 24 * time.Hour, -time.Hour} {
		ms = append(ms, mutation{name: "now" + shift.String(), apply: func(map[string]any) {}, shift: shift})
	}
	return ms
}

// trueConditions reads the condition types whose status is True at path in a JSON document.
func trueConditions(t testing.TB, doc []byte, path ...string) map[string]bool {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	for _, p := range path {
		m = obj(m, p)
	}
	out := map[string]bool{}
	conds, _ := m["conditions"].([]any)
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if c["status"] == "True" {
			out[fmt.Sprint(c["type"])] = true
		}
	}
	return out
}

// stateAt reads applicationState.state at path in a JSON document.
func stateAt(t testing.TB, doc []byte, path ...string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	for _, p := range path {
		m = obj(m, p)
	}
	st, _ := obj(m, "applicationState")["state"].(string)
	return st
}

// obj returns m[key] as an object, creating it when it is missing or not an object.
func obj(m map[string]any, key string) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	if o, ok := m[key].(map[string]any); ok {
		return o
	}
	o := map[string]any{}
	m[key] = o
	return o
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The decision reads a driver Pod's submission id and annotations, and a recorded Pod's
// submission id, through struct tags, which cannot name the constants: this holds them together.
func TestViewsReadTheirLabelsAndAnnotations(t *testing.T) {
	recordedPod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
		"name": "pi-driver", "labels": map[string]any{sparkpod.LabelSubmissionID: "s-1", "other": "x"},
	}}
	applied := string(coretest.MustJSON(t, recordedPod))
	recorded := metacontroller.AnsweredPod[submissionLabel]("pi-driver", applied)
	require.NotNil(t, recorded)
	require.Equal(t, "s-1", recorded.Metadata.Labels.SubmissionID)

	observed := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
		"name":   "pi-driver",
		"labels": map[string]any{sparkpod.LabelSubmissionID: "s-1", "other": "x"},
		"annotations": map[string]any{
			metacontroller.LastAppliedAnnotation: applied,
			exitExceptionAnnotation:              "java.lang.IllegalStateException: boom",
		},
	}}
	var view podView
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, observed), &view))
	require.Equal(t, "s-1", view.Metadata.Labels.SubmissionID)
	require.Equal(t, applied, view.Metadata.Annotations.LastApplied)
	require.Equal(t, "java.lang.IllegalStateException: boom", view.Metadata.Annotations.ExitException)
}
