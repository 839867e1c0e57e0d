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
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/klogsink"
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

func runMain(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: the process kubelet that runs the chart's hook server needs root (mount and network namespaces)")
		return 1
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: kubectl is needed on PATH (Debian/Ubuntu: apt-get install kubectl):", err)
		return 1
	}
	kubeBinDir, helm := os.Getenv("KUBE_BIN_DIR"), os.Getenv("HELM")
	if kubeBinDir == "" || helm == "" {
		fmt.Fprintln(os.Stderr, "e2e: KUBE_BIN_DIR and HELM must name the control plane and Helm (make kube, make helm): make e2e sets them")
		return 1
	}
	dir, err := os.MkdirTemp("", "sparkhooks-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// SPARKHOOKS_E2E_KEEP=1 keeps the work directory (logs, kubeconfig) after the run.
	keep := os.Getenv("SPARKHOOKS_E2E_KEEP") == "1"
	defer func() {
		if keep {
			fmt.Fprintf(os.Stderr, "e2e: work directory kept: %s\n", dir)
			return
		}
		os.RemoveAll(dir)
	}()
	shared.dir = dir
	logFile, err := os.Create(filepath.Join(dir, "cluster.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer logFile.Close()
	klogsink.Redirect(logFile)
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(logFile, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}

	// SPARKHOOKS_E2E_BINARY runs a prebuilt binary (a release, say) instead of building this tree.
	binary := os.Getenv("SPARKHOOKS_E2E_BINARY")
	if binary == "" {
		binary = filepath.Join(dir, "sparkhooks")
		// Under go test -race the server is built with the race detector too: the hooks
		// answering concurrent calls are what the suite should check for races most. The
		// build is bounded by go test's -timeout only, as a cold race build takes minutes.
		args := []string{"build", "-C", repoRoot, "-o", binary}
		if raceEnabled {
			args = append(args, "-race")
		}
		if out, err := exec.Command("go", append(args, "./cmd/sparkhooks")...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building sparkhooks: %v\n%s", err, out)
			return 1
		}
	}
	shared.binary = binary

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	network, err := prockubelet.NewNetwork(ctx, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer network.Close()
	options := stack.Options{
		Dir: filepath.Join(dir, "cluster"), KubeBinDir: kubeBinDir, Helm: helm,
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

	code := m.Run()
	stopHeartbeat()
	<-heartbeatDone
	if err := checkHookServer(client, code != 0); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: the hook server:", err)
		code = 1
	}
	if code != 0 && !keep {
		fmt.Fprintln(os.Stderr, "e2e: set SPARKHOOKS_E2E_KEEP=1 to keep the logs (cluster.log, cluster/logs/, sparkhooks-*.log) of a run")
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
			fmt.Fprintf(os.Stderr, "--- last lines of the log of %s/%s ---\n%s\n", pod.Namespace, pod.Name, tail(string(log), 60))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// tail is the last n lines of text.
func tail(text string, n int) string {
	var lines []string
	scanner := bufio.NewScanner(strings.NewReader(text))
	scanner.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
