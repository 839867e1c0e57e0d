//go:build e2e

// Package e2e is the contract suite: sparkhooks end to end on the real control plane
// (sandbox/internal/stack: etcd, kube-apiserver, kube-controller-manager and kube-scheduler), with
// the chart installed by Helm and its hook server running as the chart's Pod on the process
// kubelet, with kubectl as the user. It runs under either controller:
//   - the stand-in (default): a contract controller per test namespace
//     (sandbox/internal/mcstandin) that calls the hooks as Metacontroller does and counts what it
//     does, so the tests also check syncs, answers that would have changed a child, and statuses
//     computed from a stale parent;
//   - the real Metacontroller (SPARKHOOKS_E2E_CONTROLLER=metacontroller, METACONTROLLER_BIN),
//     installed from its chart with the chart's registrations, for every namespace; the tests that
//     need a hook or registration of their own are skipped, the others check what the API server
//     saw (writes_test.go). A test that passes under one and fails under the other is a defect of
//     the stand-in or of our reading of Metacontroller.
//
// The test workloads run on a fake node that the scheduler places them on and that a fake kubelet
// per namespace plays (sandbox/e2e/harness): the tests decide when a driver starts, fails or is
// evicted.
//
// It needs root (the process kubelet). Run with `make e2e`, which runs it under both controllers
// when METACONTROLLER_BIN is set.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// repoRoot is the module root, relative to this package's directory (where go test runs).
const repoRoot = "../.."

// systemNode is the process kubelet's node, which runs the chart's Pods only: its taint keeps the
// test workloads off it, for the fake node.
const systemNode = "system"

var (
	sparkApplications          = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}
	scheduledSparkApplications = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "scheduledsparkapplications"}
)

// fakeNodeLabels are what the examples' placement asks of a node (an on-demand Linux amd64 node:
// examples/spark-pi-node-placement.yaml, spark-pi-spark2.yaml) and the pool the Kueue tests'
// flavor names: the fake node belongs to every pool they describe.
var fakeNodeLabels = map[string]string{
	corev1.LabelOSStable:         "linux",
	corev1.LabelArchStable:       "amd64",
	"karpenter.sh/capacity-type": "on-demand",
	"pool":                       "spark",
}

// suite is what TestMain starts once for all tests: the cluster with the chart installed.
// Tests only read it; each test works in a namespace of its own.
type suite struct {
	stack *stack.Stack
	// hookClient reaches the chart's hook Service at hooksURL, and other addresses (a test's
	// own hook server) as they are.
	hookClient *http.Client
	// metacontroller: the real Metacontroller runs the chart's registrations for every
	// namespace, instead of a stand-in per test.
	metacontroller bool
	binary         string // the sparkhooks binary the chart's Pod runs, for `sparkhooks gc`
	dir            string // the work directory: the cluster's state and logs
	// gatewayAPI: the cluster serves the Gateway API CRDs (SPARKHOOKS_GATEWAY_API_CRDS) and the
	// chart declares the routes (gatewayAPI.enabled), which Metacontroller then runs.
	gatewayAPI bool
}

var shared suite

