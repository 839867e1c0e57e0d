//go:build e2e

// Package spark runs real Spark through sparkhooks: the hook server binary behind the
// Metacontroller-contract controller, an in-process API server, and the process kubelet
// (internal/prockubelet), which runs every pod — drivers, executors, Spark Connect servers,
// standalone masters and workers — as local processes on the image layers `make spark-images`
// prepares. Nothing here is simulated: the Spark driver reads the properties and pod template the
// hook wrote, asks the API server for its executors, and the tests read what Spark printed.
//
// It needs root (namespaces, mounts, a bridge). Run with `make e2e`.
package spark

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/internal/localcluster"
	"github.com/sparkhooks/sparkhooks/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/internal/prockubelet/podinit"
)

const repoRoot = "../../.."

// nodeName is the one node of the cluster.
const nodeName = "spark-node"

var (
	sparkApplications = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}
	sparkConnects     = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1alpha1", Resource: "sparkconnects"}
	sparkClusters     = schema.GroupVersionResource{Group: "spark.apache.org", Version: "v1", Resource: "sparkclusters"}
	pods              = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// registrations are the CompositeControllers of metacontroller/ the suite runs.
var registrations = []string{"sparkapplication-controller.yaml", "sparkconnect-controller.yaml", "sparkcluster-controller.yaml"}

// suite is what TestMain starts for all tests; each test works in a namespace of its own.
type suite struct {
	env         *localcluster.Env
	kubelet     *prockubelet.Kubelet
	network     *prockubelet.Network
	controllers map[string]*localcluster.ContractController
	imagesDir   string
	dir         string
	egressErr   error // why pods cannot reach beyond the machine, if they cannot
}

var shared suite

func TestMain(m *testing.M) {
	// Every container the kubelet starts begins as a copy of this binary.
	podinit.Reexec()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "spark e2e: the process kubelet needs root (mount and network namespaces)")
		return 1
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e: kubectl is needed on PATH:", err)
		return 1
	}
	imagesDir := os.Getenv("SPARK_IMAGES_DIR")
	if imagesDir == "" {
		imagesDir = filepath.Join(repoRoot, ".cache", "spark-images")
	}
	imagesDir, _ = filepath.Abs(imagesDir)
	images, err := prockubelet.LoadImageTable(filepath.Join(imagesDir, "images.json"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "spark e2e: %v\nPrepare the local Spark images first: make spark-images\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "sparkhooks-spark-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	keep := os.Getenv("SPARKHOOKS_E2E_KEEP") == "1"
	defer func() {
		if keep {
			fmt.Fprintf(os.Stderr, "spark e2e: work directory kept: %s\n", dir)
			return
		}
		os.RemoveAll(dir)
	}()
	shared.dir, shared.imagesDir = dir, imagesDir
	logFile, err := os.Create(filepath.Join(dir, "cluster.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	defer logFile.Close()
	localcluster.RedirectLogs(logFile)
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(logFile, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}

	binary := filepath.Join(dir, "sparkhooks")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, repoRoot+"/cmd/sparkhooks")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "spark e2e: building sparkhooks: %v\n%s", err, out)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	network, err := prockubelet.NewNetwork(ctx, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))))
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	defer network.Close()
	// The Kubeflow SDK's servers fetch the Spark Connect jar from Maven Central, as in a
	// cluster with outbound access; the other tests need no egress.
	shared.egressErr = network.EnableEgress(ctx, "/etc/resolv.conf")
	env, err := localcluster.StartEnv(ctx, localcluster.EnvOptions{
		Dir:         dir,
		CRDDir:      filepath.Join(repoRoot, "crds"),
		GCResources: []schema.GroupVersionResource{sparkApplications, sparkConnects, sparkClusters},
		ServingIPs:  []net.IP{network.Gateway.AsSlice()},
		Logf:        logf,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e: starting the cluster:", err)
		return 1
	}
	defer env.Stop()
	hooks, err := localcluster.StartHookServer(ctx, binary, filepath.Join(dir, "sparkhooks.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e: starting sparkhooks:", err)
		return 1
	}
	defer func() { _ = hooks.Stop() }()

	runCtx, stop := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() {
		stop()
		running.Wait()
	}()
	cfg := env.API.ClientConfig()
	kubelet, err := newKubelet(cfg, env, images, network, filepath.Join(dir, "kubelet"), logf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	env.API.SetLogSource(kubelet.Logs)
	running.Add(1)
	go func() {
		defer running.Done()
		if err := kubelet.Run(runCtx); err != nil {
			logf("kubelet: %v", err)
		}
	}()
	statefulSets, err := localcluster.NewStatefulSetController(cfg, logf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	running.Add(1)
	go func() {
		defer running.Done()
		statefulSets.Run(runCtx)
	}()
	shared.controllers = map[string]*localcluster.ContractController{}
	for _, file := range registrations {
		cc, err := localcluster.LoadCompositeController(filepath.Join(repoRoot, "metacontroller", file), hooks.URL)
		if err != nil {
			fmt.Fprintln(os.Stderr, "spark e2e:", err)
			return 1
		}
		ctl, err := localcluster.NewContractController(cfg, cc, localcluster.ControllerOptions{Logf: logf})
		if err != nil {
			fmt.Fprintln(os.Stderr, "spark e2e:", err)
			return 1
		}
		shared.controllers[cc.Metadata.Name] = ctl
		running.Add(1)
		go func() {
			defer running.Done()
			if err := ctl.Run(runCtx); err != nil {
				logf("contract controller %s: %v", cc.Metadata.Name, err)
			}
		}()
	}
	shared.env, shared.kubelet, shared.network = env, kubelet, network

	code := m.Run()
	if code != 0 && !keep {
		fmt.Fprintln(os.Stderr, "spark e2e: set SPARKHOOKS_E2E_KEEP=1 to keep the logs (cluster.log, sparkhooks.log, pod logs) of a run")
	}
	return code
}

func newKubelet(cfg *restclient.Config, env *localcluster.Env, images *prockubelet.ImageTable, network *prockubelet.Network, stateDir string, logf func(string, ...any)) (*prockubelet.Kubelet, error) {
	client, err := kubernetesClient(cfg)
	if err != nil {
		return nil, err
	}
	return prockubelet.New(prockubelet.Config{
		Client:    client,
		NodeName:  nodeName,
		Images:    images,
		Network:   network,
		StateDir:  stateDir,
		APIServer: env.API.Address,
		CACert:    env.API.ServingCA,
		Tokens:    env.API,
		Logf:      logf,
	})
}
