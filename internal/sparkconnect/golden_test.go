package sparkconnect

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/sparkconnect/")

const goldenDir = "../../testdata/sparkconnect"

// sdkYAML is what the Kubeflow SDK's connect() creates: templates whose containers list is
// empty, and its default sparkConf.
const sdkYAML = `
apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata:
  name: spark-connect-1a2b3c4d
spec:
  sparkVersion: 4.0.1
  image: apache/spark:4.0.1
  sparkConf:
    spark.jars: https://artifacts.example.com/repository/org/apache/spark/spark-connect_2.13/4.0.1/spark-connect_2.13-4.0.1.jar
    spark.connect.grpc.binding.address: 0.0.0.0
  server:
    cores: 1
    memory: 512m
    template:
      spec:
        containers: []
        serviceAccountName: spark
        nodeSelector: {pool: notebooks}
  executor:
    instances: 1
    cores: 1
    memory: 512m
    template:
      spec:
        containers: []
        tolerations: [{key: spot, operator: Equal, value: "true", effect: NoSchedule}]
`

type goldenCase struct {
	name  string
	hook  string // sync (default), finalize or customize
	setup func(t *testing.T) *world
}

func fresh(doc string) func(t *testing.T) *world {
	return func(t *testing.T) *world { return newWorld(t, doc) }
}

func then(setup func(t *testing.T) *world, steps ...func(*world)) func(t *testing.T) *world {
	return func(t *testing.T) *world {
		w := setup(t)
		for _, step := range steps {
			step(w)
		}
		return w
	}
}

func settled(w *world)      { w.settle() }
func withKueue(w *world)    { w.enableKueue() }
func ready(w *world)        { w.settle(); w.advance(20 * time.Second); w.serverRunning(true) }
func readySettled(w *world) { ready(w); w.settle(); w.advance(time.Minute) }
func imageEdit(w *world) {
	w.editSpec(func(s *v1alpha1.SparkConnectSpec) { s.Image = ptr.To("apache/spark:4.0.2") })
}
func executorsEdit(w *world) {
	w.editSpec(func(s *v1alpha1.SparkConnectSpec) { s.Executor.Instances = ptr.To[int32](4) })
}
func memoryInvalid(w *world) {
	w.editSpec(func(s *v1alpha1.SparkConnectSpec) { s.Server.Memory = ptr.To("1Gi") })
}
func syncOnce(w *world) { require.NoError(w.t, w.sync()) }
func defaultServiceAccount(w *world) {
	w.cfg.Driver.DefaultServiceAccount = "spark-default"
}

// defaultEventLog sets the operator's default event log (--default-event-log-dir).
func defaultEventLog(w *world) { w.cfg.Driver.EventLog.Dir = "s3a://spark-logs/events" }

func serverGone(w *world)    { delete(w.children[keyPod], v1alpha1.ServerPodName(w.sc)) }
func serverFailed(w *world)  { w.serverExited("Failed") }
func statusLost(w *world)    { w.sc.Status = v1alpha1.SparkConnectStatus{} }
func beingDeleted(w *world)  { w.sc.DeletionTimestamp = ptr.To(metav1.NewTime(w.now)) }
func withExecutors(w *world) { w.addExecutors("Running", "Running", "Pending") }
func serverRelabelled(w *world) {
	w.serverPod()["metadata"].(map[string]any)["labels"].(map[string]any)["sparkoperator.k8s.io/submission-id"] = "someone-else"
}

// gatewayRoutes declares HTTPRoutes and GRPCRoutes as children, as the chart's registration
// does with gatewayAPI.enabled.
func gatewayRoutes(w *world) {
	w.children[keyHTTPRoute] = map[string]map[string]any{}
	w.children[keyGRPCRoute] = map[string]map[string]any{}
}

// routedYAML asks for a GRPCRoute on the server's own hostname and a UI HTTPRoute under a path
// of a shared one.
var routedYAML = strings.Replace(connectYAML, "  executor:\n", `    grpcRoute:
      parentRefs:
        - {name: public, namespace: gateways, sectionName: grpc}
      hostnames: ["{{$appName}}.{{$appNamespace}}.connect.example.com"]
    httpRoute:
      parentRefs:
        - {name: public, namespace: gateways, sectionName: https}
      hostnames: [spark.example.com]
  executor:
`, 1)