func TestMain(m *testing.M) {
	// The process kubelet starts every container (the chart's hook server) as a copy of this
	// binary.
	podinit.Reexec()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) (code int) {
	suite, err := harness.Prepare("e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { code = suite.Close(code) }()
	shared.dir = suite.Dir
	logf := suite.Logf

	// SPARKHOOKS_E2E_BINARY runs a prebuilt binary (a release, say) instead of building this tree.
	binary := os.Getenv("SPARKHOOKS_E2E_BINARY")
	if binary == "" {
		if binary, err = suite.BuildSparkhooks(repoRoot, raceEnabled); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	shared.binary = binary

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	network, err := harness.NewNetwork(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer network.Close()
	options := stack.Options{
		Dir: filepath.Join(suite.Dir, "cluster"), KubeBinDir: suite.KubeBinDir, Helm: suite.Helm,
		Chart: filepath.Join(repoRoot, "chart"), Sparkhooks: binary,
		// Kubeflow's metrics too, which TestKubeflowDashboardQueriesOnTheCluster scrapes. The
		// chart's Pods on this node only: a Pod a rollout replaces (TestNamespaceSelector's helm
		// upgrade) would otherwise be spread to the fake node, where no kubelet runs it.
		ChartSet: []string{"replicaCount=1", "metrics.kubeflow.enabled=true", `nodeSelector.kubernetes\.io/hostname=` + systemNode},
		// The node runs the hook server only: the image the chart names is all it needs.
		Images: prockubelet.NewImageTable(nil), Network: network, NodeName: systemNode,
		NodeTaints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}},
		Logf:       logf,
	}
	// The Gateway API CRDs hack/gateway-api/build.sh fetches (make e2e exports their directory):
	// the routes the hooks build meet the real schemas, and the chart declares them, as a
	// cluster that serves the Gateway API would.
	if dir := os.Getenv(gatewayAPICRDsEnv); dir != "" {
		options.CRDs = append(options.CRDs, dir)
		options.ChartSet = append(options.ChartSet, "gatewayAPI.enabled=true")
		shared.gatewayAPI = true
	}
	// SPARKHOOKS_E2E_CONTROLLER=metacontroller runs the suite under the real Metacontroller
	// (METACONTROLLER_BIN) installed from its chart; by default the tests run a stand-in per
	// namespace, which counts what it does.
	switch controller := os.Getenv("SPARKHOOKS_E2E_CONTROLLER"); controller {
	case "", "stand-in":
		options.OwnControllers = true
	case "metacontroller":
		bin := os.Getenv("METACONTROLLER_BIN")
		if bin == "" {
			fmt.Fprintln(os.Stderr, "e2e: SPARKHOOKS_E2E_CONTROLLER=metacontroller needs METACONTROLLER_BIN (the Makefile finds ../shared/metacontroller)")
			return 1
		}
		options.Metacontroller, options.MetacontrollerChart = bin, filepath.Join(filepath.Dir(bin), "helm", "metacontroller")
		options.MetacontrollerValues = filepath.Join(repoRoot, "chart", "metacontroller-values.yaml")
		shared.metacontroller = true
	default:
		fmt.Fprintf(os.Stderr, "e2e: SPARKHOOKS_E2E_CONTROLLER=%q: want stand-in or metacontroller\n", controller)
		return 1
	}
	s, err := stack.Start(ctx, options)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the cluster:", err)
		return 1
	}
	defer s.Stop()
	shared.stack = s
	client, err := kubernetes.NewForConfig(s.Admin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	shared.hookClient = stack.ServiceHTTPClient(client)

	node, err := harness.RegisterNode(ctx, s.Admin, fakeNodeLabels)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	heartbeatCtx, stopHeartbeat := context.WithCancel(context.Background())
	heartbeatDone := make(chan struct{})
	go func() {
		defer close(heartbeatDone)
		node.Run(heartbeatCtx, logf)
	}()

	code = m.Run()
	stopHeartbeat()
	<-heartbeatDone
	if err := checkHookServer(client, code != 0); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: the hook server:", err)
		code = 1
	}
	return code
}

// hookServerSelector selects the chart's hook server Pods.
const hookServerSelector = "app.kubernetes.io/name=sparkhooks,app.kubernetes.io/instance=sparkhooks"

// checkHookServer fails the run when a hook server container restarted or its log has a data
// race report: a binary built with -race reports each race on stderr as it happens, and keeps
// serving. Each Pod's log is kept in the work directory, which goes with the Pod's own when the
// cluster stops; the last lines of the log of a Pod with a problem, or of every Pod with
// printLogs, go to stderr.
func checkHookServer(client kubernetes.Interface, printLogs bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := client.CoreV1().Pods(stack.SparkhooksNamespace).List(ctx, metav1.ListOptions{LabelSelector: hookServerSelector})
	if err != nil {
		return fmt.Errorf("listing its Pods: %w", err)
	}
	if len(pods.Items) == 0 {
		return fmt.Errorf("no Pod in namespace %s", stack.SparkhooksNamespace)
	}
	var problems []string
	for _, pod := range pods.Items {
		log, err := client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "sparkhooks"}).DoRaw(ctx)
		if err != nil {
			problems = append(problems, fmt.Sprintf("Pod %s: reading its log: %v", pod.Name, err))
			continue
		}
		if err := os.WriteFile(filepath.Join(shared.dir, "sparkhooks-"+pod.Name+".log"), log, 0o644); err != nil {
			problems = append(problems, fmt.Sprintf("Pod %s: keeping its log: %v", pod.Name, err))
		}
		found := len(problems)
		for _, c := range pod.Status.ContainerStatuses {
			if c.RestartCount > 0 {
				problems = append(problems, fmt.Sprintf("Pod %s: container %s restarted %d times (last state %+v)", pod.Name, c.Name, c.RestartCount, c.LastTerminationState))
			}
		}
		if strings.Contains(string(log), "WARNING: DATA RACE") {
			problems = append(problems, fmt.Sprintf("Pod %s: the race detector reported a data race", pod.Name))
		}
		if printLogs || len(problems) > found {
			fmt.Fprintf(os.Stderr, "--- last lines of the log of %s/%s ---\n%s\n", pod.Namespace, pod.Name, harness.Tail(string(log), 60))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}
