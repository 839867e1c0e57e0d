//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// What the API server's admission refuses about a driver Pod, the hooks see first among the
// related objects (Metacontroller does not tell them why it could not create a child): the
// submission fails at once with the API server's reason, not after the submission grace.
func TestAdmissionRefusalFailsTheSubmission(t *testing.T) {
	t.Parallel()

	// Kubeflow's e2e case: a driver whose ServiceAccount does not exist, three submission
	// retries one second apart.
	t.Run("missing ServiceAccount", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hooksURL, appController)
		w.childErrorsExpected = true // the driver Pod is refused until the hooks fail the submission
		start := time.Now()
		out, err := w.apply(strings.Replace(scenarioApp("no-account", "100", `  restartPolicy:
    type: OnFailure
    onSubmissionFailureRetries: 3
    onSubmissionFailureRetryInterval: 1
`), "serviceAccount: spark", "serviceAccount: non-existent", 1))
		require.NoError(t, err, out)
		w.check(t, w.waitState("no-account", "FAILED"))
		took := time.Since(start)

		app, err := w.app("no-account")
		require.NoError(t, err)
		summary := describeApp(app)
		msg, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage")
		assert.Contains(t, msg, `ServiceAccount "non-existent" not found in namespace `+w.ns, summary)
		assert.Equal(t, int64(4), attemptOf(app).submissionAttempts, "one submission and its three retries; %s", summary)
		assert.Less(t, took, 15*time.Second, "FAILED long before the %s submission grace", 30*time.Second)
		t.Logf("FAILED %s after the apply: %s", took.Round(100*time.Millisecond), msg)
	})

	// A namespace that enforces restricted refuses a driver with Spark's defaults: the first
	// status written says so, and no driver is ever asked for.
	t.Run("restricted namespace", func(t *testing.T) {
		t.Parallel()
		w := newWorldIn(t, func(core kubernetes.Interface) string {
			return createLabelledTeamNamespace(t, core, "e2e-restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		}, hooksURL, appController)
		states := w.watchStates(t, "privileged")
		out, err := w.apply(scenarioApp("privileged", "100", ""))
		require.NoError(t, err, out)
		w.check(t, w.waitState("privileged", "FAILED"))

		app, err := w.app("privileged")
		require.NoError(t, err)
		msg, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage")
		assert.Contains(t, msg, `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`, describeApp(app))
		assert.NotContains(t, states.String(), "SUBMITTED", "refused by the first sync, before any driver was asked for")
		_, err = w.pod("privileged-driver")
		assert.True(t, err != nil, "no driver Pod exists")
	})
}
