package sparkctl

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func TestList(t *testing.T) {
	running := sparkApp("default", "pi", v1beta2.ApplicationStateRunning)
	running.Status.LastSubmissionAttemptTime = metav1.NewTime(now.Add(-time.Hour))
	failed := sparkApp("default", "etl", v1beta2.ApplicationStateFailed)
	failed.Status.ExecutionAttempts, failed.Status.SubmissionAttempts = 3, 4
	other := sparkApp("team-b", "report", v1beta2.ApplicationStateCompleted)
	ssa := scheduled("default", "nightly")
	ssa.Status.ScheduleState = v1beta2.ScheduleStateScheduled
	ssa.Status.LastRunName = "nightly-1764039600"
	sc := &v1alpha1.SparkConnect{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindSparkConnect},
		ObjectMeta: metav1.ObjectMeta{Name: "shell", Namespace: "default", CreationTimestamp: metav1.NewTime(now.Add(-5 * time.Minute))},
		Status:     v1alpha1.SparkConnectStatus{State: v1alpha1.StateReady, Server: v1alpha1.SparkConnectServerStatus{PodName: "shell-server"}},
	}
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantLines  []string // each a substring of one stdout line, in order
		wantStderr string
	}{
		{"sparkapps in the namespace, sorted", []string{"list"}, 0, []string{
			"NAME   STATUS    ATTEMPTS   SUBMISSIONS   START                  FINISH   AGE",
			"etl    FAILED    3          4             <none>                 <none>   90m",
			"pi     RUNNING   1          1             2026-11-24T11:00:00Z   <none>   90m",
		}, ""},
		{"every namespace", []string{"list", "-A"}, 0, []string{"NAMESPACE", "default     etl", "default     pi", "team-b      report"}, ""},
		{"other namespace", []string{"list", "-n", "team-b"}, 0, []string{"NAME", "report   COMPLETED"}, ""},
		{"empty namespace", []string{"list", "-n", "nobody"}, 0, nil, "No sparkapplications found in namespace nobody."},
		{"scheduled", []string{"list", "scheduled"}, 0, []string{"NAME      SCHEDULE    TIMEZONE", "nightly   0 3 * * *   <none>     false     Scheduled"}, ""},
		{"connect", []string{"list", "sparkconnect"}, 0, []string{"NAME    STATUS   PODNAME        AGE", "shell   Ready    shell-server   5m"}, ""},
		{"unknown kind", []string{"list", "pods"}, ExitUsage, nil, `error: unknown kind "pods"`},
		{"bad output", []string{"list", "-o", "wide"}, ExitUsage, nil, `error: --output "wide": want json or yaml`},
		{"unknown flag", []string{"list", "--watch"}, ExitUsage, nil, "error: unknown flag: --watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, running, failed, other, ssa, sc)
			out, errOut, code := f.run(tc.args...)
			require.Equal(t, tc.wantCode, code, "stderr: %s", errOut)
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			for i, want := range tc.wantLines {
				require.Less(t, i, len(lines), out)
				assert.Contains(t, lines[i], want)
			}
			assert.Contains(t, errOut, tc.wantStderr)
			if tc.wantCode != 0 {
				assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			}
		})
	}
}

func TestListStructured(t *testing.T) {
	f := newFixture(t, sparkApp("default", "pi", v1beta2.ApplicationStateRunning))
	for _, format := range []string{"json", "yaml"} {
		out, errOut, code := f.run("list", "-o", format)
		require.Zero(t, code, errOut)
		var list struct {
			Kind  string
			Items []v1beta2.SparkApplication
		}
		require.NoError(t, yaml.Unmarshal([]byte(out), &list), out)
		assert.Equal(t, "List", list.Kind)
		require.Len(t, list.Items, 1)
		assert.Equal(t, v1beta2.ApplicationStateRunning, list.Items[0].Status.AppState.State)
	}
}

