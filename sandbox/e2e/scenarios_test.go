//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// Scenario tests: the chart's hook server (hooksURL), called by the contract controller as
// Metacontroller would call it, with the fake kubelet playing the driver Pod's life and the
// driver's executors, and kubectl as the user.

// example is a SparkApplication from examples/.
type example struct {
	file string // path of the file
	name string
	// restartPolicy is spec.restartPolicy.type ("" when unset).
	restartPolicy string
	// retainPolicy is spec.resourceRetainPolicy ("" when unset).
	retainPolicy string
	// claims are the PersistentVolumeClaims spec.volumes name.
	claims []string
}

// exampleApplications reads every SparkApplication in examples/*.yaml; other kinds are skipped.
func exampleApplications(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*.yaml"))
	require.NoError(t, err)
	var out []example
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			var obj map[string]any
			require.NoError(t, yaml.Unmarshal(doc, &obj), file)
			u := &unstructured.Unstructured{Object: obj}
			if obj == nil || u.GetKind() != "SparkApplication" {
				continue
			}
			ex := example{file: file, name: u.GetName()}
			ex.restartPolicy, _, _ = unstructured.NestedString(obj, "spec", "restartPolicy", "type")
			ex.retainPolicy, _, _ = unstructured.NestedString(obj, "spec", "resourceRetainPolicy")
			volumes, _, _ := unstructured.NestedSlice(obj, "spec", "volumes")
			for _, v := range volumes {
				if claim, _, _ := unstructured.NestedString(v.(map[string]any), "persistentVolumeClaim", "claimName"); claim != "" {
					ex.claims = append(ex.claims, claim)
				}
			}
			out = append(out, ex)
		}
	}
	require.NotEmpty(t, out, "examples/*.yaml holds SparkApplications")
	return out
}

// Every example SparkApplication, applied with kubectl as a user would, is submitted, runs
// when the kubelet starts its driver, and completes when the driver exits 0; one whose
// restart policy is Always starts its next run instead, as in the Kubeflow operator.
func TestExamplesRunToCompletion(t *testing.T) {
	t.Parallel()
	for _, ex := range exampleApplications(t) {
		t.Run(filepath.Base(ex.file), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, hooksURL, appController)
			w.provideClaims(t, ex.claims)
			w.watchStates(t, ex.name)
			out, err := w.kubectl("apply", "-f", ex.file)
			require.NoError(t, err, out)

			a, pod := w.runAttempt(t, ex.name, "")
			assert.Equal(t, ex.name+"-driver", a.driverPod, "the driver Pod is <name>-driver")
			assert.Regexp(t, `^spark-[0-9a-f]{32}$`, a.appID, "status.sparkApplicationId")
			assert.Equal(t, int64(1), a.submissionAttempts, "status.submissionAttempts of the first attempt")
			assert.Equal(t, int64(1), a.executionAttempts, "status.executionAttempts of the first attempt")
			w.checkAttemptChildren(t, ex.name, a, pod)

			require.NoError(t, w.kubelet.Succeed(context.Background(), pod.Name))
			if ex.restartPolicy == "Always" {
				next, err := w.waitSubmitted(ex.name, a.submissionID)
				// restartPolicy Always starts the next run when the driver exits 0.
				w.check(t, err)
				assert.Equal(t, int64(2), next.executionAttempts, "status.executionAttempts counts the second run")
				assert.NotEqual(t, a.appID, next.appID, "each run has its own Spark application id")
				w.requireStates(t, ex.name, "SUBMITTED RUNNING PENDING_RERUN SUBMITTED")
				return
			}
			w.check(t, w.waitState(ex.name, "COMPLETED"))
			app := w.firstStatus(t, ex.name, "COMPLETED")
			summary := describeApp(app)
			assert.Equal(t, a, attemptOf(app), "the completed attempt is the one that ran; %s", summary)
			assert.NotEqual(t, "<none>", nestedValue(app, "status", "terminationTime"), "status.terminationTime; %s", summary)

			if ex.retainPolicy == "OnFailure" {
				// A completed application's resources are released.
				w.requirePod(t, ex.name, pod.Name, "deleted: resourceRetainPolicy OnFailure releases a completed driver", podGone)
			} else {
				kept, err := w.pod(pod.Name)
				require.NoError(t, err, "resourceRetainPolicy Always keeps the finished driver Pod for kubectl logs; %s", summary)
				assert.Equal(t, pod.UID, kept.UID, "the finished driver Pod is the one that ran")
				assert.Equal(t, corev1.PodSucceeded, kept.Status.Phase)
			}
			w.checkStatusSettled(t, ex.name)
			w.checkStatusWritesPerState(t, ex.name, "SUBMITTED", "RUNNING", "COMPLETED")
			w.checkChildrenWrittenOnce(t, ex.name)
		})
	}
}

