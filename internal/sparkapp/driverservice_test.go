package sparkapp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// TestScenarioNextAttemptHasItsOwnDriverService: whatever ends an attempt and starts the next
// (Kueue's eviction and readmission, a retry, a spec change, a suspension and resumption), the
// next attempt's driver Service has a name the ended one's never had, and its executors are
// told that name. The ended attempt's executors, owned by the application too, outlive their
// driver and look its Service up while no driver answers; cluster DNS caches that the name does
// not exist (CoreDNS: 30 s), so a next attempt under the same name had executors that could not
// resolve their driver (TestKueueAdmitsOneAtATime in CI, both Kueue modes).
func TestScenarioNextAttemptHasItsOwnDriverService(t *testing.T) {
	var admitted kueueJobSpec // the spec Kueue's first admission changed
	tests := []struct {
		name  string
		doc   string
		setup func(w *world)
		// next ends the running attempt and starts the next one.
		next func(t *testing.T, w *world)
	}{
		{
			name: "Kueue's integration evicts and readmits", doc: queuedSparkPi, setup: withKueueIntegration,
			next: func(t *testing.T, w *world) {
				w.kueueJobEvict(admitted)
				w.settle()
				require.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
				w.advance(time.Minute)
				w.kueueJobAdmit("on-demand")
				w.settle()
			},
		},
		{
			name: "a failed attempt is retried", doc: withRestart(sparkPi, "    type: OnFailure\n    onFailureRetries: 1\n"),
			next: func(t *testing.T, w *world) {
				w.driverExited(1, "Error")
				w.settle()
				require.Equal(t, v1beta2.ApplicationStateFailing, w.state())
				w.advance(time.Hour)
				w.settle()
			},
		},
		{
			name: "the spec changes", doc: sparkPi,
			next: func(t *testing.T, w *world) {
				w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"7"} })
				w.settle()
			},
		},
		{
			name: "the user suspends and resumes", doc: sparkPi,
			next: func(t *testing.T, w *world) {
				w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(true) })
				w.settle()
				require.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
				w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(false) })
				w.settle()
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.doc)
			if tt.setup != nil {
				tt.setup(w)
				w.settle()
				admitted = w.kueueJobAdmit("spot")
			}
			w.settle()
			w.driverRunning(true)
			w.addExecutors(2, corev1.PodRunning)
			w.settle()
			require.Equal(t, v1beta2.ApplicationStateRunning, w.state())
			first, firstSub := driverServiceOf(t, w), w.app.Status.SubmissionID

			tt.next(t, w)
			require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
			require.NotEqual(t, firstSub, w.app.Status.SubmissionID, "a next attempt")
			assert.Len(t, w.execs, 2, "the ended attempt's executors are still there, as in a cluster")
			second := driverServiceOf(t, w)
			assert.NotEqual(t, first, second, "the next attempt reuses the ended one's driver Service name")
			assert.True(t, strings.HasSuffix(second, "-driver-svc"), second)
		})
	}
}

// driverServiceOf returns the name of the one driver Service among the world's children, and
// checks that the attempt's properties send the executors to it.
func driverServiceOf(t *testing.T, w *world) string {
	t.Helper()
	name := coretest.DriverService(t, w.children[keyService])
	var props []string
	for _, cm := range w.children[keyConfigMap] {
		data, _ := cm["data"].(map[string]any)
		p, _ := data["spark.properties"].(string)
		props = append(props, p)
	}
	require.Len(t, props, 1)
	assert.Contains(t, props[0], "\nspark.driver.host="+name+"."+w.app.Namespace+".svc\n")
	return name
}

// TestScenarioRunningAttemptKeepsItsDriverService: an attempt that a release before per-attempt
// names started, under <app>-driver-svc, keeps that Service (and the ConfigMap whose
// spark.driver.host names it) after the upgrade: its driver gave the name to its executors, and
// gives it to any it starts later.
func TestScenarioRunningAttemptKeepsItsDriverService(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.addExecutors(2, corev1.PodRunning)
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateRunning, w.state())
	built := driverServiceOf(t, w)
	require.Len(t, w.children[keyConfigMap], 1)
	var configMap string
	for name := range w.children[keyConfigMap] {
		configMap = name
	}

	// The children as the earlier release answered them: the same, under the old Service name,
	// and so in a ConfigMap of other content, whose name is another.
	const legacy, legacyConfigMap = "spark-pi-driver-svc", "spark-pi-0123456789-conf"
	old := strings.NewReplacer(built, legacy, configMap, legacyConfigMap).Replace(string(coretest.MustJSON(t, w.children)))
	var children map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(old), &children))
	w.children = children
	w.created, w.deleted, w.drifted = nil, nil, nil
	w.advance(time.Minute)
	w.settle()
	assert.Equal(t, legacy, driverServiceOf(t, w))
	assert.Contains(t, w.children[keyConfigMap], legacyConfigMap)
	assert.Empty(t, w.created, "nothing is made anew")
	assert.Empty(t, w.deleted, "nothing is taken away")
	assert.Empty(t, w.drifted, "nothing is answered otherwise")
}
