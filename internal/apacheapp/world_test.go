package apacheapp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// piYAML is Apache's examples/pi.yaml, in shape.
const piYAML = `
apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata:
  name: pi
spec:
  mainClass: "org.apache.spark.examples.SparkPi"
  jars: "local:///opt/spark/examples/jars/spark-examples.jar"
  sparkConf:
    spark.dynamicAllocation.enabled: "true"
    spark.dynamicAllocation.shuffleTracking.enabled: "true"
    spark.dynamicAllocation.maxExecutors: "3"
    spark.kubernetes.authenticate.driver.serviceAccountName: "spark"
    spark.kubernetes.container.image: "apache/spark:{{SPARK_VERSION}}-scala"
  applicationTolerations:
    resourceRetainPolicy: OnFailure
    ttlAfterStopMillis: 10000
  runtimeVersions:
    sparkVersion: "4.0.1"
`

var (
	keyConfigMap = metacontroller.Key("ConfigMap", "v1")
	keyService   = metacontroller.Key("Service", "v1")
	keyIngress   = metacontroller.Key("Ingress", "networking.k8s.io/v1")
	keyHTTPRoute = metacontroller.Key("HTTPRoute", children.GatewayAPIVersion)
	keyGRPCRoute = metacontroller.Key("GRPCRoute", children.GatewayAPIVersion)
)

// world plays Metacontroller (creates and deletes children, writes the status) and the kubelet
// (the driver's and executors' phases) for one Apache SparkApplication.
type world struct {
	t        testing.TB
	cfg      sparkapp.Config
	now      time.Time
	app      *sparkv1.SparkApplication
	children coretest.Objects
	execs    map[string]map[string]any
	uids     int
	// rejectPods keeps answered Pods from being created (an admission webhook refuses them).
	rejectPods bool
}

func newWorld(t testing.TB, doc string) *world {
	t.Helper()
	app := &sparkv1.SparkApplication{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), app))
	app.Namespace, app.UID, app.Generation = "default", "5a9e0000-0000-4000-8000-0000000000a7", 1
	app.CreationTimestamp = metav1.NewTime(coretest.WorldStart)
	return &world{
		t: t, cfg: sparkapp.DefaultConfig(), now: coretest.WorldStart, app: app,
		children: coretest.Objects{keyPod: {}, keyConfigMap: {}, keyService: {}},
		execs:    map[string]map[string]any{},
	}
}

func (w *world) request(finalizing bool) *metacontroller.SyncRequest {
	w.t.Helper()
	app := w.app
	if finalizing && app.DeletionTimestamp == nil {
		app = app.DeepCopy()
		app.DeletionTimestamp = &metav1.Time{Time: w.now}
	}
	req := coretest.Request(w.t, coretest.MustJSON(w.t, app), w.children, coretest.Objects{keyPod: w.execs})
	req.Finalizing = finalizing
	return req
}

// sync runs the hook once and applies its answer.
func (w *world) sync() error {
	w.t.Helper()
	resp, _, err := Sync(w.request(false), w.now, w.cfg)
	if err != nil {
		return err
	}
	w.apply(resp)
	return nil
}

// settle syncs until nothing changes, as Metacontroller syncs on every child event.
func (w *world) settle() {
	w.t.Helper()
	for range 20 {
		before := w.snapshot()
		require.NoError(w.t, w.sync())
		if before == w.snapshot() {
			return
		}
	}
	w.t.Fatalf("no fixed point after 20 syncs: %s", coretest.MustJSON(w.t, w.app.Status.CurrentState))
}

func (w *world) snapshot() string {
	return string(coretest.MustJSON(w.t, w.app.Status)) + string(coretest.MustJSON(w.t, w.children))
}

func (w *world) apply(resp *metacontroller.SyncResponse) {
	w.t.Helper()
	w.children.Apply(w.t, resp, &w.uids, w.now, func(c coretest.Child) bool { return c.Key == keyPod && w.rejectPods })
	raw := coretest.MustJSON(w.t, resp.Status)
	w.checkSchema(raw)
	st := sparkv1.ApplicationStatus{}
	require.NoError(w.t, json.Unmarshal(raw, &st))
	w.app.Status = st
}

// checkSchema rejects a status the CRD would reject: in a cluster, Metacontroller's status
// write would fail and every later sync with it.
func (w *world) checkSchema(status []byte) {
	w.t.Helper()
	checkStatus(w.t, w.app, status)
}

var checkStatus = coretest.StatusSchema(filepath.Join("..", "..", "crds", "spark.apache.org_sparkapplications.yaml"))

func (w *world) advance(d time.Duration) { w.now = w.now.Add(d) }

// history is the current attempt's states, in order.
func (w *world) history() []string { return historyOf(w.app.Status.StateTransitionHistory) }

func historyOf(h map[string]sparkv1.ApplicationState) []string {
	var out []string
	for _, k := range historyKeys(h) {
		out = append(out, h[fmt.Sprint(k)].CurrentStateSummary)
	}
	return out
}

func (w *world) driverPod() map[string]any {
	w.t.Helper()
	pod := w.children[keyPod][sparkv1.DriverPodName(w.app)]
	require.NotNil(w.t, pod, "no driver Pod")
	return pod
}

func (w *world) setDriverStatus(st corev1.PodStatus) {
	w.t.Helper()
	obj := map[string]any{}
	require.NoError(w.t, json.Unmarshal(coretest.MustJSON(w.t, st), &obj))
	w.driverPod()["status"] = obj
}

// driverRunning: the driver's container runs; ready makes the Pod Ready too.
func (w *world) driverRunning(ready bool) {
	start := metav1.NewTime(w.now)
	st := corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: sparkpod.DriverContainerName, Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
	}}}
	if ready {
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start}}
	}
	w.setDriverStatus(st)
}

func (w *world) driverExited(code int32, reason string) {
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
	}
	w.setDriverStatus(corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: sparkpod.DriverContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(w.now.Add(-time.Minute)), FinishedAt: metav1.NewTime(w.now),
		}},
	}}})
}

// executors makes n executor Pods of the current attempt, the first ready of them Ready.
func (w *world) executors(n, ready int) {
	w.t.Helper()
	appID := w.app.Status.Attempt.SparkApplicationID
	require.NotEmpty(w.t, appID)
	clear(w.execs)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s-exec-%d", w.app.Name, i)
		status := map[string]any{"phase": "Pending"}
		if i <= ready {
			status = map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		}
		w.execs[name] = map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": w.app.Namespace, "labels": map[string]any{
				sparkpod.LabelSparkRole: "executor", sparkpod.LabelAppSelector: appID, "spark-exec-id": fmt.Sprint(i), sparkpod.LabelAppName: w.app.Name,
			}},
			"status": status,
		}
	}
}

func (w *world) tolerations() *sparkv1.ApplicationTolerations {
	if w.app.Spec.ApplicationTolerations == nil {
		w.app.Spec.ApplicationTolerations = &sparkv1.ApplicationTolerations{}
	}
	return w.app.Spec.ApplicationTolerations
}

// declareFronts is a registration with Ingresses and the Gateway API routes as children (the
// chart, with gatewayAPI.enabled): the request carries their types.
func (w *world) declareFronts() {
	for _, key := range []string{keyIngress, keyHTTPRoute, keyGRPCRoute} {
		w.children[key] = map[string]map[string]any{}
	}
}