// provideClaims creates the PersistentVolumeClaims an example's volumes name, as its header asks
// the user to, each bound to a PersistentVolume of its own: the scheduler places no Pod whose
// claim is missing or unbound. (The ConfigMaps and Secrets such an example also names matter only
// to a kubelet that mounts them, which the fake one does not.)
func (w *world) provideClaims(t *testing.T, claims []string) {
	t.Helper()
	ctx := context.Background()
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	noClass := ""
	for _, claim := range claims {
		volume := w.ns + "-" + claim
		_, err := w.core.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: volume},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      size,
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/" + volume}},
				ClaimRef:                      &corev1.ObjectReference{Namespace: w.ns, Name: claim},
			},
		}, metav1.CreateOptions{})
		require.NoError(t, err, "PersistentVolume %s", volume)
		_, err = w.core.CoreV1().PersistentVolumeClaims(w.ns).Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claim},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: size},
				StorageClassName: &noClass,
				VolumeName:       volume,
			},
		}, metav1.CreateOptions{})
		require.NoError(t, err, "PersistentVolumeClaim %s", claim)
		// The persistent-volume controller completes the binding.
		require.NoError(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
			pvc, err := w.core.CoreV1().PersistentVolumeClaims(w.ns).Get(ctx, claim, metav1.GetOptions{})
			return err == nil && pvc.Status.Phase == corev1.ClaimBound, nil
		}), "PersistentVolumeClaim %s bound", claim)
	}
}

// scenarioApp is a small SparkApplication for the scenarios; extra is appended to its spec
// (indented by two spaces).
func scenarioApp(name, argument, extra string) string {
	return fmt.Sprintf(`
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: %s
spec:
  type: Scala
  mode: cluster
  image: apache/spark:3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  sparkVersion: 3.5.3
  arguments:
    - %q
  driver:
    cores: 1
    memory: 512m
    serviceAccount: spark
  executor:
    instances: 2
    cores: 1
    memory: 512m
%s`, name, argument, extra)
}

