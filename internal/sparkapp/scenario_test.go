package sparkapp

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

const sparkPi = `
metadata:
  name: spark-pi
  namespace: spark-jobs
spec:
  type: Scala
  mode: cluster
  image: apache/spark:3.5.3
  sparkVersion: 3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  arguments: ["1000"]
  driver:
    cores: 1
    memory: 512m
    serviceAccount: spark
  executor:
    cores: 1
    instances: 2
    memory: 512m
`

func withRestart(yamlDoc, policy string) string {
	return yamlDoc + "  restartPolicy:\n" + policy
}

func condition(w *world, typ string) *metav1.Condition {
	return meta.FindStatusCondition(w.app.Status.Conditions, typ)
}

func (w *world) podNames() []string {
	return sortedNames(w.children[keyPod])
}

func TestScenarioHappyPath(t *testing.T) {
	w := newWorld(t, sparkPi)
	require.NoError(t, w.sync())
	st := w.app.Status
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, st.AppState.State)
	assert.Equal(t, int32(1), st.SubmissionAttempts)
	assert.Equal(t, int32(1), st.ExecutionAttempts)
	assert.Regexp(t, `^spark-[0-9a-f]{32}$`, st.SparkApplicationID)
	assert.NotEmpty(t, st.SubmissionID)
	assert.Equal(t, "spark-pi-driver", st.DriverInfo.PodName)
	assert.Equal(t, []string{"spark-pi-driver"}, w.podNames())
	assert.Len(t, w.children[keyConfigMap], 1)
	assert.NotEmpty(t, w.children[keyService])
	assert.Equal(t, float64(30), w.last.ResyncAfterSeconds, "a sync when the submission grace ends")

	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, "Pending", condition(w, condDriverStarted).Reason)

	w.advance(5 * time.Second)
	w.driverRunning(true)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, w.state())
	assert.Equal(t, metav1.ConditionTrue, condition(w, condDriverReady).Status)
	assert.Equal(t, reasonExecutorsStarting, condition(w, condExecutorsReady).Reason)

	w.addExecutors(2, corev1.PodRunning)
	w.settle()
	assert.Equal(t, metav1.ConditionTrue, condition(w, condExecutorsReady).Status)
	assert.Equal(t, map[string]v1beta2.ExecutorState{"spark-pi-exec-1": "RUNNING", "spark-pi-exec-2": "RUNNING"}, w.app.Status.ExecutorState)
	assert.Zero(t, w.last.ResyncAfterSeconds, "nothing pending while running")

	w.advance(time.Minute)
	w.driverExited(0, "Completed")
	w.execs = map[string]map[string]any{}
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateCompleted, w.state())
	assert.True(t, w.now.Equal(w.app.Status.TerminationTime.Time))
	assert.Equal(t, map[string]v1beta2.ExecutorState{"spark-pi-exec-1": "COMPLETED", "spark-pi-exec-2": "COMPLETED"}, w.app.Status.ExecutorState)
	assert.Equal(t, []string{"spark-pi-driver"}, w.podNames(), "the finished driver is kept for kubectl logs")
	assert.Empty(t, w.deleted)
	assert.Zero(t, w.last.ResyncAfterSeconds)
}

func TestScenarioOnFailureRetriesExhausted(t *testing.T) {
	w := newWorld(t, withRestart(sparkPi, "    type: OnFailure\n    onFailureRetries: 2\n    onFailureRetryInterval: 10\n"))
	w.settle()
	var seen []v1beta2.ApplicationStateType
	for attempt := int32(1); attempt <= 3; attempt++ {
		require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state(), "attempt %d", attempt)
		require.Equal(t, attempt, w.app.Status.ExecutionAttempts)
		w.driverRunning(true)
		w.settle()
		w.advance(time.Minute)
		w.driverExited(1, "Error")
		w.settle()
		seen = append(seen, w.state())
		if attempt == 3 {
			break
		}
		require.Equal(t, v1beta2.ApplicationStateFailing, w.state())
		assert.False(t, w.hasDriver(), "the failed driver is released for the retry")
		due := time.Duration(10*attempt) * time.Second
		assert.Equal(t, due.Seconds(), w.last.ResyncAfterSeconds, "linear back-off")
		w.advance(due - time.Second)
		w.settle()
		require.Equal(t, v1beta2.ApplicationStateFailing, w.state(), "no retry before the interval")
		w.advance(time.Second)
		w.settle()
	}
	assert.Equal(t, []v1beta2.ApplicationStateType{"FAILING", "FAILING", "FAILED"}, seen)
	st := w.app.Status
	assert.Equal(t, int32(3), st.ExecutionAttempts, "Kubeflow's oracle: onFailureRetries + 1")
	assert.Equal(t, int32(3), st.SubmissionAttempts)
	assert.Contains(t, st.AppState.ErrorMessage, "exit code 1")
	assert.Equal(t, ReasonAppFailed, condition(w, condFailed).Reason)
	assert.Equal(t, []string{"spark-pi-driver"}, w.podNames(), "the last failed driver is kept")
}

