package sparkapp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// goldenCase positions a world just before the sync the case records.
type goldenCase struct {
	name  string
	hook  string // sync (default), finalize or customize
	setup func(t *testing.T) *world
}

func fresh(doc string) func(t *testing.T) *world {
	return func(t *testing.T) *world { return newWorld(t, doc) }
}

func running(doc string, executors int) func(t *testing.T) *world {
	return runningFrom(fresh(doc), executors)
}

// runningFrom runs the application of a new world, configured by base, up to RUNNING.
func runningFrom(base func(t *testing.T) *world, executors int) func(t *testing.T) *world {
	return func(t *testing.T) *world {
		w := base(t)
		w.settle()
		w.advance(4 * time.Second)
		w.driverRunning(true)
		w.addExecutors(executors, corev1.PodRunning)
		w.settle()
		w.advance(time.Minute)
		return w
	}
}

// fromExample starts a world from a SparkApplication of examples/.
func fromExample(name string) func(t *testing.T) *world {
	return func(t *testing.T) *world {
		doc, err := os.ReadFile(filepath.Join("..", "..", "examples", name+".yaml"))
		require.NoError(t, err)
		return newWorld(t, string(doc))
	}
}

func then(base func(t *testing.T) *world, step func(w *world)) func(t *testing.T) *world {
	return func(t *testing.T) *world {
		w := base(t)
		step(w)
		return w
	}
}

// builtByOlderRelease makes the observed driver Pod one that a release without the driver's
// terminationMessagePolicy created: its recorded answer and its spec lack the field. Pod
// containers are immutable, so the sync must answer that Pod as it was, not as built now.
func builtByOlderRelease(w *world) {
	w.t.Helper()
	pod := w.driverPod()
	dropPolicy := func(podObj map[string]any) {
		for _, c := range podObj["spec"].(map[string]any)["containers"].([]any) {
			delete(c.(map[string]any), "terminationMessagePolicy")
		}
	}
	ann := pod["metadata"].(map[string]any)["annotations"].(map[string]any)
	answered := map[string]any{}
	require.NoError(w.t, json.Unmarshal([]byte(ann[metacontroller.LastAppliedAnnotation].(string)), &answered))
	dropPolicy(answered)
	ann[metacontroller.LastAppliedAnnotation] = string(coretest.MustJSON(w.t, answered))
	dropPolicy(pod)
}

// defaultTTL sets the operator default time to live (--default-time-to-live-seconds).
func defaultTTL(seconds int64) func(w *world) {
	return func(w *world) { w.cfg.DefaultTimeToLiveSeconds = seconds }
}

// finishedFor completes the running application and lets d pass.
func finishedFor(d time.Duration) func(w *world) {
	return func(w *world) {
		w.driverExited(0, "Completed")
		w.settle()
		w.advance(d)
	}
}

// spark43 is SparkPi on Spark 4.3: spark-submit there creates the executor NetworkPolicy (4.2),
// the driver annotates its exit exception (4.1), and containers may not escalate privileges.
var spark43 = strings.NewReplacer("3.5.3", "4.3.0", "_2.12", "_2.13").Replace(sparkPi)

// networkPolicies declares NetworkPolicies as children, as the chart's registration does.
func networkPolicies(w *world) { w.children[keyNetworkPolicy] = map[string]map[string]any{} }

// httpRoutes declares HTTPRoutes as children, as the chart's registration does with
// gatewayAPI.enabled.
func httpRoutes(w *world) { w.children[keyHTTPRoute] = map[string]map[string]any{} }

// uiRoute asks for a UI HTTPRoute on a shared hostname, under the default per-application path.
const uiRoute = "  sparkUIOptions:\n    httpRoute:\n      parentRefs:\n        - {name: public, namespace: gateways, sectionName: https}\n      hostnames: [spark.example.com]\n"

// gatewayRoutes declares both route kinds, as the chart's registration does.
func gatewayRoutes(w *world) {
	httpRoutes(w)
	w.children[keyGRPCRoute] = map[string]map[string]any{}
}

// connectPortRoute exposes Spark Connect's port of a driver that runs the server through a
// GRPCRoute on the application's own hostname, without an Ingress.
const connectPortRoute = "  driverIngressOptions:\n    - servicePort: 15002\n      servicePortName: spark-connect\n      grpcRoute:\n        parentRefs:\n          - {name: public, namespace: gateways, sectionName: grpc}\n        hostnames: [\"{{$appName}}.connect.example.com\"]\n"

