package apacheapp

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/apachesparkapplication/")

const goldenDir = "../../testdata/apachesparkapplication"

type goldenCase struct {
	name       string
	finalizing bool
	// want is a state the answer's history of the current attempt must end with or hold.
	want  string
	setup func(w *world)
}

// Steps of a world, composed by the cases.
func submitted(w *world) { w.settle() }
func started(w *world)   { submitted(w); w.advance(5 * time.Second); w.driverRunning(false); w.settle() }
func running(w *world)   { started(w); w.advance(5 * time.Second); w.driverRunning(true); w.settle() }
func exited(code int32) func(*world) {
	return func(w *world) { running(w); w.advance(time.Minute); w.driverExited(code, "") }
}
func then(steps ...func(*world)) func(*world) {
	return func(w *world) {
		for _, s := range steps {
			s(w)
		}
	}
}
func settleAfter(d time.Duration) func(*world) {
	return func(w *world) { w.settle(); w.advance(d) }
}
func instances(init, minimum, maximum int64) func(*world) {
	return func(w *world) {
		w.tolerations().InstanceConfig = &sparkv1.ExecutorInstanceConfig{InitExecutors: init, MinExecutors: minimum, MaxExecutors: maximum}
		delete(w.app.Spec.SparkConf, "spark.dynamicAllocation.enabled")
	}
}
func retain(policy string, durationMillis int64) func(*world) {
	return func(w *world) {
		t := w.tolerations()
		t.ResourceRetainPolicy, t.ResourceRetainDurationMillis, t.TTLAfterStopMillis = policy, ptr.To(durationMillis), nil
	}
}