func TestScenarioAlwaysRerunsAfterSuccess(t *testing.T) {
	w := newWorld(t, withRestart(sparkPi, "    type: Always\n"))
	w.settle()
	first := w.app.Status.SubmissionID
	w.driverRunning(true)
	w.settle()
	w.driverExited(0, "Completed")
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStatePendingRerun, w.state())
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.NotEqual(t, first, w.app.Status.SubmissionID)
	assert.Equal(t, int32(2), w.app.Status.SubmissionAttempts)
}

func TestScenarioSubmissionFailure(t *testing.T) {
	w := newWorld(t, withRestart(sparkPi, "    type: OnFailure\n    onSubmissionFailureRetries: 1\n    onSubmissionFailureRetryInterval: 60\n"))
	w.rejectPods = true
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	w.advance(30 * time.Second)
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state(), "a missing driver is believed only after the missing-driver grace")
	assert.Equal(t, ReasonDriverMissing, condition(w, condDriverMissing).Reason)
	w.advance(10 * time.Second)
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateFailedSubmission, w.state())
	assert.Contains(t, w.app.Status.AppState.ErrorMessage, "was not created, or was removed before it started, within 30s")
	assert.Equal(t, int32(0), w.app.Status.ExecutionAttempts)

	assert.Equal(t, float64(20), w.last.ResyncAfterSeconds, "the retry is due 60s after the submission")
	w.advance(19 * time.Second)
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateFailedSubmission, w.state(), "no retry before the interval")
	w.advance(time.Second)
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, int32(2), w.app.Status.SubmissionAttempts)
	w.advance(30 * time.Second)
	w.settle()
	w.advance(10 * time.Second)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateFailed, w.state())
	assert.Equal(t, int32(2), w.app.Status.SubmissionAttempts, "Kubeflow's oracle: onSubmissionFailureRetries + 1")
	assert.Equal(t, int32(0), w.app.Status.ExecutionAttempts)
}

func TestScenarioSpecChangeMidRun(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	oldID := w.app.Status.SubmissionID

	w.app.Labels = map[string]string{"team": "data"}
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.TimeToLiveSeconds = ptr(int64(600)) })
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, w.state(), "metadata and ttl edits do not restart")
	assert.Equal(t, oldID, w.app.Status.SubmissionID)

	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"5000"} })
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateInvalidating, w.state())
	assert.False(t, w.hasDriver(), "the old driver is released")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.NotEqual(t, oldID, w.app.Status.SubmissionID)
	assert.Equal(t, int32(1), w.app.Status.SubmissionAttempts, "attempts restart with the new spec")
	assert.True(t, w.hasDriver())
}

func TestScenarioInvalidEditKeepsRunning(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Driver.Memory = ptr("lots") })
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, w.state())
	assert.True(t, w.hasDriver())
	c := condition(w, condSpecValid)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Contains(t, c.Message, "spec.driver.memory")
	assert.Empty(t, w.deleted)
}

func TestScenarioInvalidNewAppThenFixed(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.app.Spec.Executor.Memory = ptr("3 GB")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateFailedSubmission, w.state())
	assert.Contains(t, w.app.Status.AppState.ErrorMessage, "spec.executor.memory")
	assert.Empty(t, w.created)
	assert.Zero(t, w.last.ResyncAfterSeconds)

	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Executor.Memory = ptr("3g") })
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.True(t, w.hasDriver())
}