func TestStatus(t *testing.T) {
	running := sparkApp("default", "pi", v1beta2.ApplicationStateRunning)
	running.Status.SubmissionID = "0b1c"
	running.Status.SparkApplicationID = "spark-0123"
	running.Status.DriverInfo = v1beta2.DriverInfo{PodName: "pi-driver", WebUIServiceName: "pi-ui-svc", WebUIPort: 4040,
		WebUIHTTPRouteName: "pi-ui-route", WebUIHTTPRouteAddress: "http://spark.example.com/default/pi"}
	running.Status.ExecutorState = map[string]v1beta2.ExecutorState{"pi-exec-1": "RUNNING", "pi-exec-2": "RUNNING", "pi-exec-3": "FAILED"}
	running.Status.Conditions = []metav1.Condition{{Type: "DriverReady", Status: metav1.ConditionTrue, Reason: "PodReady", Message: "the driver is ready"}}
	submitted := sparkApp("default", "stuck", v1beta2.ApplicationStateSubmitted)
	fresh := sparkApp("default", "fresh", v1beta2.ApplicationStateNew)
	failed := sparkApp("default", "broken", v1beta2.ApplicationStateFailed)
	failed.Status.AppState.ErrorMessage = "java.lang.ClassNotFoundException: org.example.Missing"
	done := sparkApp("default", "done", v1beta2.ApplicationStateCompleted)
	done.Status.HistoryURL = "http://spark-history.example.com/history/spark-0456/jobs/"
	ssa := scheduled("default", "nightly")
	ssa.Status = v1beta2.ScheduledSparkApplicationStatus{ScheduleState: v1beta2.ScheduleStateScheduled, LastRunName: "nightly-1", PastSuccessfulRunNames: []string{"nightly-1"}, NextRun: metav1.NewTime(now.Add(time.Hour))}
	sc := &v1alpha1.SparkConnect{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindSparkConnect},
		ObjectMeta: metav1.ObjectMeta{Name: "shell", Namespace: "default"},
		Status: v1alpha1.SparkConnectStatus{State: v1alpha1.StateReady, Executors: map[string]int{"running": 2},
			Server: v1alpha1.SparkConnectServerStatus{PodName: "shell-server", PodIP: "10.0.0.7", ServiceName: "shell-svc",
				GRPCRouteName: "shell-grpc-route", WebUIHTTPRouteName: "shell-ui-route", WebUIHTTPRouteAddress: "/default/shell"}},
	}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"running", []string{"status", "pi"}, 0, []string{
			"State:         RUNNING", "Attempts:      1 run(s), 1 submission(s)", "Spark app ID:  spark-0123",
			"Driver:        pi-driver (Running, spark-kubernetes-driver: ready)", "service pi-ui-svc port 4040 (kubectl spark forward pi)",
			"UI route:      http://spark.example.com/default/pi (HTTPRoute pi-ui-route)",
			"Executors:     1 FAILED, 2 RUNNING", "Waiting for:   the driver to finish", "DriverReady   True", "the driver is ready",
		}},
		{"driver cannot start", []string{"status", "stuck"}, 0, []string{
			"Driver:       stuck-driver (Pending, spark-kubernetes-driver: ImagePullBackOff)",
			"Waiting for:  container spark-kubernetes-driver to start: ImagePullBackOff no such image",
		}},
		{"not yet seen by the operator", []string{"status", "fresh"}, 0, []string{"State:        NEW", "fresh-driver (no such pod)", "the operator to submit it"}},
		{"failed says why", []string{"status", "broken"}, 0, []string{"State:      FAILED", "Error:      java.lang.ClassNotFoundException: org.example.Missing"}},
		{"history", []string{"status", "done"}, 0, []string{"State:      COMPLETED", "History:    http://spark-history.example.com/history/spark-0456/jobs/ (kubectl spark ui done)"}},
		{"scheduled", []string{"status", "scheduledsparkapp/nightly"}, 0, []string{"Schedule:        0 3 * * *", "Last run:        nightly-1", "Succeeded runs:  nightly-1"}},
		{"spark connect", []string{"status", "sparkconnect/shell"}, 0, []string{"State:       Ready", "Server:      shell-server 10.0.0.7", "Service:     shell-svc (port 15002)", "Executors:   2 running",
			"gRPC route:  shell-grpc-route", "UI route:    /default/shell on the Gateway's address (HTTPRoute shell-ui-route)"}},
		{"unknown application", []string{"status", "nope"}, ExitError, []string{`error: SparkApplication "nope" not found in namespace "default"`}},
		{"unknown kind", []string{"status", "job/x"}, ExitUsage, []string{`unknown kind "job"`}},
		{"no name", []string{"status"}, ExitUsage, []string{"accepts 1 arg(s), received 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, running, submitted, fresh, failed, done, ssa, sc,
				driverPod("default", "pi-driver", corev1.PodRunning), driverPod("default", "stuck-driver", corev1.PodPending))
			out, errOut, code := f.run(tc.args...)
			require.Equal(t, tc.wantCode, code, "stdout: %s\nstderr: %s", out, errOut)
			for _, w := range tc.want {
				assert.Contains(t, out+errOut, w)
			}
		})
	}
}

