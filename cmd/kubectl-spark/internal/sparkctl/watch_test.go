package sparkctl

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// recorded is the directory of answers of a real Spark 3.5.3 driver running a job of three
// stages, read at moments of the run: testdata/spark-rest/groupby/SNAPSHOT/{jobs,stages,
// allexecutors}.json (README.md there says how they were recorded).
const recorded = "testdata/spark-rest/groupby"

// recordedSnapshots are the recorded moments, in the order of the run.
var recordedSnapshots = []string{"first-stage", "shuffle-map", "reduce"}

// recordedAppID is the Spark application ID of the recorded run.
const recordedAppID = "app-20261128171354-0000"

// replay answers service proxy requests with a recorded snapshot; "" is a driver whose UI does
// not answer yet, as the API server says while the UI Service has no ready endpoint.
func replay(t *testing.T, snapshot func() string, requests *[]string) ProxyFunc {
	return func(_ context.Context, svc serviceRef, p string, query url.Values) ([]byte, error) {
		if requests != nil {
			req := serviceProxyPath(svc, p)
			if len(query) > 0 {
				req += "?" + query.Encode()
			}
			*requests = append(*requests, req)
		}
		dir := snapshot()
		switch dir {
		case "":
			return nil, apierrors.NewServiceUnavailable(`no endpoints available for service "groupby-ui-svc"`)
		case "missing":
			// Spark's own 404, passed on by the proxy.
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "proxy")
		}
		data, err := os.ReadFile(filepath.Join(recorded, dir, path.Base(p)+".json"))
		require.NoError(t, err)
		return data, nil
	}
}

func TestSummarizeRecordedRuns(t *testing.T) {
	for _, snapshot := range recordedSnapshots {
		t.Run(snapshot, func(t *testing.T) {
			src := progressSource{kind: "driver", svc: serviceRef{"default", "groupby-ui-svc", "4040"}, api: "/api/v1"}
			p, err := fetchProgress(context.Background(), replay(t, func() string { return snapshot }, nil), src, recordedAppID)
			require.NoError(t, err)
			text := strings.Join(alignRows("", progressRows(p)), "\n") + "\n" + progressLine(p) + "\n"
			golden(t, filepath.Join("testdata", "progress", snapshot+".txt"), text)
		})
	}
}

// TestWatch follows an application from submission to its end, as the operator and a real
// driver would move it: no application ID yet, a UI that does not answer yet, the recorded
// snapshots of a real run, and the end. Each mode's output is a golden file.
func TestWatch(t *testing.T) {
	const inClusterHistory = "http://sparkhooks-history.sparkhooks.svc:18080/history/" + recordedAppID + "/jobs/"
	type step struct {
		state    v1beta2.ApplicationStateType
		snapshot string // the REST API's answers at this step
	}
	running := []step{
		{v1beta2.ApplicationStateSubmitted, ""},
		{v1beta2.ApplicationStateRunning, ""},
		{v1beta2.ApplicationStateRunning, "first-stage"},
		{v1beta2.ApplicationStateRunning, "first-stage"},
		{v1beta2.ApplicationStateRunning, "shuffle-map"},
		{v1beta2.ApplicationStateRunning, "reduce"},
	}
	// The History Server's answer at the end: the driver's last recorded one (the recorder saw
	// no later answer before the driver stopped), the same classes and paths.
	const final = "reduce"
	for _, tc := range []struct {
		name     string
		args     []string
		tty      bool
		steps    []step
		history  string
		errMsg   string
		wantCode int
	}{
		{name: "plain", args: []string{"watch", "groupby"}, steps: append(running, step{v1beta2.ApplicationStateCompleted, final}), history: inClusterHistory},
		{name: "terminal", args: []string{"watch", "groupby"}, tty: true, steps: append(running, step{v1beta2.ApplicationStateCompleted, final}), history: inClusterHistory},
		{name: "json", args: []string{"watch", "groupby", "-o", "json"}, tty: true, steps: append(running, step{v1beta2.ApplicationStateCompleted, final}), history: inClusterHistory},
		{name: "failed, not on the History Server yet", args: []string{"watch", "groupby"},
			steps: append(running, step{v1beta2.ApplicationStateFailed, "missing"}), history: inClusterHistory,
			errMsg: "driver container failed with ExitCode: 1", wantCode: ExitAppFailed},
		{name: "History Server outside the cluster", args: []string{"watch", "groupby"},
			steps: append(running, step{v1beta2.ApplicationStateCompleted, final}), history: "https://spark-history.example.com/history/" + recordedAppID + "/jobs/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := sparkApp("default", "groupby", v1beta2.ApplicationStateSubmitted)
			app.Status.LastSubmissionAttemptTime = metav1.NewTime(now.Add(-42 * time.Second))
			f := newFixture(t, app)
			f.tty, f.width = tc.tty, 100
			reads := 0
			current := func() step { return tc.steps[min(reads, len(tc.steps))-1] }
			f.dyn.PrependReactor("get", "sparkapplications", func(clienttesting.Action) (bool, runtime.Object, error) {
				obj, err := f.dyn.Tracker().Get(kindSparkApp.GVR, "default", "groupby")
				require.NoError(t, err)
				reads++
				u := obj.(*unstructured.Unstructured).DeepCopy()
				s := current()
				_ = unstructured.SetNestedField(u.Object, string(s.state), "status", "applicationState", "state")
				if s.state != v1beta2.ApplicationStateSubmitted {
					_ = unstructured.SetNestedField(u.Object, recordedAppID, "status", "sparkApplicationId")
					_ = unstructured.SetNestedField(u.Object, "groupby-ui-svc", "status", "driverInfo", "webUIServiceName")
					_ = unstructured.SetNestedField(u.Object, int64(4040), "status", "driverInfo", "webUIPort")
				}
				if terminal(s.state) {
					_ = unstructured.SetNestedField(u.Object, tc.history, "status", "historyURL")
					_ = unstructured.SetNestedField(u.Object, now.Add(-2*time.Second).Format(time.RFC3339), "status", "terminationTime")
					_ = unstructured.SetNestedField(u.Object, tc.errMsg, "status", "applicationState", "errorMessage")
				}
				return true, u, nil
			})
			var requests []string
			f.proxy = replay(t, func() string { return current().snapshot }, &requests)
			out, errOut, code := f.run(tc.args...)
			require.Equal(t, tc.wantCode, code, "stdout: %s\nstderr: %s", out, errOut)
			golden(t, filepath.Join("testdata", "watch", strings.ReplaceAll(tc.name, " ", "-")+".txt"), out)
			assert.Contains(t, requests, "/api/v1/namespaces/default/services/groupby-ui-svc:4040/proxy/api/v1/applications/"+recordedAppID+"/stages?status=active")
			if strings.Contains(tc.history, ".svc:") {
				assert.Contains(t, requests, "/api/v1/namespaces/sparkhooks/services/sparkhooks-history:18080/proxy/api/v1/applications/"+recordedAppID+"/jobs")
			}
		})
	}
}