func TestScenarioDriverStartTimeout(t *testing.T) {
	w := newWorld(t, sparkPi+"  timeouts:\n    driverStartSeconds: 60\n")
	w.settle()
	w.setDriverStatus(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: driverContainer, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}}})
	w.settle()
	assert.Equal(t, float64(60), w.last.ResyncAfterSeconds)
	w.advance(60 * time.Second)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateFailed, w.state())
	assert.Equal(t, ReasonDriverStartTimeout, condition(w, condTimedOut).Reason)
	assert.False(t, w.hasDriver(), "a timed-out driver that never finished is released")
}

func TestScenarioDriverDeletedByHand(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.children[keyPod] = map[string]map[string]any{}
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, w.state(), "one missing read is not believed")
	assert.False(t, w.hasDriver(), "the vanished driver is not created again")
	assert.Equal(t, float64(10), w.last.ResyncAfterSeconds)
	w.advance(10 * time.Second)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateFailed, w.state())
	assert.Equal(t, ReasonDriverMissing, condition(w, condFailed).Reason)
	assert.False(t, w.hasDriver())
}

func TestScenarioDeletionMidRun(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	resp, err := Finalize(w.request(true))
	require.NoError(t, err)
	assert.Empty(t, resp.Children)
	assert.False(t, resp.Finalized, "children still exist")
	w.apply(resp)
	resp, err = Finalize(w.request(true))
	require.NoError(t, err)
	assert.True(t, resp.Finalized)
}

func TestScenarioTimeToLive(t *testing.T) {
	w := newWorld(t, sparkPi+"  timeToLiveSeconds: 120\n")
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.driverExited(0, "Completed")
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateCompleted, w.state())
	assert.Equal(t, float64(120), w.last.ResyncAfterSeconds)
	assert.True(t, w.hasDriver())
	w.advance(120 * time.Second)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateCompleted, w.state())
	assert.Empty(t, w.children[keyPod])
	assert.Empty(t, w.children[keyConfigMap])
	assert.Empty(t, w.children[keyService])
	require.NotNil(t, condition(w, condExpired))
	assert.Zero(t, w.last.ResyncAfterSeconds)
}

func TestScenarioRetainPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy    string
		exitCode  int32
		keepsPods bool
	}{
		{"Always", 0, true},
		{"Always", 1, true},
		{"OnFailure", 0, false},
		{"OnFailure", 1, true},
		{"Never", 0, false},
		{"Never", 1, false},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			w := newWorld(t, sparkPi+"  resourceRetainPolicy: "+tc.policy+"\n")
			w.settle()
			w.driverRunning(true)
			w.settle()
			w.driverExited(tc.exitCode, "")
			w.settle()
			assert.Equal(t, tc.keepsPods, w.hasDriver())
			assert.Equal(t, tc.keepsPods, len(w.children[keyConfigMap]) > 0)
		})
	}
}

func TestScenarioSuspendResume(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(true) })
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStateSuspending, w.state())
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSuspended, w.state())
	assert.False(t, w.hasDriver())
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(false) })
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, int32(2), w.app.Status.SubmissionAttempts)
}

func TestScenarioFailureClassification(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status corev1.PodStatus
		reason string
	}{
		{"oom", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: driverContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}}, ReasonOOMKilled},
		{"evicted", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}, ReasonEvicted},
		{"init container", corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{{Name: "fetch",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}}}, ReasonInitContainerFailed},
		{"node lost", corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget,
			Status: corev1.ConditionTrue, Reason: "DeletionByPodGC"}}}, ReasonNodeLost},
		{"app", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: driverContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}}, ReasonAppFailed},
		{"invalid image", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: driverContainer,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "InvalidImageName"}}}}}, ReasonInvalidImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, sparkPi)
			w.settle()
			w.setDriverStatus(tc.status)
			w.settle()
			assert.Equal(t, v1beta2.ApplicationStateFailed, w.state())
			require.NotNil(t, condition(w, condFailed))
			assert.Equal(t, tc.reason, condition(w, condFailed).Reason)
			assert.NotEmpty(t, w.app.Status.AppState.ErrorMessage)
		})
	}
}

func TestScenarioImagePullBackOffGivesUpAfterGrace(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.setDriverStatus(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: driverContainer,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}}})
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, "ImagePullBackOff", condition(w, condDriverStarted).Reason)
	w.advance(5 * time.Minute)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateFailed, w.state())
	assert.Equal(t, ReasonImagePull, condition(w, condFailed).Reason)
}

