package sparkapp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// v2Sync is a registration whose sync hook is v2, as the chart's: its requests carry the
// cluster-scoped related objects.
var v2Sync = json.RawMessage(`{"apiVersion":"metacontroller.k8s.io/v1alpha1","kind":"CompositeController","spec":{"hooks":{"sync":{"version":"v2"}}}}`)

// admissionSeen makes the world send what the customize hook asks for, as Metacontroller does for
// a v2 sync hook: the namespace, with labels, its ServiceAccounts and the PriorityClasses. The
// application was created createdAgo before the world's clock.
func admissionSeen(createdAgo time.Duration, nsLabels map[string]string, accounts []string, classes ...string) func(w *world) {
	return func(w *world) {
		w.controller = v2Sync
		w.app.CreationTimestamp = metav1.NewTime(w.now.Add(-createdAgo))
		ns := w.app.Namespace
		w.related = map[string]map[string]map[string]any{
			keyNamespace:      {ns: {"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "labels": nsLabels}}},
			keyServiceAccount: {},
			keyPriorityClass:  {},
		}
		for _, sa := range accounts {
			w.related[keyServiceAccount][sa] = map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": sa, "namespace": ns}}
		}
		for _, pc := range classes {
			w.related[keyPriorityClass][pc] = map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": pc}, "value": 1000}
		}
	}
}

var restricted = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}

// refusalCases are syncs of drivers the API server's admission refuses, and of ones it admits.
func refusalCases() []goldenCase {
	kubeflowRetries := "    type: OnFailure\n    onSubmissionFailureRetries: 3\n    onSubmissionFailureRetryInterval: 1\n"
	noAccount := strings.Replace(sparkPi, "serviceAccount: spark", "serviceAccount: non-existent", 1)
	return []goldenCase{
		// Created seconds ago: the account is believed missing, and no driver is asked for.
		{name: "new-service-account-missing", setup: then(fresh(withRestart(noAccount, kubeflowRetries)), admissionSeen(time.Minute, nil, []string{"default", "spark"}))},
		// Created at this instant: the cache of accounts may lag, so the driver is asked for.
		{name: "new-service-account-missing-just-created", setup: then(fresh(noAccount), admissionSeen(0, nil, []string{"default", "spark"}))},
		{name: "submitted-service-account-missing", setup: then(fresh(noAccount), func(w *world) {
			admissionSeen(0, nil, []string{"default", "spark"})(w)
			w.rejectPods = true
			w.settle()
			w.advance(relatedCacheLag)
		})},
		{name: "new-service-account-present", setup: then(fresh(sparkPi), admissionSeen(time.Minute, restrictedNot(), []string{"spark"}))},
		{name: "new-priority-class-missing", setup: then(fresh(strings.Replace(sparkPi, "    serviceAccount: spark\n", "    serviceAccount: spark\n    priorityClassName: batch-high\n", 1)),
			admissionSeen(time.Minute, nil, []string{"spark"}, "batch-low"))},
		{name: "new-pod-security-restricted", setup: then(fresh(sparkPi), admissionSeen(0, restricted, []string{"spark"}))},
		{name: "new-pod-security-restricted-example", setup: then(fromExample("spark-pi-restricted"), admissionSeen(0, restricted, []string{"spark"}))},
		// A v1 sync request leaves out the namespace: the level is not judged.
		{name: "new-pod-security-v1-request", setup: then(fresh(sparkPi), func(w *world) {
			admissionSeen(0, restricted, []string{"spark"})(w)
			w.controller = nil
		})},
	}
}

func restrictedNot() map[string]string {
	return map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}
}

// TestKubeflowFailSubmission is the Kubeflow operator's e2e case: a driver whose ServiceAccount
// does not exist, three submission retries one second apart. It ends FAILED with the account
// named after four submission attempts, within 15 s. The driver is asked for once, by the first
// sync, which comes before the account's absence is believed (relatedCacheLag).
func TestKubeflowFailSubmission(t *testing.T) {
	w := newWorld(t, withRestart(strings.Replace(sparkPi, "serviceAccount: spark", "serviceAccount: non-existent", 1),
		"    type: OnFailure\n    onSubmissionFailureRetries: 3\n    onSubmissionFailureRetryInterval: 1\n"))
	w.app.Namespace = "default"
	admissionSeen(0, nil, []string{"default"})(w)
	w.rejectPods = true // as the API server does
	start := w.now
	for i := 0; i < 20 && w.state() != v1beta2.ApplicationStateFailed; i++ {
		w.settle()
		if w.state() == v1beta2.ApplicationStateFailed {
			break
		}
		require.NotZero(t, w.last.ResyncAfterSeconds, "a submission failure with retries left asks for its retry: %s %+v", w.state(), w.app.Status)
		w.advance(time.Duration(w.last.ResyncAfterSeconds * float64(time.Second)))
	}
	require.Equal(t, v1beta2.ApplicationStateFailed, w.state())
	assert.Contains(t, w.app.Status.AppState.ErrorMessage, `ServiceAccount "non-existent" not found in namespace default`)
	assert.EqualValues(t, 4, w.app.Status.SubmissionAttempts)
	assert.Zero(t, w.app.Status.ExecutionAttempts)
	assert.Less(t, w.now.Sub(start), 15*time.Second)
	t.Logf("FAILED after %s, %d syncs", w.now.Sub(start), w.syncs)
}

// TestRefusalNeedsAServedRule: a request without the related kinds (a customize answer of an older
// release, cached by Metacontroller) judges nothing, and the driver is asked for.
func TestRefusalNeedsAServedRule(t *testing.T) {
	w := newWorld(t, strings.Replace(sparkPi, "serviceAccount: spark", "serviceAccount: non-existent", 1))
	w.app.CreationTimestamp = metav1.NewTime(w.now.Add(-time.Hour))
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
}

func TestAdmissionRulesAskOnceForPriorityClasses(t *testing.T) {
	kueueRules := []metacontroller.RelatedResourceRule{{APIVersion: "scheduling.k8s.io/v1", Resource: "priorityclasses", LabelSelector: &metav1.LabelSelector{}}}
	for _, r := range admissionRules("jobs", kueueRules) {
		assert.NotEqual(t, "priorityclasses", r.Resource, "Kueue's rule asks for every PriorityClass already")
	}
	var classes int
	for _, r := range admissionRules("jobs", nil) {
		if r.Resource == "priorityclasses" {
			classes++
		}
	}
	assert.Equal(t, 1, classes)
}

// TestExamplesUnderPodSecurity judges every example's driver as the API server's PodSecurity
// admission does in the end-to-end suite's TestPodSecurity (a dry run of the same Pods): all
// pass baseline, and only the restricted example passes restricted.
func TestExamplesUnderPodSecurity(t *testing.T) {
	for _, ex := range exampleCases(t) {
		for _, level := range []string{"baseline", "restricted"} {
			t.Run(ex.name+"/"+level, func(t *testing.T) {
				w := ex.setup(t)
				admissionSeen(time.Minute, map[string]string{"pod-security.kubernetes.io/enforce": level}, []string{"spark", "default"})(w)
				require.NoError(t, w.sync())
				refused := w.state() != v1beta2.ApplicationStateSubmitted
				want := level == "restricted" && ex.name != "example-spark-pi-restricted"
				assert.Equal(t, want, refused, "%s under %s: %s %s", ex.name, level, w.state(), w.app.Status.AppState.ErrorMessage)
				if refused {
					c := condition(w, condDriverRequested)
					require.NotNil(t, c)
					assert.Equal(t, ReasonPodSecurity, c.Reason, c.Message)
				}
			})
		}
	}
}