// With restartPolicy OnFailure a driver that exits non-zero is retried with a new driver Pod
// for a new submission, counted in the attempts, until a run completes or the retries run out.
func TestOnFailureRestart(t *testing.T) {
	t.Parallel()
	t.Run("a retry completes", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hooksURL, appController)
		states := w.watchStates(t, "retried")
		out, err := w.apply(scenarioApp("retried", "100", `  restartPolicy:
    type: OnFailure
    onFailureRetries: 2
    onFailureRetryInterval: 1
`))
		require.NoError(t, err, out)

		first, pod1 := w.runAttempt(t, "retried", "")
		require.NoError(t, w.kubelet.Fail(context.Background(), pod1.Name, 1))

		second, pod2 := w.runAttempt(t, "retried", first.submissionID)
		app, err := w.app("retried")
		require.NoError(t, err)
		summary := describeApp(app)
		assert.NotEqual(t, pod1.UID, pod2.UID, "the retry runs in a new driver Pod; %s", summary)
		assert.Equal(t, pod1.Name, pod2.Name, "under the same name")
		assert.NotEqual(t, first.appID, second.appID, "with a new Spark application id")
		assert.Equal(t, int64(2), second.submissionAttempts, "status.submissionAttempts after one retry; %s", summary)
		assert.Equal(t, int64(2), second.executionAttempts, "status.executionAttempts after one retry; %s", summary)
		w.checkAttemptChildren(t, "retried", second, pod2)

		require.NoError(t, w.kubelet.Succeed(context.Background(), pod2.Name))
		w.check(t, w.waitState("retried", "COMPLETED"))
		app, err = w.app("retried")
		require.NoError(t, err)
		assert.Equal(t, second, attemptOf(app), "COMPLETED keeps the attempt counts; %s", describeApp(app))
		w.requireStates(t, "retried", "SUBMITTED RUNNING FAILING (PENDING_RERUN )?SUBMITTED RUNNING COMPLETED")
		assert.Contains(t, states.message("FAILING"), "exit code 1", "FAILING says why the attempt failed")
	})

	t.Run("retries run out", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hooksURL, appController)
		w.watchStates(t, "exhausted")
		out, err := w.apply(scenarioApp("exhausted", "100", `  restartPolicy:
    type: OnFailure
    onFailureRetries: 1
    onFailureRetryInterval: 1
`))
		require.NoError(t, err, out)

		first, pod1 := w.runAttempt(t, "exhausted", "")
		require.NoError(t, w.kubelet.Fail(context.Background(), pod1.Name, 1))
		second, pod2 := w.runAttempt(t, "exhausted", first.submissionID)
		require.NoError(t, w.kubelet.Fail(context.Background(), pod2.Name, 3))
		w.check(t, w.waitState("exhausted", "FAILED"))

		app, err := w.app("exhausted")
		require.NoError(t, err)
		summary := describeApp(app)
		assert.Equal(t, second, attemptOf(app), "FAILED after the one retry allowed; %s", summary)
		msg, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage")
		assert.Contains(t, msg, "exit code 3", "errorMessage says why the last attempt failed; %s", summary)
		w.requireStates(t, "exhausted", "SUBMITTED RUNNING FAILING (PENDING_RERUN )?SUBMITTED RUNNING FAILED")
		// No third attempt follows.
		time.Sleep(1500 * time.Millisecond)
		app, err = w.app("exhausted")
		require.NoError(t, err)
		assert.Equal(t, "FAILED", appState(app), "FAILED is final; %s", describeApp(app))
		assert.Equal(t, second.submissionID, attemptOf(app).submissionID, "no new submission after the retries ran out")
	})
}

// Editing the spec of a running application gives up the running attempt: its driver Pod is
// deleted and the new spec is submitted, with the attempt counts starting over.
func TestSpecChangeResubmits(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, appController)
	w.watchStates(t, "edited")
	out, err := w.apply(scenarioApp("edited", "100", ""))
	require.NoError(t, err, out)
	first, pod1 := w.runAttempt(t, "edited", "")
	require.Contains(t, pod1.Spec.Containers[0].Args, "100", "the driver runs with spec.arguments")
	cm1 := w.attemptConfigMap(t, first)

	out, err = w.apply(scenarioApp("edited", "200", ""))
	require.NoError(t, err, out)
	require.Contains(t, out, "configured")

	// The old driver goes; a new one with the new arguments replaces it.
	w.requirePod(t, "edited", pod1.Name, "the old driver (uid "+string(pod1.UID)+") deleted", func(p *corev1.Pod) bool {
		return p == nil || p.UID != pod1.UID
	})
	second, pod2 := w.runAttempt(t, "edited", first.submissionID)
	app, err := w.app("edited")
	require.NoError(t, err)
	summary := describeApp(app)
	assert.Equal(t, int64(2), app.GetGeneration(), "the edit is generation 2")
	assert.Contains(t, pod2.Spec.Containers[0].Args, "200", "the new driver runs the edited spec; args %v", pod2.Spec.Containers[0].Args)
	assert.NotContains(t, pod2.Spec.Containers[0].Args, "100")
	assert.NotEqual(t, first.appID, second.appID, "the new submission has a new Spark application id")
	assert.Equal(t, int64(1), second.submissionAttempts, "a spec change starts the attempt count over; %s", summary)
	assert.Equal(t, int64(1), second.executionAttempts, "a spec change starts the attempt count over; %s", summary)
	w.checkAttemptChildren(t, "edited", second, pod2)
	_, err = w.core.CoreV1().ConfigMaps(w.ns).Get(context.Background(), cm1, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the old attempt's ConfigMap %s is deleted: %v", cm1, err)
	w.requireStates(t, "edited", "SUBMITTED RUNNING INVALIDATING SUBMITTED RUNNING")
}