func TestScenarioExecutorsCapped(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.cfg.MaxTrackedExecutors = 3
	w.settle()
	w.driverRunning(true)
	w.addExecutors(5, corev1.PodRunning)
	w.settle()
	assert.Len(t, w.app.Status.ExecutorState, 3)
	assert.Contains(t, w.app.Status.ExecutorState, "spark-pi-exec-1")
	assert.Contains(t, condition(w, condExecutorsReady).Message, "executorState lists 3 of 5 executors")
}

func TestScenarioExecutorsStartTimeout(t *testing.T) {
	w := newWorld(t, sparkPi+"  timeouts:\n    executorsStartSeconds: 90\n")
	w.settle()
	w.driverRunning(true)
	w.addExecutors(1, corev1.PodRunning) // 2 wanted
	w.settle()
	assert.Equal(t, float64(90), w.last.ResyncAfterSeconds)
	w.advance(90 * time.Second)
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateFailed, w.state())
	assert.Equal(t, ReasonExecutorsTimeout, condition(w, condTimedOut).Reason)
}

// A stale request (status of attempt 1, children already showing attempt 2 running) must not
// yield an answer that deletes the running driver.
func TestScenarioStaleRequestNeverDeletesRunningDriver(t *testing.T) {
	w := newWorld(t, withRestart(sparkPi, "    type: OnFailure\n    onFailureRetries: 3\n    onFailureRetryInterval: 5\n"))
	w.settle()
	w.driverRunning(true)
	w.settle()
	stale := w.request(false)

	w.driverExited(1, "Error")
	w.settle()
	w.advance(10 * time.Second)
	w.settle()
	w.driverRunning(true)
	w.settle()
	require.Equal(t, int32(2), w.app.Status.SubmissionAttempts)

	// Replay: the old parent with the new children.
	fresh := w.request(false)
	stale.Children = fresh.Children
	w.advance(time.Hour)
	resp, _, err := Sync(stale, w.now, w.cfg)
	if err == nil {
		var answer struct {
			Children []struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"children"`
		}
		require.NoError(t, json.Unmarshal(coretest.MustJSON(t, resp), &answer))
		var names []string
		for _, c := range answer.Children {
			if c.Kind == "Pod" {
				names = append(names, c.Metadata.Name)
			}
		}
		assert.Contains(t, names, "spark-pi-driver", "a running driver was dropped")
	} else {
		var refusal *metacontroller.Refusal
		assert.ErrorAs(t, err, &refusal)
	}
}

func TestScenarioLostStatusWriteResubmitsSameObjects(t *testing.T) {
	w := newWorld(t, sparkPi)
	require.NoError(t, w.sync())
	first := coretest.MustJSON(t, w.last.Children)
	// The status write is lost: the parent is still new, the children exist.
	w.app.Status = v1beta2.SparkApplicationStatus{}
	require.NoError(t, w.sync())
	assert.JSONEq(t, string(first), string(coretest.MustJSON(t, w.last.Children)))
	assert.Len(t, w.created, len(w.last.Children), "nothing created twice")
}

func TestSyncIsDeterministic(t *testing.T) {
	w := newWorld(t, sparkPi)
	req := w.request(false)
	a, _, err := Sync(req, w.now, w.cfg)
	require.NoError(t, err)
	b, _, err := Sync(req, w.now, w.cfg)
	require.NoError(t, err)
	assert.Equal(t, string(coretest.MustJSON(t, a)), string(coretest.MustJSON(t, b)))
}

func TestSyncRejectsBadRequests(t *testing.T) {
	for name, body := range map[string]string{
		"no parent":        `{"children": {}}`,
		"parent not json":  `{"parent": "x"}`,
		"wrong kind":       `{"parent": {"kind": "Pod", "metadata": {"name": "a", "uid": "u"}}}`,
		"no uid":           `{"parent": {"kind": "SparkApplication", "metadata": {"name": "a"}}}`,
		"bad child":        `{"parent": {"kind": "SparkApplication", "metadata": {"name": "a", "uid": "u"}}, "children": {"Pod.v1": {"p": {"metadata": 3}}}}`,
		"unknown state":    `{"parent": {"kind": "SparkApplication", "metadata": {"name": "a", "uid": "u"}, "status": {"applicationState": {"state": "DANCING"}}}}`,
		"wrong apiVersion": `{"parent": {"kind": "SparkApplication", "apiVersion": "sparkoperator.k8s.io/v1beta1", "metadata": {"name": "a", "uid": "u"}}}`,
		"finalizing a parent not being deleted": `{"parent": {"kind": "SparkApplication", "metadata": {"name": "a", "uid": "u"}, "status": {"applicationState": {"state": "RUNNING"}, "submissionID": "s"}},
			"children": {"Pod.v1": {"a-driver": {"metadata": {"name": "a-driver", "labels": {"sparkoperator.k8s.io/submission-id": "s"}}, "status": {"phase": "Running"}}}}, "finalizing": true}`,
		"child filed under another name": `{"parent": {"kind": "SparkApplication", "metadata": {"name": "a", "uid": "u"}}, "children": {"Pod.v1": {"a-driver": {"metadata": {"name": "b-driver"}}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var req = new(metacontroller.SyncRequest)
			require.NoError(t, json.Unmarshal([]byte(body), req))
			_, _, err := Sync(req, coretest.WorldStart, DefaultConfig())
			require.Error(t, err)
			var re *metacontroller.RequestError
			assert.ErrorAs(t, err, &re)
			_, err = Finalize(req)
			assert.ErrorAs(t, err, &re, "the finalize hook reads the same request")
		})
	}
}

func TestCustomizeSelectsExecutors(t *testing.T) {
	w := newWorld(t, sparkPi)
	resp, err := Customize(&metacontroller.CustomizeRequest{Parent: coretest.MustJSON(t, w.app)})
	require.NoError(t, err)
	require.Len(t, resp.RelatedResources, 4)
	assert.Equal(t, namespaceRule(w.app), resp.RelatedResources[1], "the executors, then the Namespace")
	require.Equal(t, admissionRules(w.app.Namespace, resp.RelatedResources[:2]), resp.RelatedResources[2:],
		"then the rest of what the driver's admission reads")
	rule := resp.RelatedResources[0]
	assert.Equal(t, "pods", rule.Resource)
	assert.Equal(t, "executor", rule.LabelSelector.MatchLabels[sparkpod.LabelSparkRole])
	assert.Equal(t, "spark-pi", rule.LabelSelector.MatchLabels[sparkpod.LabelAppName])
	// The application's own Namespace, by name: its labels decide whether the application may
	// start (--namespace-selector); a cluster-scoped object, it reaches the v2 sync hook only.
	assert.Equal(t, metacontroller.RelatedResourceRule{APIVersion: "v1", Resource: "namespaces", Names: []string{w.app.Namespace}}, resp.RelatedResources[1])
}

func ptr[T any](v T) *T { return &v }

// A running attempt keeps the ConfigMap its driver started with when the properties built now
// differ: after a label edit, or after a sparkhooks upgrade that writes other properties. The
// content-addressed name would otherwise change and the old ConfigMap be deleted.
func TestScenarioRunningAttemptKeepsItsConfigMap(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	require.Len(t, w.children[keyConfigMap], 1)
	var original string
	for name := range w.children[keyConfigMap] {
		original = name
	}

	// What an older release wrote: same submission, another name.
	older := "spark-pi-0123456789-conf"
	cm := w.children[keyConfigMap][original]
	cm["metadata"].(map[string]any)["name"] = older
	w.children[keyConfigMap] = map[string]map[string]any{older: cm}
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, w.state())
	assert.Equal(t, []string{older}, sortedNames(w.children[keyConfigMap]), "the attempt's ConfigMap is kept")
	assert.NotContains(t, w.deleted, keyConfigMap+"/"+older)

	w.app.Labels = map[string]string{"team": "analytics"}
	w.settle()
	assert.Equal(t, []string{older}, sortedNames(w.children[keyConfigMap]), "a label edit changes nothing under a running driver")

	// A new attempt gets the ConfigMap built for it.
	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"20000"} })
	w.settle()
	w.execs = map[string]map[string]any{}
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	require.Len(t, w.children[keyConfigMap], 1)
	assert.NotContains(t, w.children[keyConfigMap], older)
}