// exposed asks for one ConfigMap and one Service with each kind of front, Apache's
// driver exposure lists, under a registration that declares the Gateway API routes.
func exposed(w *world) {
	w.declareFronts()
	w.app.Spec.ConfigMapSpecs = []sparkv1.ConfigMapSpec{{Name: "pi-settings", Labels: map[string]string{"team": "a"}, Data: map[string]string{"app.conf": "x=1\n"}}}
	svc := func(name string) (*metav1.ObjectMeta, *corev1.ServiceSpec) {
		return &metav1.ObjectMeta{Name: name}, &corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 4040, TargetPort: intstr.FromInt32(4040)}}}
	}
	gateway := &apiextensionsv1.JSON{Raw: []byte(`{"parentRefs":[{"name":"gw"}],"hostnames":["pi.example.org"]}`)}
	uiMeta, uiSpec := svc("pi-ui")
	httpMeta, httpSpec := svc("pi-http")
	grpcMeta, grpcSpec := svc("pi-connect")
	grpcSpec.Ports[0] = corev1.ServicePort{Name: "grpc", Port: 15002, TargetPort: intstr.FromInt32(15002)}
	w.app.Spec.DriverServiceIngressList = []sparkv1.DriverExposure{{ServiceMetadata: uiMeta, ServiceSpec: uiSpec,
		IngressMetadata: &metav1.ObjectMeta{Name: "pi-ui", Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}}}}
	w.app.Spec.DriverHTTPRouteList = []sparkv1.DriverExposure{{ServiceMetadata: httpMeta, ServiceSpec: httpSpec,
		HTTPRouteMetadata: &metav1.ObjectMeta{Name: "pi-http"}, HTTPRouteSpec: gateway}}
	w.app.Spec.DriverGRPCRouteList = []sparkv1.DriverExposure{{ServiceMetadata: grpcMeta, ServiceSpec: grpcSpec,
		GRPCRouteMetadata: &metav1.ObjectMeta{Name: "pi-connect"}, GRPCRouteSpec: gateway}}
}
func onFailure(w *world) {
	w.tolerations().RestartConfig = &sparkv1.RestartConfig{RestartPolicy: sparkv1.RestartOnFailure, RestartBackoffMillis: ptr.To(int64(10000))}
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{name: "new", want: sparkv1.AppDriverRequested},
		{name: "driver-started", want: sparkv1.AppDriverStarted, setup: then(submitted, func(w *world) { w.driverRunning(false) })},
		{name: "driver-ready", want: sparkv1.AppRunningHealthy, setup: then(started, func(w *world) { w.driverRunning(true) })},
		{name: "driver-ready-straight-from-requested", want: sparkv1.AppRunningHealthy, setup: then(submitted, func(w *world) { w.driverRunning(true) })},
		{name: "waiting-for-executors", want: sparkv1.AppDriverReady, setup: then(instances(2, 1, 3), started, func(w *world) { w.driverRunning(true) })},
		{name: "initialized-below-threshold", want: sparkv1.AppInitializedBelowThresholdExecutors, setup: then(instances(2, 1, 3), running, func(w *world) { w.executors(3, 1) })},
		{name: "running-with-partial-capacity", want: sparkv1.AppRunningWithPartialCapacity, setup: then(instances(2, 1, 3), running, func(w *world) { w.executors(3, 2) })},
		{name: "running-below-threshold", want: sparkv1.AppRunningWithBelowThresholdExecutors, setup: then(instances(2, 2, 3), running, func(w *world) {
			w.executors(3, 3)
			w.settle()
			w.executors(3, 1)
		})},
		{name: "succeeded", want: sparkv1.AppSucceeded, setup: then(retain(sparkv1.RetainNever, -1), exited(0))},
		{name: "succeeded-released", want: sparkv1.AppResourceReleased, setup: then(retain(sparkv1.RetainNever, -1), exited(0), settleAfter(time.Second))},
		{name: "succeeded-retained", want: sparkv1.AppTerminatedWithoutReleaseResources, setup: then(retain(sparkv1.RetainAlways, 10000), exited(0))},
		{name: "retain-duration-passed", want: sparkv1.AppResourceReleased, setup: then(retain(sparkv1.RetainAlways, 10000), exited(0), settleAfter(10*time.Second))},
		{name: "failed-retained-on-failure", want: sparkv1.AppTerminatedWithoutReleaseResources, setup: then(retain(sparkv1.RetainOnFailure, -1), exited(1))},
		{name: "ttl-expired", want: sparkv1.AppResourceReleased, setup: then(exited(0), settleAfter(10*time.Second))},
		{name: "driver-start-timed-out", want: sparkv1.AppDriverStartTimedOut, setup: func(w *world) {
			retain(sparkv1.RetainNever, -1)(w)
			w.tolerations().ApplicationTimeoutConfig = &sparkv1.ApplicationTimeoutConfig{DriverStartTimeoutMillis: ptr.To(int64(30000))}
			w.settle()
			w.advance(31 * time.Second)
		}},
		{name: "driver-ready-timed-out", want: sparkv1.AppDriverReadyTimedOut, setup: then(started, func(w *world) { w.advance(301 * time.Second) })},
		{name: "executors-start-timed-out", want: sparkv1.AppExecutorsStartTimedOut, setup: then(instances(2, 1, 3), running, func(w *world) { w.advance(301 * time.Second) })},
		{name: "driver-evicted", want: sparkv1.AppDriverEvicted, setup: then(running, func(w *world) {
			w.setDriverStatus(corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."})
		})},
		{name: "scheduling-failure", want: sparkv1.AppSchedulingFailure, setup: func(w *world) {
			w.rejectPods = true
			w.settle()
			w.advance(w.cfg.SubmissionGrace + time.Second)
			w.settle()
			w.advance(w.cfg.MissingDriverGrace + time.Second)
		}},
		{name: "scheduling-failure-scheduled-to-restart", want: sparkv1.AppScheduledToRestart, setup: func(w *world) {
			onFailure(w)
			w.rejectPods = true
			w.settle()
			w.advance(w.cfg.SubmissionGrace + time.Second)
			w.settle()
			w.advance(w.cfg.MissingDriverGrace + time.Second)
			w.settle()
		}},
		{name: "failed-scheduled-to-restart", want: sparkv1.AppScheduledToRestart, setup: then(onFailure, exited(1))},
		{name: "restarted", want: sparkv1.AppDriverRequested, setup: then(onFailure, exited(1), settleAfter(11*time.Second))},
		{name: "client-mode-refused", want: sparkv1.AppResourceReleased, setup: func(w *world) { w.app.Spec.DeploymentMode = sparkv1.DeploymentModeClient }},
		{name: "deleted", finalizing: true, want: sparkv1.AppResourceReleased, setup: running},
		{name: "exposed", want: sparkv1.AppRunningHealthy, setup: then(exposed, running)},
		// The routes the spec asks for are not declared children: refused with the chart value.
		{name: "exposed-routes-undeclared", want: sparkv1.AppResourceReleased, setup: func(w *world) {
			exposed(w)
			delete(w.children, keyHTTPRoute)
			delete(w.children, keyGRPCRoute)
		}},
		{name: "exposed-name-taken", want: sparkv1.AppResourceReleased, setup: func(w *world) {
			exposed(w)
			w.app.Spec.ConfigMapSpecs[0].Name = "pi-0-spark-drv-conf-map"
		}},
		// Apache's earlier enum spelling, which its e2e suite writes, and spark.app.name set:
		// Apache then names the application after the object.
		{name: "legacy-spark-version", want: sparkv1.AppDriverRequested, setup: func(w *world) {
			w.app.Spec.RuntimeVersions.SparkVersion, w.app.Spec.RuntimeVersions.JdkVersion = "v4_2_0", "Java17"
			w.app.Spec.SparkConf["spark.app.name"] = "Spark Pi"
		}},
	}
}