func TestStatusJSONIsTheObject(t *testing.T) {
	f := newFixture(t, sparkApp("default", "pi", v1beta2.ApplicationStateCompleted))
	out, _, code := f.run("status", "pi", "-o", "json")
	require.Zero(t, code)
	var app v1beta2.SparkApplication
	require.NoError(t, json.Unmarshal([]byte(out), &app))
	assert.Equal(t, v1beta2.ApplicationStateCompleted, app.Status.AppState.State)
}

func TestLog(t *testing.T) {
	app := sparkApp("default", "pi", v1beta2.ApplicationStateRunning)
	app.Status.SparkApplicationID = "spark-cur"
	pending := sparkApp("default", "waiting", v1beta2.ApplicationStateSubmitted)
	noPod := sparkApp("default", "nopod", v1beta2.ApplicationStateSubmitted)
	exec := func(name, appID, id string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{
				"spark-role": "executor", "sparkoperator.k8s.io/app-name": "pi", "spark-app-selector": appID, "spark-exec-id": id,
			}},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "spark-kubernetes-executor"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	sc := &v1alpha1.SparkConnect{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindSparkConnect},
		ObjectMeta: metav1.ObjectMeta{Name: "shell", Namespace: "default"},
		Status:     v1alpha1.SparkConnectStatus{Server: v1alpha1.SparkConnectServerStatus{PodName: "shell-server"}},
	}
	for _, tc := range []struct {
		name          string
		args          []string
		wantCode      int
		wantPod       string
		wantContainer string
		wantPrevious  bool
		wantErr       string
	}{
		{"driver", []string{"log", "pi"}, 0, "pi-driver", "spark-kubernetes-driver", false, ""},
		{"previous run of the driver container", []string{"log", "pi", "--previous"}, 0, "pi-driver", "spark-kubernetes-driver", true, ""},
		{"executor of the current attempt", []string{"log", "pi", "--executor", "1"}, 0, "pi-exec-1", "spark-kubernetes-executor", false, ""},
		{"no such executor", []string{"log", "pi", "--executor", "9"}, ExitError, "", "", false, `SparkApplication "pi" has no executor 9 in its current attempt`},
		{"spark connect server", []string{"log", "sparkconnect/shell"}, 0, "shell-server", "spark-kubernetes-driver", false, ""},
		{"no driver yet", []string{"log", "nopod"}, ExitError, "", "", false, `SparkApplication "nopod" has no driver pod yet (state SUBMITTED)`},
		{"driver not started", []string{"log", "waiting"}, ExitError, "", "", false, "pod waiting-driver has not started yet (Pending, spark-kubernetes-driver: ImagePullBackOff)"},
		{"unknown app", []string{"log", "nope"}, ExitError, "", "", false, `SparkApplication "nope" not found`},
		{"scheduled apps have no log", []string{"log", "scheduled/x"}, ExitUsage, "", "", false, "this command works on SparkApplication and SparkConnect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, app, pending, noPod, sc, driverPod("default", "pi-driver", corev1.PodRunning),
				driverPod("default", "waiting-driver", corev1.PodPending), driverPod("default", "shell-server", corev1.PodRunning),
				exec("pi-exec-1-old", "spark-old", "1"), exec("pi-exec-1", "spark-cur", "1"))
			var got *corev1.PodLogOptions
			var gotPod string
			f.logs = func(_ context.Context, _, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
				got, gotPod = opts, pod
				return io.NopCloser(strings.NewReader("Pi is roughly 3.14\n")), nil
			}
			out, errOut, code := f.run(tc.args...)
			require.Equal(t, tc.wantCode, code, errOut)
			if tc.wantErr != "" {
				assert.Contains(t, errOut, tc.wantErr)
				return
			}
			assert.Equal(t, "Pi is roughly 3.14\n", out)
			require.NotNil(t, got)
			assert.Equal(t, tc.wantPod, gotPod)
			assert.Equal(t, tc.wantContainer, got.Container)
			assert.Equal(t, tc.wantPrevious, got.Previous)
		})
	}
}