// TestWatchWhileTheDriverUIStarts: what the API server and a starting driver answer before
// Spark's REST API is up (no ready endpoint, a refused port, the UI's start-up page, a REST API
// that does not know the application yet) is one calm line, not the proxy's errors; once the
// UI has answered, its silence says the driver stopped.
func TestWatchWhileTheDriverUIStarts(t *testing.T) {
	unavailable := func(msg string) func() ([]byte, error) {
		return func() ([]byte, error) { return nil, apierrors.NewServiceUnavailable(msg) }
	}
	answers := []func() ([]byte, error){
		unavailable(`no endpoints available for service "groupby-ui-svc"`),
		unavailable("error trying to reach service: dial tcp 10.240.162.6:4040: connect: connection refused"),
		func() ([]byte, error) {
			return []byte("Spark is starting up. Please wait a while until it's ready."), nil
		},
		func() ([]byte, error) {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "proxy")
		},
		nil, // the recorded first stage
		unavailable(`no endpoints available for service "groupby-ui-svc"`),
	}
	app := sparkApp("default", "groupby", v1beta2.ApplicationStateRunning)
	app.Status.SparkApplicationID = recordedAppID
	app.Status.DriverInfo = v1beta2.DriverInfo{PodName: "groupby-driver", WebUIServiceName: "groupby-ui-svc", WebUIPort: 4040}
	f := newFixture(t, app)
	reads := 0
	f.dyn.PrependReactor("get", "sparkapplications", func(clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := f.dyn.Tracker().Get(kindSparkApp.GVR, "default", "groupby")
		require.NoError(t, err)
		reads++
		u := obj.(*unstructured.Unstructured).DeepCopy()
		if reads > len(answers) {
			_ = unstructured.SetNestedField(u.Object, string(v1beta2.ApplicationStateCompleted), "status", "applicationState", "state")
			_ = unstructured.SetNestedField(u.Object, "https://spark-history.example.com/history/"+recordedAppID+"/jobs/", "status", "historyURL")
		}
		return true, u, nil
	})
	f.proxy = func(_ context.Context, _ serviceRef, p string, _ url.Values) ([]byte, error) {
		if answer := answers[min(reads, len(answers))-1]; answer != nil {
			return answer()
		}
		data, err := os.ReadFile(filepath.Join(recorded, "first-stage", path.Base(p)+".json"))
		require.NoError(t, err)
		return data, nil
	}
	out, errOut, code := f.run("watch", "groupby")
	require.Zero(t, code, errOut)
	golden(t, filepath.Join("testdata", "watch", "driver-ui-starting.txt"), out)
	assert.Equal(t, 1, strings.Count(out, "(waiting for the driver's UI…)"), "one line however the UI's silence changes:\n%s", out)
	for _, raw := range []string{"no endpoints", "dial tcp", "Spark is starting up", "not Spark's REST API", "could not find", "through service"} {
		assert.NotContains(t, out, raw)
	}
	assert.Contains(t, out, "as last seen: the driver's UI no longer answers")
}