// TestGolden builds each case's request, runs the hook and compares request, answer and
// Events with the files under testdata/apachesparkapplication/<case>; -update rewrites them.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, piYAML)
			if c.setup != nil {
				c.setup(w)
			}
			req := w.request(c.finalizing)
			reqBody := goldentest.Indented(t, req)
			var resp any
			var events []event.Event
			r, outcome, err := Sync(req, w.now, w.cfg)
			if err != nil {
				resp = goldentest.ErrorAnswer(err)
			} else {
				resp = r
				if !c.finalizing {
					story, err := outcome.Story()
					require.NoError(t, err)
					events = story.Events
				}
				w.checkSchema(coretest.MustJSON(t, r.Status))
				st := r.Status.(*sparkv1.ApplicationStatus)
				assert.Contains(t, historyOf(st.StateTransitionHistory), c.want)
			}
			dir := filepath.Join(goldenDir, c.name)
			compare(t, filepath.Join(dir, "now.txt"), []byte(w.now.Format(time.RFC3339)+"\n"))
			compare(t, filepath.Join(dir, "request.json"), reqBody)
			compare(t, filepath.Join(dir, "response.json"), goldentest.Indented(t, resp))
			goldentest.CompareEvents(t, filepath.Join(dir, "events.json"), events, len(events), *update, "go test ./internal/apacheapp -run TestGolden")
		})
	}
}

func compare(t *testing.T, path string, got []byte) {
	t.Helper()
	goldentest.Compare(t, path, got, *update, "go test ./internal/apacheapp -run TestGolden")
}

// Apache's own e2e assertion of examples/pi.yaml: the history of a run that succeeds.
func TestPiHistoryIsApaches(t *testing.T) {
	w := newWorld(t, piYAML)
	exited(0)(w)
	w.settle()
	assert.Equal(t, []string{
		sparkv1.AppSubmitted, sparkv1.AppDriverRequested, sparkv1.AppDriverStarted, sparkv1.AppDriverReady,
		sparkv1.AppRunningHealthy, sparkv1.AppSucceeded, sparkv1.AppResourceReleased,
	}, w.history())
	assert.Empty(t, w.children[keyPod], "the driver is released: resourceRetainPolicy OnFailure")
	w.advance(10 * time.Second)
	w.settle()
	assert.True(t, metaTrue(w.app.Status.Conditions, "Expired"), "ttlAfterStopMillis marks it for sparkhooks gc")
}

// The histories Apache's own e2e suite asserts (tests/e2e of its 1.0.0 tag), each on its
// example's tolerations.
func TestApacheE2EHistories(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(*world)
		run   func(*world)
		want  []string
	}{
		{"driver-start-timeout", func(w *world) {
			w.tolerations().ResourceRetainPolicy, w.tolerations().TTLAfterStopMillis = "", nil
			w.tolerations().ApplicationTimeoutConfig = &sparkv1.ApplicationTimeoutConfig{DriverStartTimeoutMillis: ptr.To(int64(30000))}
		}, settleAfter(31 * time.Second),
			[]string{"Submitted", "DriverRequested", "DriverStartTimedOut", "ResourceReleased"}},
		{"resource-retain-duration", func(w *world) {
			w.tolerations().ResourceRetainPolicy = sparkv1.RetainAlways
			w.tolerations().ResourceRetainDurationMillis, w.tolerations().TTLAfterStopMillis = ptr.To(int64(10000)), ptr.To(int64(30000))
		}, then(exited(0), settleAfter(10*time.Second)),
			[]string{"Submitted", "DriverRequested", "DriverStarted", "DriverReady", "RunningHealthy", "Succeeded", "TerminatedWithoutReleaseResources", "ResourceReleased"}},
		{"resource-retain-on-failure", func(w *world) { w.tolerations().TTLAfterStopMillis = nil }, exited(1),
			[]string{"Submitted", "DriverRequested", "DriverStarted", "DriverReady", "RunningHealthy", "Failed", "TerminatedWithoutReleaseResources"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, piYAML)
			c.setup(w)
			c.run(w)
			w.settle()
			assert.Equal(t, c.want, w.history())
		})
	}
}