// A gang-scheduled application's PodGroup lives and dies with its attempt: a retry waits until
// the old group is gone, because the new attempt's group has the same name.
func TestScenarioVolcanoPodGroupFollowsTheAttempt(t *testing.T) {
	w := newWorld(t, withRestart(sparkPi+"  batchScheduler: volcano\n", "    type: OnFailure\n    onFailureRetries: 1\n    onFailureRetryInterval: 10\n"))
	w.children[keyPodGroup] = map[string]map[string]any{}
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	require.Equal(t, []string{"spark-spark-pi-pg"}, sortedNames(w.children[keyPodGroup]))
	w.driverRunning(true)
	w.settle()
	w.driverExited(1, "Error")
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateFailing, w.state())
	assert.Empty(t, w.children[keyPodGroup], "the failed attempt's group is released with its driver")
	assert.Contains(t, w.deleted, keyPodGroup+"/spark-spark-pi-pg")

	// Metacontroller has not deleted it yet: the retry waits.
	w.children[keyPodGroup]["spark-spark-pi-pg"] = map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "spark-spark-pi-pg", "deletionTimestamp": w.now.Format(time.RFC3339)},
	}
	w.advance(10 * time.Second)
	require.NoError(t, w.sync())
	assert.Equal(t, v1beta2.ApplicationStatePendingRerun, w.state())
	assert.Equal(t, int32(1), w.app.Status.SubmissionAttempts)

	w.settle() // the world deletes what is not desired, as Metacontroller would
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, int32(2), w.app.Status.SubmissionAttempts)
	assert.Equal(t, []string{"spark-spark-pi-pg"}, sortedNames(w.children[keyPodGroup]))
}