func TestLogTargetPicksTheCurrentAttemptsExecutor(t *testing.T) {
	app := sparkApp("default", "pi", v1beta2.ApplicationStateRunning)
	app.Status.SparkApplicationID = "spark-cur"
	mk := func(name, appID string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{
			"spark-role": "executor", "sparkoperator.k8s.io/app-name": "pi", "spark-app-selector": appID, "spark-exec-id": "1",
		}}}
	}
	f := newFixture(t, app, mk("old-exec-1", "spark-old"), mk("cur-exec-1", "spark-cur"))
	c := &cli{env: &Env{}}
	pod, container, err := c.logTarget(t.Context(), &Clients{Dynamic: f.dyn, Logs: f.logs, Namespace: "default"}, kindSparkApp, "pi", "1")
	require.NoError(t, err)
	assert.Equal(t, "cur-exec-1", pod.Name)
	assert.Equal(t, "spark-kubernetes-executor", container)
}

func TestEvent(t *testing.T) {
	app := sparkApp("default", "pi", v1beta2.ApplicationStateRunning)
	ev := func(name, kind, obj, reason string, at time.Time) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: obj, Namespace: "default"},
			Reason:         reason, Type: "Normal", Message: reason + " happened", LastTimestamp: metav1.NewTime(at),
		}
	}
	exec := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pi-exec-1", Namespace: "default", Labels: map[string]string{"sparkoperator.k8s.io/app-name": "pi"}}}
	f := newFixture(t, app, exec,
		ev("e1", "Pod", "pi-driver", "Started", now.Add(-2*time.Minute)),
		ev("e2", "SparkApplication", "pi", "SparkApplicationSubmitted", now.Add(-3*time.Minute)),
		ev("e3", "Pod", "pi-exec-1", "Pulled", now.Add(-time.Minute)),
		ev("e4", "Pod", "other-driver", "Started", now),
		ev("e5", "SparkApplication", "other", "SparkApplicationSubmitted", now))
	out, errOut, code := f.run("event", "pi")
	require.Zero(t, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.Contains(t, lines[0], "LAST SEEN")
	assert.Contains(t, lines[1], "sparkapplication/pi")
	assert.Contains(t, lines[2], "pod/pi-driver")
	assert.Contains(t, lines[3], "pod/pi-exec-1")

	_, errOut, code = f.run("event", "nope")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, `SparkApplication "nope" not found`)
}

func TestDelete(t *testing.T) {
	f := newFixture(t, sparkApp("default", "pi", v1beta2.ApplicationStateRunning), scheduled("default", "nightly"))
	out, errOut, code := f.run("delete", "pi", "scheduled/nightly", "--wait")
	require.Zero(t, code, errOut)
	assert.Equal(t, "sparkapplication.sparkoperator.k8s.io \"pi\" deleted\nscheduledsparkapplication.sparkoperator.k8s.io \"nightly\" deleted\n", out)
	_, errOut, code = f.run("delete", "pi")
	assert.Equal(t, ExitError, code)
	assert.Equal(t, "error: SparkApplication \"pi\" not found in namespace \"default\"\n", errOut)
}

func TestParsePorts(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		local, remote int
		bad           bool
	}{
		{"4040", 4040, 4040, false},
		{"8080:4040", 8080, 4040, false},
		{"0:4040", 0, 4040, false},
		{"0", 0, 0, true},
		{"ui", 0, 0, true},
		{"1:70000", 0, 0, true},
		{":4040", 0, 0, true},
	} {
		local, remote, err := parsePorts(tc.spec)
		if tc.bad {
			assert.Error(t, err, tc.spec)
			continue
		}
		require.NoError(t, err, tc.spec)
		assert.Equal(t, [2]int{tc.local, tc.remote}, [2]int{local, remote}, tc.spec)
	}
}

func TestForwardRefusesWhatItCannotReach(t *testing.T) {
	f := newFixture(t, sparkApp("default", "waiting", v1beta2.ApplicationStateSubmitted), sparkApp("default", "nopod", v1beta2.ApplicationStateSubmitted),
		driverPod("default", "waiting-driver", corev1.PodPending))
	for args, want := range map[string]string{
		"forward waiting":          "pod waiting-driver is not running (Pending, spark-kubernetes-driver: ImagePullBackOff): nothing to forward to",
		"forward nopod":            `SparkApplication "nopod" has no driver pod yet (state SUBMITTED)`,
		"forward waiting 80:x":     `port "x" in "80:x"`,
		"forward scheduled/x 4040": "this command works on SparkApplication and SparkConnect",
	} {
		_, errOut, code := f.run(strings.Fields(args)...)
		assert.NotZero(t, code, args)
		assert.Contains(t, errOut, want, args)
	}
}