// attemptConfigMap returns the name of the ConfigMap of attempt a.
func (w *world) attemptConfigMap(t *testing.T, a attempt) string {
	t.Helper()
	cms, err := w.core.CoreV1().ConfigMaps(w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: labelSubmissionID + "=" + a.submissionID})
	require.NoError(t, err)
	require.Equal(t, 1, len(cms.Items), "one ConfigMap for submission %s", a.submissionID)
	return cms.Items[0].Name
}

// Deleting a running application with kubectl goes through the finalize hook: the driver Pod,
// its ConfigMap and Services are deleted, the finalizer is removed, the application is gone,
// and the executors go with their driver.
func TestDeleteWhileRunning(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, appController)
	out, err := w.apply(scenarioApp("deleted", "100", ""))
	require.NoError(t, err, out)
	a, pod := w.runAttempt(t, "deleted", "")
	_, err = w.kubelet.AddExecutors(context.Background(), pod.Name, 2)
	require.NoError(t, err)
	app, err := w.app("deleted")
	require.NoError(t, err)
	require.Contains(t, app.GetFinalizers(), "metacontroller.io/compositecontroller-"+appControllerName)

	out, err = w.kubectl("delete", "sparkapplications.sparkoperator.k8s.io", "deleted", "--wait=true", "--timeout="+waitTimeout.String())
	require.NoError(t, err, "kubectl delete waits for the finalizer: %s\n  %s", out, w.appSummary("deleted"))
	_, err = w.app("deleted")
	require.True(t, apierrors.IsNotFound(err), "the SparkApplication is gone: %v", err)

	ctx := context.Background()
	require.NoError(t, w.waitPodsGone("deleted", labels.SelectorFromSet(labels.Set{labelAppName: "deleted"})),
		"the driver Pod %s and the executors are deleted", a.driverPod)
	cms, err := w.core.CoreV1().ConfigMaps(w.ns).List(ctx, metav1.ListOptions{LabelSelector: labelAppName + "=deleted"})
	require.NoError(t, err)
	assert.Empty(t, cms.Items, "the ConfigMap is deleted")
	svcs, err := w.core.CoreV1().Services(w.ns).List(ctx, metav1.ListOptions{LabelSelector: labelAppName + "=deleted"})
	require.NoError(t, err)
	var names []string
	for _, s := range svcs.Items {
		names = append(names, s.Name)
	}
	assert.Empty(t, names, "the driver and UI Services are deleted")
	if ctl := w.standIn(appControllerName); ctl != nil {
		assert.Positive(t, ctl.Stats(w.ns, "deleted").Syncs)
	}
}