// A restart moves the finished attempt's history to previousAttemptSummary and counts.
func TestRestartRotatesTheAttempt(t *testing.T) {
	w := newWorld(t, piYAML)
	onFailure(w)
	exited(1)(w)
	w.settle()
	w.advance(11 * time.Second)
	w.settle()
	st := w.app.Status
	require.NotNil(t, st.PreviousAttemptSummary)
	assert.Equal(t, sparkv1.ApplicationAttemptInfo{ID: 1, RestartCounter: 1, FailureRestartCounter: 1}, st.CurrentAttemptSummary.AttemptInfo)
	assert.Equal(t, sparkv1.ApplicationAttemptInfo{}, st.PreviousAttemptSummary.AttemptInfo)
	assert.Equal(t, []string{sparkv1.AppSubmitted, sparkv1.AppDriverRequested, sparkv1.AppDriverStarted, sparkv1.AppDriverReady,
		sparkv1.AppRunningHealthy, sparkv1.AppFailed}, historyOf(st.PreviousAttemptSummary.StateTransitionHistory))
	assert.Equal(t, []string{sparkv1.AppScheduledToRestart, sparkv1.AppDriverRequested}, w.history())
	keys := historyKeys(st.StateTransitionHistory)
	assert.Equal(t, 6, keys[0], "the keys go on from the previous attempt's")
}

// The history of an attempt keeps its last historyLimit entries.
func TestHistoryIsBounded(t *testing.T) {
	w := newWorld(t, piYAML)
	instances(2, 2, 3)(w)
	running(w)
	for i := range 30 {
		w.executors(3, 3-2*(i%2))
		w.advance(time.Second)
		w.settle()
	}
	assert.Len(t, w.app.Status.StateTransitionHistory, historyLimit)
	keys := historyKeys(w.app.Status.StateTransitionHistory)
	assert.Equal(t, keys[0]+historyLimit-1, keys[len(keys)-1], "the newest entries stay")
}

func TestCustomizeAsksForTheExecutors(t *testing.T) {
	w := newWorld(t, piYAML)
	resp, err := Customize(&metacontroller.CustomizeRequest{Parent: coretest.MustJSON(t, w.app)})
	require.NoError(t, err)
	require.NotEmpty(t, resp.RelatedResources)
	assert.Equal(t, "pods", resp.RelatedResources[0].Resource)
	assert.Equal(t, "pi", resp.RelatedResources[0].LabelSelector.MatchLabels["sparkoperator.k8s.io/app-name"])
	_, err = Customize(&metacontroller.CustomizeRequest{})
	assert.Error(t, err)
}

func metaTrue(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// An attempt keeps its ConfigMap as it was created, although a newer sparkhooks would write other
// properties: Apache's name does not follow the content, and the API server refuses to change an
// immutable ConfigMap.
func TestAttemptKeepsItsConfigMap(t *testing.T) {
	w := newWorld(t, piYAML)
	submitted(w)
	require.Len(t, w.children[keyConfigMap], 1)
	const older = "spark.app.id=written by an older release\n"
	for _, obj := range w.children[keyConfigMap] {
		obj["data"] = map[string]any{"spark.properties": older}
		delete(obj["metadata"].(map[string]any), "annotations")
	}
	resp, _, err := Sync(w.request(false), w.now, w.cfg)
	require.NoError(t, err)
	var kept []any
	for _, c := range coretest.Children(t, resp) {
		if c.Key == keyConfigMap {
			assert.Equal(t, "pi-0-spark-drv-conf-map", c.Name)
			kept = append(kept, c.Obj["data"])
		}
	}
	assert.Equal(t, []any{map[string]any{"spark.properties": older}}, kept)
}

// The extras live as long as the attempt's driver Pod: built with it, gone when it is released,
// and built again for the next attempt, whose driver their Services then select.
func TestExtrasLiveWithTheDriver(t *testing.T) {
	w := newWorld(t, piYAML)
	exposed(w)
	onFailure(w)
	retain(sparkv1.RetainNever, -1)(w)
	running(w)
	extras := func() map[string]string {
		got := map[string]string{}
		for key, group := range w.children {
			for name, obj := range group {
				if key == keyPod || name == "pi-0-spark-drv-conf-map" || name == "pi-0-driver-svc" || name == "pi-ui-svc" {
					continue
				}
				sel, _, _ := unstructuredString(obj, "spec", "selector", "spark-app-selector")
				got[key+"/"+name] = sel
			}
		}
		return got
	}
	first := w.app.Status.Attempt.SparkApplicationID
	assert.Equal(t, map[string]string{
		keyConfigMap + "/pi-settings": "", keyService + "/pi-ui": first, keyService + "/pi-http": first, keyService + "/pi-connect": first,
		keyIngress + "/pi-ui": "", keyHTTPRoute + "/pi-http": "", keyGRPCRoute + "/pi-connect": "",
	}, extras())

	w.advance(time.Minute)
	w.driverExited(1, "")
	w.settle()
	assert.Empty(t, extras(), "released with the driver")

	w.advance(11 * time.Second)
	w.settle()
	second := w.app.Status.Attempt.SparkApplicationID
	require.NotEqual(t, first, second)
	assert.Equal(t, second, extras()[keyService+"/pi-ui"], "the next attempt's Services select its driver")
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