func goldenCases() []goldenCase {
	return []goldenCase{
		{name: "new", setup: fresh(connectYAML)},
		{name: "new-sdk", setup: fresh(sdkYAML)},
		{name: "new-custom-service", setup: fresh(strings.Replace(connectYAML, "        serviceAccountName: spark\n", `        serviceAccountName: spark
    service:
      metadata:
        name: notebook-connect
        labels: {team: data}
        annotations: {service.beta.kubernetes.io/aws-load-balancer-internal: "true"}
      spec:
        type: LoadBalancer
`, 1))},
		{name: "new-invalid", setup: then(fresh(connectYAML), memoryInvalid)},
		// spec.server.serviceAccount wins over the template's and the operator default.
		{name: "new-server-service-account", setup: then(fresh(strings.Replace(connectYAML, "    cores: 1\n", "    cores: 1\n    serviceAccount: notebook-server\n", 1)), defaultServiceAccount)},
		// Neither the spec nor the template names one: the operator default.
		{name: "new-default-service-account", setup: then(fresh(strings.Replace(connectYAML, "        serviceAccountName: spark\n", "        nodeSelector: {pool: notebooks}\n", 1)), defaultServiceAccount)},
		// cores are the Pods' CPU requests and the limit properties their limits, as for a
		// SparkApplication (Kubeflow #3112: cores did nothing there).
		{name: "new-cores-and-limits", setup: fresh(strings.NewReplacer("    cores: 1\n", "    cores: 2\n", "  server:\n", `  sparkConf:
    spark.kubernetes.driver.limit.cores: "2"
    spark.kubernetes.executor.limit.cores: "3"
  server:
`).Replace(connectYAML))},
		{name: "new-routes", setup: then(fresh(routedYAML), gatewayRoutes)},
		// The registration does not declare the routes: the server has its Service only.
		{name: "new-routes-not-declared", setup: fresh(routedYAML)},
		{name: "server-ready-routes", setup: then(fresh(routedYAML), gatewayRoutes, readySettled)},
		{name: "new-default-event-log", setup: then(fresh(connectYAML), defaultEventLog)},
		{name: "server-pending", setup: then(fresh(connectYAML), settled, func(w *world) { w.advance(5 * time.Second) })},
		{name: "server-not-ready", setup: then(fresh(connectYAML), settled, func(w *world) { w.advance(10 * time.Second); w.serverRunning(false) })},
		{name: "server-ready", setup: then(fresh(connectYAML), ready)},
		{name: "server-ready-settled", setup: then(fresh(connectYAML), readySettled)},
		{name: "server-ready-with-executors", setup: then(fresh(connectYAML), readySettled, withExecutors)},
		{name: "server-deleted", setup: then(fresh(connectYAML), readySettled, serverGone)},
		{name: "server-failed", setup: then(fresh(connectYAML), readySettled, serverFailed)},
		{name: "spec-changed-while-ready", setup: then(fresh(connectYAML), readySettled, imageEdit)},
		{name: "spec-changed-old-server-gone", setup: then(fresh(connectYAML), readySettled, executorsEdit, syncOnce)},
		{name: "invalid-edit-while-ready", setup: then(fresh(connectYAML), readySettled, memoryInvalid)},
		{name: "status-lost-server-ready", setup: then(fresh(connectYAML), readySettled, statusLost)},
		{name: "status-lost-after-spec-change", setup: then(fresh(connectYAML), readySettled, statusLost, imageEdit)},
		{name: "server-relabelled", setup: then(fresh(connectYAML), readySettled, serverRelabelled)},
		// Taken over from the Kubeflow Spark Operator (docs/migrate-from-kubeflow.md).
		{name: "kubeflow-server-adopted", setup: then(fresh(connectYAML), kubeflowMade)},
		{name: "kubeflow-server-adopted-settled", setup: then(fresh(connectYAML), kubeflowMade, syncOnce)},
		{name: "kubeflow-server-invalid-edit", setup: then(fresh(connectYAML), kubeflowMade, syncOnce, memoryInvalid)},
		{name: "kubeflow-server-spec-changed", setup: then(fresh(connectYAML), kubeflowMade, syncOnce, imageEdit)},
		{name: "kubeflow-server-exited", setup: then(fresh(connectYAML), kubeflowMade, syncOnce, serverFailed)},
		{name: "kubeflow-server-not-owned", setup: then(fresh(connectYAML), kubeflowMade, kubeflowReleased)},
		{name: "kubeflow-server-not-owned-spec-changed", setup: then(fresh(connectYAML), kubeflowMade, kubeflowReleased, syncOnce, imageEdit)},
		{name: "kubeflow-server-not-owned-exited", setup: then(fresh(connectYAML), kubeflowMade, kubeflowReleased, syncOnce, kubeflowReleasedExited)},
		{name: "running", hook: "finalize", setup: then(fresh(connectYAML), readySettled, beingDeleted)},
		{name: "children-gone", hook: "finalize", setup: then(fresh(connectYAML), readySettled, beingDeleted, func(w *world) {
			for _, objs := range w.children {
				clear(objs)
			}
		})},
		{name: "new", hook: "customize", setup: fresh(connectYAML)},
		{name: "kubeflow-status", hook: "customize", setup: then(fresh(connectYAML), kubeflowMade)},
		{name: "kueue-new", setup: then(fresh(queuedConnectYAML), withKueue)},
		{name: "kueue-queued", setup: then(fresh(queuedConnectYAML), withKueue, settled, func(w *world) { w.kueuePending() })},
		{name: "kueue-admitted", setup: then(fresh(queuedConnectYAML), withKueue, settled, func(w *world) { w.kueueAdmit() })},
		{name: "kueue-ready", setup: then(fresh(queuedConnectYAML), withKueue, settled, func(w *world) { w.kueueAdmit() }, readySettled)},
		{name: "kueue-evicted", setup: then(fresh(queuedConnectYAML), withKueue, settled, func(w *world) { w.kueueAdmit() }, readySettled,
			func(w *world) { w.kueueEvict() })},
		{name: "kueue-requeued", setup: then(fresh(queuedConnectYAML), withKueue, settled, func(w *world) { w.kueueAdmit() }, readySettled,
			func(w *world) { w.kueueEvict() }, settled)},
	}
}