// The executors the driver creates appear in status.executorState, and the ExecutorsReady
// condition follows them.
func TestExecutorsAreTracked(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, appController)
	out, err := w.apply(scenarioApp("executors", "100", ""))
	require.NoError(t, err, out)
	_, pod := w.runAttempt(t, "executors", "")
	ctx := context.Background()
	execs, err := w.kubelet.AddExecutors(ctx, pod.Name, 2)
	require.NoError(t, err)

	want := map[string]any{execs[0]: "RUNNING", execs[1]: "RUNNING"}
	w.check(t, w.waitApp("executors", fmt.Sprintf("status.executorState %v and ExecutorsReady True", want), func(app *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedMap(app.Object, "status", "executorState")
		return equality.Semantic.DeepEqual(got, want) && conditionStatus(app, "ExecutorsReady") == "True"
	}))

	// An executor that fails is reported as such, and the application is below its minimum.
	require.NoError(t, w.kubelet.Fail(ctx, execs[1], 1))
	want = map[string]any{execs[0]: "RUNNING", execs[1]: "FAILED"}
	w.check(t, w.waitApp("executors", fmt.Sprintf("status.executorState %v and ExecutorsReady False", want), func(app *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedMap(app.Object, "status", "executorState")
		return equality.Semantic.DeepEqual(got, want) && conditionStatus(app, "ExecutorsReady") == "False"
	}))
	app, err := w.app("executors")
	require.NoError(t, err)
	assert.Equal(t, "RUNNING", appState(app), "a failed executor does not fail the application; %s", describeApp(app))
}

func conditionStatus(app *unstructured.Unstructured, typ string) string {
	conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// scheduleEvery is the schedule of the scheduled scenarios: the first run is due one interval
// after the hook first sees the object (internal/schedule counts "@every" from then), so the
// interval bounds how long the tests wait for a run.
const scheduleEvery = "@every 2s"

// scheduledApp is a ScheduledSparkApplication named name with the schedule scheduleEvery.
// Forbid keeps it to one active run, so that the tests know which runs to expect.
func scheduledApp(name string) string {
	return fmt.Sprintf(`
apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata:
  name: %s
  labels:
    team: e2e
spec:
  schedule: %q
  concurrencyPolicy: Forbid
  template:
    type: Scala
    mode: cluster
    image: apache/spark:3.5.3
    mainClass: org.apache.spark.examples.SparkPi
    mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
    sparkVersion: 3.5.3
    arguments:
      - "100"
    driver:
      cores: 1
      memory: 512m
      serviceAccount: spark
    executor:
      instances: 1
      cores: 1
      memory: 512m
`, name, scheduleEvery)
}

// A ScheduledSparkApplication creates SparkApplication runs named <name>-<unix seconds> from its
// template; with concurrencyPolicy Forbid the next run waits for the active one to finish.
// Here the test writes the runs' states itself, as the SparkApplication hooks would, so the
// schedule's hook is checked on its own; TestScheduledRunsRun has the two together.
func TestScheduledApplicationCreatesRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, scheduledController)
	created := time.Now().Truncate(time.Second)
	out, err := w.apply(scheduledApp("nightly"))
	require.NoError(t, err, out)

	first, err := w.waitRun("nightly", nil)
	require.NoError(t, err)
	// The run is created before the status that records it is written.
	require.NoError(t, w.waitScheduled("nightly", "status.lastRunName "+first.GetName(), func(ssa *unstructured.Unstructured) bool {
		return nestedValue(ssa, "status", "lastRunName") == first.GetName()
	}))
	ssa, err := w.scheduled("nightly")
	require.NoError(t, err)
	summary := describeScheduled(ssa)
	secs := runSeconds(t, "nightly", first.GetName())
	assert.GreaterOrEqual(t, secs, created.Unix(), "a run is scheduled after the schedule was created")
	assert.LessOrEqual(t, secs, time.Now().Unix()+1, "a run is not created before its time")
	scheduledAt := time.Unix(secs, 0).UTC().Format(time.RFC3339)
	assert.Equal(t, scheduledAt, first.GetAnnotations()[annotationScheduledTime], "the run's scheduled-time annotation")
	assert.Equal(t, "nightly", first.GetLabels()[labelScheduledAppName], "the run's scheduled-app-name label")
	assert.Equal(t, "e2e", first.GetLabels()["team"], "the run has the schedule's labels")
	ref := metav1.GetControllerOf(first)
	require.NotNil(t, ref, "the run has a controller owner reference")
	assert.Equal(t, ssa.GetUID(), ref.UID, "the run is controlled by the ScheduledSparkApplication")
	template, _, _ := unstructured.NestedMap(ssa.Object, "spec", "template")
	spec, _, _ := unstructured.NestedMap(first.Object, "spec")
	assert.True(t, equality.Semantic.DeepEqual(withoutEmptyMaps(template), withoutEmptyMaps(spec)),
		"the run's spec is the template\n  template: %v\n  run spec: %v", template, spec)
	assert.Equal(t, scheduledAt, nestedValue(ssa, "status", "lastRun"), "status.lastRun; %s", summary)
	assert.Equal(t, "Scheduled", nestedValue(ssa, "status", "scheduleState"), "status.scheduleState; %s", summary)

	// While the run is active, Forbid holds the next one back.
	w.setRunState(t, first.GetName(), "RUNNING")
	require.NoError(t, w.waitScheduled("nightly", "status.reason saying Forbid holds the due run back", func(ssa *unstructured.Unstructured) bool {
		reason, _, _ := unstructured.NestedString(ssa.Object, "status", "reason")
		return strings.Contains(reason, "Forbid") && strings.Contains(reason, first.GetName())
	}))
	runs, err := w.runs("nightly")
	require.NoError(t, err)
	assert.Equal(t, []string{first.GetName()}, runNames(runs), "no second run while the first is active under Forbid")

	// Once it completes, the held run starts, and the first is history.
	w.setRunState(t, first.GetName(), "COMPLETED")
	second, err := w.waitRun("nightly", first)
	require.NoError(t, err)
	assert.Greater(t, runSeconds(t, "nightly", second.GetName()), secs, "the next run is scheduled later")
	require.NoError(t, w.waitScheduled("nightly", "status.lastRunName "+second.GetName()+" and pastSuccessfulRunNames ["+first.GetName()+"]",
		func(ssa *unstructured.Unstructured) bool {
			past, _, _ := unstructured.NestedStringSlice(ssa.Object, "status", "pastSuccessfulRunNames")
			return nestedValue(ssa, "status", "lastRunName") == second.GetName() && len(past) == 1 && past[0] == first.GetName()
		}))
}