// TestStatusShowsProgress: status adds the driver's progress to a running application, and says
// why there is none when the driver's UI does not answer.
func TestStatusShowsProgress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		snapshot string
		want     []string
	}{
		{"from the driver", "reduce", []string{"Progress (from the driver's UI):\n  Jobs:", "  Tasks:", "  Executors:", "  Read:"}},
		{"the UI does not answer yet", "", []string{"Progress:      waiting for the driver's UI…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := sparkApp("default", "groupby", v1beta2.ApplicationStateRunning)
			app.Status.SparkApplicationID = recordedAppID
			app.Status.DriverInfo = v1beta2.DriverInfo{PodName: "groupby-driver", WebUIServiceName: "groupby-ui-svc", WebUIPort: 4040}
			f := newFixture(t, app)
			f.proxy = replay(t, func() string { return tc.snapshot }, nil)
			out, errOut, code := f.run("status", "groupby")
			require.Zero(t, code, errOut)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
		})
	}
}

// golden compares got with the file, or rewrites it under -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "run go test ./internal/sparkctl -update to write it")
	assert.Equal(t, string(want), got)
}

// TestCreateFollowOnATerminal: create --follow on a terminal prints the driver's log and the
// state changes above the progress block, which it redraws in place, and ends with the final
// lines; the log's text is all there, whole lines at a time.
func TestCreateFollowOnATerminal(t *testing.T) {
	dir := t.TempDir()
	pi := writeFile(t, dir, "pi.yaml", fmt.Sprintf(piYAML, "local:///x.jar", "local:///y.jar"))
	f := newFixture(t)
	f.tty, f.width = true, 100
	steps := []v1beta2.ApplicationStateType{v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateCompleted}
	snapshots := []string{"", "first-stage", "reduce", "reduce"}
	reads := 0
	// The driver's log arrives once the application has ended, so that where it lands
	// between the redraws does not depend on the goroutines' timing.
	ended := make(chan struct{})
	f.dyn.PrependReactor("get", "sparkapplications", func(clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := f.dyn.Tracker().Get(kindSparkApp.GVR, "default", "spark-pi")
		require.NoError(t, err)
		u := obj.(*unstructured.Unstructured).DeepCopy()
		step := steps[min(reads, len(steps)-1)]
		reads++
		_ = unstructured.SetNestedField(u.Object, string(step), "status", "applicationState", "state")
		_ = unstructured.SetNestedField(u.Object, recordedAppID, "status", "sparkApplicationId")
		_ = unstructured.SetNestedField(u.Object, "spark-pi-ui-svc", "status", "driverInfo", "webUIServiceName")
		_ = unstructured.SetNestedField(u.Object, int64(4040), "status", "driverInfo", "webUIPort")
		if terminal(step) {
			close(ended)
			_ = unstructured.SetNestedField(u.Object, "http://sparkhooks-history.sparkhooks.svc:18080/history/"+recordedAppID+"/jobs/", "status", "historyURL")
		}
		if step == v1beta2.ApplicationStateRunning {
			// The driver runs from the first RUNNING read on; adding it again fails harmlessly.
			_ = f.dyn.Tracker().Add(unstructuredOf(t, driverPod("default", "spark-pi-driver", corev1.PodRunning)))
		}
		return true, u, nil
	})
	f.logs = func(context.Context, string, string, *corev1.PodLogOptions) (io.ReadCloser, error) {
		return io.NopCloser(&afterReader{wait: ended, r: strings.NewReader("driver says hello\nand goodbye")}), nil
	}
	f.proxy = replay(t, func() string { return snapshots[min(reads, len(snapshots))-1] }, nil)
	out, errOut, code := f.run("create", "-f", pi, "--follow")
	require.Zero(t, code, "stdout: %s\nstderr: %s", out, errOut)
	golden(t, filepath.Join("testdata", "watch", "follow-terminal.txt"), out)
	assert.Empty(t, errOut)
}

// afterReader reads r once wait is closed.
type afterReader struct {
	wait <-chan struct{}
	r    io.Reader
}

func (a *afterReader) Read(p []byte) (int, error) {
	<-a.wait
	return a.r.Read(p)
}