// TestGolden builds each case's request, checks it against request.json, runs the hook and
// checks the answer against response.json; -update rewrites both. Sync statuses must validate
// against the CRD, or Metacontroller would fail every status write.
func TestGolden(t *testing.T) {
	crd, err := crdschema.Load(filepath.Join("..", "..", "crds", "sparkoperator.k8s.io_sparkconnects.yaml"))
	require.NoError(t, err)
	for _, c := range goldenCases() {
		hook := c.hook
		if hook == "" {
			hook = "sync"
		}
		t.Run(hook+"/"+c.name, func(t *testing.T) {
			w := c.setup(t)
			dir := filepath.Join(goldenDir, hook, c.name)
			var req, resp any
			switch hook {
			case "customize":
				creq := &metacontroller.CustomizeRequest{Parent: coretest.MustJSON(t, w.sc)}
				req = creq
				r, err := Customize(creq)
				require.NoError(t, err)
				resp = r
			case "finalize":
				sreq := w.request()
				sreq.Finalizing = true
				req = sreq
				r, err := Finalize(sreq)
				require.NoError(t, err)
				resp = r
			default:
				sreq := w.request()
				reqBody := goldentest.Indented(t, sreq)
				r, outcome, err := Sync(sreq, w.now, w.cfg)
				var events []event.Event
				if err != nil {
					resp = goldentest.ErrorAnswer(err)
				} else {
					resp = r
					checkStatusSchema(t, crd, w.sc, r)
					story, err := outcome.Story()
					require.NoError(t, err)
					events = story.Events
				}
				goldentest.CompareEvents(t, filepath.Join(dir, "events.json"), events, len(events), *update, "go test ./internal/sparkconnect -run TestGolden")
				compareGolden(t, filepath.Join(dir, "now.txt"), []byte(w.now.Format(time.RFC3339)+"\n"))
				compareGolden(t, filepath.Join(dir, "request.json"), reqBody)
				compareGolden(t, filepath.Join(dir, "response.json"), goldentest.Indented(t, resp))
				return
			}
			compareGolden(t, filepath.Join(dir, "request.json"), goldentest.Indented(t, req))
			compareGolden(t, filepath.Join(dir, "response.json"), goldentest.Indented(t, resp))
		})
	}
}

func checkStatusSchema(t *testing.T, crd *crdschema.Validator, sc *v1alpha1.SparkConnect, resp *metacontroller.SyncResponse) {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, sc), &obj))
	var status map[string]any
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, resp.Status), &status))
	obj["apiVersion"], obj["kind"], obj["status"] = v1alpha1.GroupVersion.String(), v1alpha1.KindSparkConnect, status
	require.Empty(t, crdschema.WithoutCELSkipped(crd.Validate(obj)), "the status does not validate against the CRD")
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldentest.Compare(t, path, got, *update, "go test ./internal/sparkconnect -run TestGolden")
}