// routeDefaults is an operator that gives every application a UI HTTPRoute at the root of its
// own hostname.
func routeDefaults(w *world) {
	w.cfg.Driver.Routes.UIHTTPRoute = true
	w.cfg.Driver.Routes.ParentRefs = []v1beta2.GatewayParentReference{{Name: "spark-ui", Namespace: "gateways"}}
	w.cfg.Driver.Routes.HTTPRouteHostnames = []string{"{{$appName}}.{{$appNamespace}}.spark.example.com"}
	w.cfg.Driver.Routes.HTTPRoutePathPrefix = "/"
}

const onFailure = "    type: OnFailure\n    onFailureRetries: 2\n    onFailureRetryInterval: 10\n    onSubmissionFailureRetries: 1\n    onSubmissionFailureRetryInterval: 20\n"

func goldenCases() []goldenCase {
	failed := func(w *world) { w.driverExited(1, "Error") }
	notReady := func(w *world) {
		w.settle()
		w.advance(4 * time.Second)
		w.driverRunning(false)
		w.settle()
		w.advance(time.Hour)
	}
	retrying := then(running(withRestart(sparkPi, onFailure), 2), func(w *world) { w.driverExited(1, "Error"); w.settle() })
	return []goldenCase{
		{name: "new-spark-pi", setup: fresh(sparkPi)},
		{name: "new-invalid-spec", setup: fresh(sparkPi + "  timeToLiveSeconds: 60\n  dynamicAllocation:\n    enabled: true\n    minExecutors: 5\n    maxExecutors: 2\n")},
		{name: "new-suspended", setup: fresh(sparkPi + "  suspend: true\n")},
		{name: "submitted-driver-pending", setup: then(fresh(sparkPi), func(w *world) {
			w.settle()
			w.advance(3 * time.Second)
			w.setDriverStatus(corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}})
		})},
		{name: "submitted-driver-not-yet-observed", setup: then(fresh(sparkPi), func(w *world) {
			w.rejectPods = true
			w.settle()
			w.advance(10 * time.Second)
		})},
		// Past the submission grace a driver that never appeared is believed missing only
		// after the missing-driver grace, like one that was seen and is gone.
		{name: "submitted-driver-not-created-in-grace", setup: then(fresh(sparkPi), neverCreated(0))},
		{name: "submitted-driver-never-created", setup: then(fresh(sparkPi), neverCreated(10*time.Second))},
		{name: "submitted-driver-never-created-retry", setup: then(fresh(withRestart(sparkPi, onFailure)), neverCreated(10*time.Second))},
		{name: "new-spec-does-not-decode", setup: then(fresh(sparkPi), func(w *world) { w.specEdit = driverContainersString })},
		{name: "driver-started", setup: then(fresh(sparkPi), func(w *world) { w.settle(); w.advance(4 * time.Second); w.driverRunning(true) })},
		{name: "running-with-executors", setup: running(sparkPi, 2)},
		// An executor lost while the driver wants it: the driver asks for a replacement at once.
		{name: "running-executor-lost", setup: then(running(sparkPi, 2), func(w *world) {
			delete(w.execs, "spark-pi-exec-2")
			w.addExecutor(3, corev1.PodPending)
		})},
		// Executors the driver stopped are not lost: its shutdown (exit 0, then their Pods
		// deleted) tells no Warning, nor does dynamic allocation releasing idle ones.
		{name: "running-executors-stopped-by-driver", setup: then(running(sparkPi, 2), func(w *world) {
			w.execs["spark-pi-exec-1"]["status"] = map[string]any{"phase": "Succeeded"}
		})},
		{name: "running-executor-released", setup: then(running(sparkPi, 2), func(w *world) { delete(w.execs, "spark-pi-exec-2") })},
		{name: "running-dynamic-allocation-released", setup: then(runningFrom(fromExample("spark-pi-dynamic-allocation"), 2), func(w *world) {
			delete(w.execs, "spark-pi-dynamic-allocation-exec-1")
			w.execs["spark-pi-dynamic-allocation-exec-2"]["status"] = map[string]any{"phase": "Succeeded"}
		})},
		{name: "completed", setup: then(running(sparkPi, 2), func(w *world) { w.driverExited(0, "Completed") })},
		// A real kubelet reports the Pod Succeeded only once it has stopped the Pod's sandbox,
		// seconds after the container exited on a busy node: the attempt is decided over from the
		// container, and the next sync keeps the driver Pod for its logs all the same.
		{name: "completed-pod-phase-lagging", setup: then(running(sparkPi, 2), func(w *world) {
			w.driverExited(0, "Completed")
			w.driverPod()["status"].(map[string]any)["phase"] = string(corev1.PodRunning)
			require.NoError(w.t, w.sync()) // decides COMPLETED, keeps the children one more sync
		})},
		{name: "completed-retain-never", setup: then(running(sparkPi+"  resourceRetainPolicy: Never\n", 2), func(w *world) { w.driverExited(0, "Completed") })},
		{name: "completed-retain-never-released", setup: then(running(sparkPi+"  resourceRetainPolicy: Never\n", 2), func(w *world) {
			w.driverExited(0, "Completed")
			require.NoError(w.t, w.sync()) // decides COMPLETED, keeps the children one more sync
		})},
		{name: "completed-ttl-pending", setup: then(running(sparkPi+"  timeToLiveSeconds: 3600\n", 2), func(w *world) { w.driverExited(0, "Completed"); w.settle(); w.advance(time.Minute) })},
		{name: "completed-ttl-expired", setup: then(running(sparkPi+"  timeToLiveSeconds: 3600\n", 2), func(w *world) { w.driverExited(0, "Completed"); w.settle(); w.advance(time.Hour) })},
		{name: "completed-default-ttl-pending", setup: then(runningFrom(then(fresh(sparkPi), defaultTTL(600)), 2), finishedFor(time.Minute))},
		{name: "completed-default-ttl-expired", setup: then(runningFrom(then(fresh(sparkPi), defaultTTL(600)), 2), finishedFor(10*time.Minute))},
		// The spec's timeToLiveSeconds wins over the operator default, here a longer one.
		{name: "completed-ttl-over-default", setup: then(runningFrom(then(fresh(sparkPi+"  timeToLiveSeconds: 3600\n"), defaultTTL(60)), 2), finishedFor(10*time.Minute))},
		// sparkhooks gc deletes on the Expired condition alone: it goes when the TTL is raised.
		{name: "completed-ttl-raised-after-expiry", setup: then(running(sparkPi+"  timeToLiveSeconds: 60\n", 2), func(w *world) {
			finishedFor(2 * time.Minute)(w)
			require.NoError(w.t, w.sync()) // Expired
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.TimeToLiveSeconds = ptr[int64](3600) })
		})},
		{name: "failed-never", setup: then(running(sparkPi, 2), failed)},
		{name: "failed-exception-in-log", setup: then(running(sparkPi, 2), func(w *world) {
			w.driverExited(1, "Error")
			// FallbackToLogsOnError: the kubelet's termination message is the end of the log.
			status := w.driverPod()["status"].(map[string]any)
			terminated := status["containerStatuses"].([]any)[0].(map[string]any)["state"].(map[string]any)["terminated"].(map[string]any)
			terminated["message"] = "26/11/24 13:30:01 INFO SparkContext: Running Spark version 3.5.3\n" +
				"Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"abc\"\n" +
				"\tat java.base/java.lang.Integer.parseInt(Integer.java:668)\n" +
				"\tat org.apache.spark.examples.SparkPi$.main(SparkPi.scala:31)\n" +
				"26/11/24 13:30:02 INFO ShutdownHookManager: Shutdown hook called\n"
		})},
		// An executor's container falls back to its log too (the executor pod template's
		// FallbackToLogsOnError): the condition and the Warning say why it failed.
		{name: "running-executor-failed-exception-in-log", setup: then(running(sparkPi, 2), func(w *world) {
			w.execs["spark-pi-exec-1"]["status"] = map[string]any{
				"phase": "Failed",
				"containerStatuses": []any{map[string]any{
					"name": executorContainer,
					"state": map[string]any{"terminated": map[string]any{
						"exitCode": 1, "reason": "Error",
						"message": "26/11/27 10:20:05 INFO CoarseGrainedExecutorBackend: Connecting to driver: spark://CoarseGrainedScheduler@spark-pi-driver-svc.spark-jobs.svc:7078\n" +
							"Exception in thread \"main\" java.lang.reflect.UndeclaredThrowableException\n" +
							"\tat org.apache.spark.deploy.SparkHadoopUtil.runAsSparkUser(SparkHadoopUtil.scala:66)\n" +
							"Caused by: java.io.IOException: Failed to connect to spark-pi-driver-svc.spark-jobs.svc/10.0.0.12:7078\n" +
							"\tat org.apache.spark.network.client.TransportClientFactory.createClient(TransportClientFactory.java:294)\n",
					}},
				}},
			}
		})},
		{name: "new-spark-4.3", setup: then(fresh(spark43), networkPolicies)},
		// The registration does not declare NetworkPolicies: Spark 4.3 without its policy.
		{name: "new-spark-4.3-no-networkpolicy-child", setup: fresh(spark43)},
		{name: "failed-spark-4.3-exit-exception", setup: then(runningFrom(then(fresh(spark43), networkPolicies), 2), func(w *world) {
			w.driverExited(1, "Error")
			metadata := w.driverPod()["metadata"].(map[string]any)
			metadata["annotations"] = map[string]any{exitExceptionAnnotation: "java.lang.IllegalStateException: table sales.orders not found\n" +
				"\tat org.example.Etl$.main(Etl.scala:12)\n" +
				"Caused by: java.io.FileNotFoundException: s3a://lake/sales/orders/_delta_log\n" +
				"\tat org.apache.hadoop.fs.s3a.S3AFileSystem.getFileStatus(S3AFileSystem.java:3866)\n"}
		})},
		{name: "completed-spark-4.3-networkpolicy-released", setup: then(runningFrom(then(fresh(spark43), networkPolicies), 2), func(w *world) {
			w.driverExited(0, "Completed")
			w.settle()
		})},
		{name: "new-ui-http-route", setup: then(fresh(sparkPi+uiRoute), httpRoutes)},
		// The registration does not declare HTTPRoutes: the UI keeps its Service only.
		{name: "new-ui-http-route-not-declared", setup: fresh(sparkPi + uiRoute)},
		{name: "new-ui-http-route-operator-default", setup: then(fresh(sparkPi), func(w *world) { httpRoutes(w); routeDefaults(w) })},
		{name: "new-ui-http-route-no-gateway", setup: then(fresh(sparkPi+"  sparkUIOptions:\n    httpRoute:\n      hostnames: [spark.example.com]\n"), httpRoutes)},
		{name: "new-driver-port-grpc-route", setup: then(fresh(sparkPi+connectPortRoute), gatewayRoutes)},
		{name: "running-ui-http-route", setup: runningFrom(then(fresh(sparkPi+uiRoute), httpRoutes), 2)},
		{name: "completed-ui-http-route-retain-never-released", setup: then(runningFrom(then(fresh(sparkPi+uiRoute+"  resourceRetainPolicy: Never\n"), httpRoutes), 2), func(w *world) {
			w.driverExited(0, "Completed")
			w.settle()
		})},
		{name: "running-driver-from-older-release", setup: then(running(sparkPi, 2), builtByOlderRelease)},
		{name: "failed-oomkilled", setup: then(running(sparkPi, 2), func(w *world) { w.driverExited(137, "OOMKilled") })},
		{name: "failed-evicted", setup: then(running(sparkPi, 2), func(w *world) {
			w.setDriverStatus(corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: ephemeral-storage."})
		})},
		{name: "failed-onfailure-retry", setup: then(running(withRestart(sparkPi, onFailure), 2), failed)},
		{name: "failed-onfailure-retry-released", setup: then(running(withRestart(sparkPi, onFailure), 2), func(w *world) {
			failed(w)
			require.NoError(w.t, w.sync())
		})},
		{name: "failing-waiting-interval", setup: then(retrying, func(w *world) { w.advance(5 * time.Second) })},
		{name: "failing-interval-over", setup: then(retrying, func(w *world) { w.advance(10 * time.Second) })},
		{name: "always-succeeded", setup: then(running(withRestart(sparkPi, "    type: Always\n"), 2), func(w *world) { w.driverExited(0, "Completed") })},
		{name: "spec-changed-while-running", setup: then(running(sparkPi, 2), func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"20000"} })
		})},
		{name: "invalidating-children-gone", setup: then(running(sparkPi, 2), func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"20000"} })
			require.NoError(w.t, w.sync())
			w.execs = map[string]map[string]any{}
		})},
		{name: "metadata-edit-while-running", setup: then(running(sparkPi, 2), func(w *world) {
			w.app.Labels = map[string]string{"team": "analytics"}
		})},
		{name: "invalid-edit-while-running", setup: then(running(sparkPi, 2), func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Executor.Memory = ptr("lots") })
		})},
		{name: "driver-missing-first-seen", setup: then(running(sparkPi, 2), func(w *world) { w.children[keyPod] = map[string]map[string]any{} })},
		{name: "driver-missing-after-grace", setup: then(running(sparkPi, 2), func(w *world) {
			w.children[keyPod] = map[string]map[string]any{}
			w.settle()
			w.advance(10 * time.Second)
		})},
		{name: "driver-start-timeout", setup: then(fresh(sparkPi+"  timeouts:\n    driverStartSeconds: 120\n"), func(w *world) { w.settle(); w.advance(2 * time.Minute) })},
		{name: "driver-ready-timeout-at-maximum", setup: then(fresh(sparkPi+"  timeouts:\n    driverReadySeconds: 315360000\n"), notReady)},
		// As stored before the CRD had a maximum: reported, and the attempt goes on.
		{name: "driver-ready-timeout-over-maximum", setup: then(fresh(sparkPi), func(w *world) {
			notReady(w)
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) {
				s.Timeouts = &v1beta2.SparkApplicationTimeouts{DriverReadySeconds: ptr[int64](1e10)}
			})
		})},
		{name: "suspend-while-running", setup: then(running(sparkPi, 2), func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(true) })
		})},
		// Resumed while its children were going, the last of which is gone now: nothing but the
		// hook's own resync starts the next attempt.
		{name: "resumed-while-suspending", setup: then(running(sparkPi, 2), func(w *world) {
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(true) })
			require.NoError(w.t, w.sync())
			require.Equal(w.t, v1beta2.ApplicationStateSuspending, w.state())
			w.advance(time.Second)
			w.editSpec(func(s *v1beta2.SparkApplicationSpec) { s.Suspend = ptr(false) })
		})},
		{name: "foreign-running-driver", setup: then(running(sparkPi, 2), func(w *world) {
			w.driverPod()["metadata"].(map[string]any)["labels"].(map[string]any)["sparkoperator.k8s.io/submission-id"] = "someone-else"
		})},
		{name: "running", hook: "finalize", setup: running(sparkPi, 2)},
		{name: "children-gone", hook: "finalize", setup: then(running(sparkPi, 2), func(w *world) {
			for key := range w.children {
				w.children[key] = map[string]map[string]any{}
			}
		})},
		{name: "spark-pi", hook: "customize", setup: fresh(sparkPi)},
	}
}