// The runs of a ScheduledSparkApplication are SparkApplications like any other: the
// SparkApplication hooks submit and track them, and the schedule sees them finish.
func TestScheduledRunsRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, scheduledController, appController)
	out, err := w.apply(scheduledApp("hourly"))
	require.NoError(t, err, out)
	run, err := w.waitRun("hourly", nil)
	require.NoError(t, err)

	// A run carries controller-uid=<uid of the schedule>, which Metacontroller puts on every
	// child of a generateSelector controller; copied onto the driver Pod, Metacontroller would
	// refuse the run's every answer ("don't match parent selector") and no run would start.
	a, err := w.waitSubmitted(run.GetName(), "")
	w.check(t, err)
	pod, err := w.waitDriver(run.GetName(), a)
	require.NoError(t, err)
	require.NoError(t, w.kubelet.Start(context.Background(), pod.Name))
	w.check(t, w.waitState(run.GetName(), "RUNNING"))
	w.checkAttemptChildren(t, run.GetName(), a, pod)
	require.NoError(t, w.kubelet.Succeed(context.Background(), pod.Name))
	w.check(t, w.waitState(run.GetName(), "COMPLETED"))
	require.NoError(t, w.waitScheduled("hourly", "pastSuccessfulRunNames ["+run.GetName()+"]", func(ssa *unstructured.Unstructured) bool {
		past, _, _ := unstructured.NestedStringSlice(ssa.Object, "status", "pastSuccessfulRunNames")
		return len(past) == 1 && past[0] == run.GetName()
	}))
}