// Metacontroller may answer the event of a child change with a parent read from before the
// previous sync's status write. The sync that decides an attempt is over therefore keeps its
// children: a stale read then still finds the finished driver and decides the same, instead of
// seeing an active attempt whose driver vanished (and failing it, or running it again).
func TestScenarioStaleParentAfterAttemptEnds(t *testing.T) {
	for _, tt := range []struct {
		name, spec string
		exit       int32
		want       v1beta2.ApplicationStateType
	}{
		{"completed, released by the retain policy", sparkPi + "  resourceRetainPolicy: Never\n", 0, v1beta2.ApplicationStateCompleted},
		{"failed, retried", withRestart(sparkPi, onFailure), 1, v1beta2.ApplicationStateFailing},
		{"succeeded, rerun by Always", withRestart(sparkPi, "    type: Always\n"), 0, v1beta2.ApplicationStatePendingRerun},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.spec)
			w.settle()
			w.driverRunning(true)
			w.settle()
			stale := w.app.DeepCopy() // RUNNING, as a lagging cache still has it
			w.driverExited(tt.exit, map[bool]string{true: "Completed", false: "Error"}[tt.exit == 0])
			require.NoError(t, w.sync())
			require.Equal(t, tt.want, w.state())
			require.True(t, w.hasDriver(), "the deciding sync keeps the finished driver")

			fresh := w.app
			w.app = stale
			resp, _, err := Sync(w.request(false), w.now.Add(time.Second), w.cfg)
			w.app = fresh
			require.NoError(t, err)
			st := resp.Status.(*v1beta2.SparkApplicationStatus)
			assert.Equal(t, tt.want, st.AppState.State, "the stale read decides the same")
			assert.Nil(t, meta.FindStatusCondition(st.Conditions, condDriverMissing))

			require.NoError(t, w.sync())
			assert.False(t, w.hasDriver(), "the next sync, which reads the finished state, releases it")
		})
	}
}

// The status write of the sync that submits a retry is lost: the next sync sees the retry's
// driver with a status that does not know it. It submits the same attempt again (the same
// objects) rather than refusing forever.
func TestScenarioLostStatusWriteOfARetry(t *testing.T) {
	w := newWorld(t, withRestart(sparkPi, onFailure))
	w.settle()
	w.driverRunning(true)
	w.settle()
	w.driverExited(1, "Error")
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateFailing, w.state())
	w.advance(10 * time.Second)
	before := w.app.Status.DeepCopy()
	require.NoError(t, w.sync())
	for w.state() != v1beta2.ApplicationStateSubmitted {
		before = w.app.Status.DeepCopy()
		require.NoError(t, w.sync())
	}
	retry := w.app.Status.SubmissionID
	require.True(t, w.hasDriver())

	w.app.Status = *before // the write of the submitting sync never landed
	require.NoError(t, w.sync(), "no refusal: the retry's driver belongs to the attempt this sync would submit")
	assert.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, retry, w.app.Status.SubmissionID)
	assert.Equal(t, int32(2), w.app.Status.SubmissionAttempts)
}