// TestGoldenCases writes (with -update) or checks the request of every golden case, built by
// driving the in-test world to the moment the case records. TestGolden checks the responses.
func TestGoldenCases(t *testing.T) {
	cases := append(goldenCases(), edgeCases()...)
	cases = append(cases, safetyCases()...)
	cases = append(cases, refusalCases()...)
	cases = append(cases, exampleCases(t)...)
	cases = append(cases, kubeflowCases()...)
	for _, gc := range cases {
		hook := gc.hook
		if hook == "" {
			hook = "sync"
		}
		t.Run(hook+"/"+gc.name, func(t *testing.T) {
			w := gc.setup(t)
			var req any = w.request(hook == "finalize")
			if hook == "customize" {
				req = map[string]any{"parent": w.app}
			}
			body, err := json.MarshalIndent(req, "", "  ")
			require.NoError(t, err)
			dir := filepath.Join("..", "..", "testdata", hook, gc.name)
			if *update {
				require.NoError(t, os.MkdirAll(dir, 0o755))
			}
			compareGolden(t, filepath.Join(dir, "request.json"), append(body, '\n'))
			configFile := filepath.Join(dir, "config.json")
			if changed := configChanges(t, w.cfg); len(changed) > 0 {
				cfg, err := json.MarshalIndent(changed, "", "  ")
				require.NoError(t, err)
				compareGolden(t, configFile, append(cfg, '\n'))
			} else if *update {
				_ = os.Remove(configFile)
			}
			nowFile := filepath.Join(dir, "now.txt")
			if w.now.Equal(goldenNow) {
				if *update {
					_ = os.Remove(nowFile)
				}
				return
			}
			compareGolden(t, nowFile, []byte(w.now.Format(time.RFC3339)+"\n"))
		})
	}
}

// configChanges is what cfg sets differently from DefaultConfig, as JSON fields: a case's
// config.json names only the settings the case is about.
func configChanges(t *testing.T, cfg Config) map[string]any {
	t.Helper()
	var got, def map[string]any
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, cfg), &got))
	require.NoError(t, json.Unmarshal(coretest.MustJSON(t, DefaultConfig()), &def))
	return jsonChanges(got, def)
}

func jsonChanges(got, def map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range got {
		if reflect.DeepEqual(v, def[k]) {
			continue
		}
		inner, isObject := v.(map[string]any)
		innerDef, defIsObject := def[k].(map[string]any)
		if isObject && defIsObject {
			v = jsonChanges(inner, innerDef)
		}
		out[k] = v
	}
	return out
}

// neverCreated lets the submission grace of a driver Pod that the API server refuses run out,
// then the given part of the missing-driver grace.
func neverCreated(missingFor time.Duration) func(*world) {
	return func(w *world) {
		w.rejectPods = true
		w.settle()
		w.advance(31 * time.Second)
		if missingFor > 0 {
			w.settle()
			w.advance(missingFor)
		}
	}
}