// setRunState writes a run's status as the SparkApplication hooks would.
func (w *world) setRunState(t *testing.T, run, state string) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"applicationState":{"state":%q},"driverInfo":{}}}`, state)
	out, err := w.kubectl("patch", "sparkapplications.sparkoperator.k8s.io", run, "--subresource=status", "--type=merge", "-p", patch)
	require.NoError(t, err, out)
}

func runNames(runs []unstructured.Unstructured) []string {
	names := []string{}
	for _, r := range runs {
		names = append(names, r.GetName())
	}
	return names
}

// withoutEmptyMaps drops empty objects, recursively: an empty object and an absent one mean
// the same to the API.
func withoutEmptyMaps(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			sub = withoutEmptyMaps(sub)
			if len(sub) == 0 {
				continue
			}
			v = sub
		}
		out[k] = v
	}
	return out
}

func (w *world) scheduled(name string) (*unstructured.Unstructured, error) {
	return w.dyn.Resource(scheduledSparkApplications).Namespace(w.ns).Get(context.Background(), name, metav1.GetOptions{})
}

// runs lists the SparkApplications the schedule name created (by their label), oldest first.
func (w *world) runs(name string) ([]unstructured.Unstructured, error) {
	list, err := w.dyn.Resource(sparkApplications).Namespace(w.ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: labelScheduledAppName + "=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitRun waits for a run of the schedule name other than after, created after it, and returns it.
func (w *world) waitRun(name string, after *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var found *unstructured.Unstructured
	var seen []string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		runs, err := w.runs(name)
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for i := range runs {
			seen = append(seen, runs[i].GetName())
			if after == nil || (runs[i].GetName() != after.GetName() && runs[i].GetName() > after.GetName()) {
				found = &runs[i]
			}
		}
		return found != nil, nil
	})
	if err == nil {
		return found, nil
	}
	want := "a SparkApplication run"
	if after != nil {
		want = "a run after " + after.GetName()
	}
	status := "no such ScheduledSparkApplication"
	if ssa, err := w.scheduled(name); err == nil {
		status = describeScheduled(ssa)
	}
	return nil, fmt.Errorf("ScheduledSparkApplication %s/%s: want %s within %s; saw runs %v; %s%s%s",
		w.ns, name, want, waitTimeout, seen, status, w.events(name), w.controllerDiagnosis(name))
}

// waitScheduled waits until pred accepts the ScheduledSparkApplication.
func (w *world) waitScheduled(name, want string, pred func(*unstructured.Unstructured) bool) error {
	get := func(context.Context) (*unstructured.Unstructured, error) { return w.scheduled(name) }
	_, err := harness.WaitFor(context.Background(), waitTimeout, want, get, pred, describeScheduled)
	if err == nil {
		return nil
	}
	return fmt.Errorf("ScheduledSparkApplication %s/%s: %w%s%s", w.ns, name, err, w.events(name), w.controllerDiagnosis(name))
}

func describeScheduled(ssa *unstructured.Unstructured) string {
	var b strings.Builder
	fmt.Fprintf(&b, "generation %d", ssa.GetGeneration())
	for _, f := range []string{"observedGeneration", "scheduleState", "reason", "lastRun", "lastRunName", "nextRun",
		"pastSuccessfulRunNames", "pastFailedRunNames"} {
		if v := nestedValue(ssa, "status", f); v != "<none>" {
			fmt.Fprintf(&b, ", %s %v", f, v)
		}
	}
	return b.String()
}

// runSeconds is the unix time in a run's name, <schedule>-<unix seconds>.
func runSeconds(t *testing.T, schedule, run string) int64 {
	t.Helper()
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(schedule) + `-([0-9]+)$`).FindStringSubmatch(run)
	require.NotNil(t, m, "a run is named %s-<unix seconds>, not %s", schedule, run)
	secs, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	return secs
}