// Metacontroller rewrites a child whenever an answer differs from the one it recorded when it
// created it (InPlace kinds), so every answer for the same attempt must give each child byte
// for byte as at its creation, whether it was built again or echoed from what is observed. The
// world counts such differences for every kind, OnDelete ones included.
func TestScenarioChildrenAreNeverRewritten(t *testing.T) {
	withTTL := sparkPi + "  timeToLiveSeconds: 600\n"
	tests := []struct {
		name string
		doc  string
		cfg  func(*Config)
		run  func(w *world)
	}{
		{"completed then expired", withTTL, nil, func(w *world) {
			w.driverExited(0, "Completed")
			w.settle()
			w.advance(time.Hour)
			w.settle()
			require.Equal(w.t, v1beta2.ApplicationStateCompleted, w.state())
		}},
		{"failed, retried, completed", withRestart(sparkPi, onFailure), nil, func(w *world) {
			w.driverExited(1, "Error")
			w.settle()
			w.advance(time.Minute)
			w.settle()
			w.driverRunning(true)
			w.settle()
			w.driverExited(0, "Completed")
			w.settle()
			require.Equal(w.t, v1beta2.ApplicationStateCompleted, w.state())
		}},
		{"UI ingress, failed for good", sparkPi, func(c *Config) { c.Driver.IngressURLFormat = "{{$appName}}.spark.example.com" }, func(w *world) {
			require.NotEmpty(w.t, w.children[keyIngress])
			w.driverExited(1, "Error")
			w.settle()
			require.Equal(w.t, v1beta2.ApplicationStateFailed, w.state())
		}},
		{"suspended and resumed", sparkPi, nil, func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(true) })
			w.settle()
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = nil })
			w.settle()
			w.driverRunning(true)
			w.settle()
			require.Equal(w.t, v1beta2.ApplicationStateRunning, w.state())
		}},
		{"spec edited mid-run", sparkPi, nil, func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"7"} })
			w.settle()
			w.driverRunning(true)
			w.settle()
			require.Equal(w.t, v1beta2.ApplicationStateRunning, w.state())
		}},
		{"invalid edit mid-run, then completed", sparkPi, nil, func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Executor.Memory = ptr("lots") })
			w.settle()
			w.driverExited(0, "Completed")
			w.settle()
			require.Equal(w.t, v1beta2.ApplicationStateCompleted, w.state())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.doc)
			if tt.cfg != nil {
				tt.cfg(&w.cfg)
			}
			w.settle()
			w.advance(5 * time.Second)
			w.driverRunning(true)
			w.addExecutors(2, corev1.PodRunning)
			w.settle()
			tt.run(w)
			assert.Empty(t, w.updated, "children rewritten")
			assert.Empty(t, w.drifted, "OnDelete children answered differently from their creation")
			assert.NotEmpty(t, w.created)
		})
	}
}

// Two syncs of a new application read before its first status write (Metacontroller's cache
// lags) decide the same first attempt; they must also write the same status, or each stale
// read writes its times over the other's. Both are dated at the creation, unless the first
// sync comes long after it.
func TestFirstDecisionIsDatedAtCreation(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.app.CreationTimestamp = metav1.NewTime(coretest.WorldStart)
	stale := w.request(false)
	w.advance(1500 * time.Millisecond)
	require.NoError(t, w.sync())
	first := coretest.MustJSON(t, w.last.Status)

	// The second sync: a new parent again, the first sync's children observed. It also sees the
	// UI Service with its cluster IP, which the first could not: the address waits for the
	// driver, so that the two still write the same status (found on the real API server, which
	// allocates the IP as the Service is created).
	again := w.request(false)
	again.Parent = stale.Parent
	ui := w.app.Status.DriverInfo.WebUIServiceName
	require.NotEmpty(t, ui)
	var svc serviceView
	require.NoError(t, json.Unmarshal(again.Children[keyService][ui], &svc))
	require.NotEmpty(t, svc.Spec.ClusterIP, "the second sync observes the UI Service's cluster IP")
	resp, _, err := Sync(again, w.now.Add(time.Second), w.cfg)
	require.NoError(t, err)
	assert.JSONEq(t, string(first), string(coretest.MustJSON(t, resp.Status)))
	assert.Empty(t, resp.Status.(*v1beta2.SparkApplicationStatus).DriverInfo.WebUIAddress)
	assert.True(t, w.app.Status.LastSubmissionAttemptTime.Equal(&metav1.Time{Time: coretest.WorldStart}))
	assert.Equal(t, float64(29), w.last.ResyncAfterSeconds, "the grace period counts from the creation")

	late := newWorld(t, sparkPi)
	late.app.CreationTimestamp = metav1.NewTime(coretest.WorldStart)
	late.advance(time.Hour)
	require.NoError(t, late.sync())
	assert.True(t, late.app.Status.LastSubmissionAttemptTime.Equal(&metav1.Time{Time: coretest.WorldStart.Add(time.Hour)}),
		"a first sync an hour late is dated now, so the submission grace is not already spent")
}

// With the registration declaring PodDisruptionBudgets, an application that asks for one gets it
// with its driver, keeps it while the attempt runs, and gives it up when the attempt ends; the
// next attempt gets its own.
func TestScenarioDriverPodDisruptionBudget(t *testing.T) {
	w := newWorld(t, withRestart(sparkPi+"  driverPodDisruptionBudget: true\n", onFailure))
	w.children[keyPDB] = map[string]map[string]any{}
	w.settle()
	w.driverRunning(true)
	w.settle()
	require.Contains(t, w.children[keyPDB], "spark-pi-driver")
	selector := w.children[keyPDB]["spark-pi-driver"]["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	assert.Equal(t, w.app.Status.SparkApplicationID, selector[sparkpod.LabelAppSelector])

	w.driverExited(1, "Error")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateFailing, w.state())
	assert.Empty(t, w.children[keyPDB], "a failed attempt releases its budget")
	w.advance(time.Minute)
	w.settle()
	w.driverRunning(true)
	w.settle()
	require.Contains(t, w.children[keyPDB], "spark-pi-driver", "the next attempt has its own")

	w.driverExited(0, "Completed")
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateCompleted, w.state())
	assert.Empty(t, w.children[keyPDB], "a finished application needs no budget")
	assert.Equal(t, []string{"spark-pi-driver"}, w.podNames(), "the finished driver is still kept for its logs")
	assert.Empty(t, w.updated)
	assert.Empty(t, w.drifted)
}

// Turning the operator's event log default on changes nothing under a running driver: its Pod and
// ConfigMap are answered as they were (no drift, no restart) and the attempt names no History
// Server page, since it does not log there. The next attempt gets the default, its volume and
// the page.
func TestScenarioEventLogDefaultSparesARunningAttempt(t *testing.T) {
	w := newWorld(t, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	configMaps := sortedNames(w.children[keyConfigMap])

	w.cfg.Driver.EventLog = children.EventLog{Dir: "file:/spark-events", Volume: &corev1.Volume{VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "spark-events"}}}}
	w.cfg.HistoryServerURL = "http://spark-history.example.com"
	w.settle()
	assert.Equal(t, v1beta2.ApplicationStateRunning, w.state())
	assert.Equal(t, configMaps, sortedNames(w.children[keyConfigMap]), "the running attempt keeps its ConfigMap")
	assert.Empty(t, w.drifted, "the running driver is answered as it was")
	assert.Empty(t, w.app.Status.HistoryURL, "the running attempt does not log to the default dir")

	w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"20000"} })
	w.settle()
	w.execs = map[string]map[string]any{}
	w.settle()
	require.Equal(t, v1beta2.ApplicationStateSubmitted, w.state())
	assert.Equal(t, "http://spark-history.example.com/history/"+w.app.Status.SparkApplicationID+"/jobs/", w.app.Status.HistoryURL)
	assert.Contains(t, string(coretest.MustJSON(t, w.driverPod()["spec"])), `"claimName":"spark-events"`, "the new driver mounts the event log's volume")
	for name, cm := range w.children[keyConfigMap] {
		assert.Contains(t, cm["data"].(map[string]any)["spark.properties"], "spark.eventLog.dir=file\\:/spark-events\n", name)
	}
}
