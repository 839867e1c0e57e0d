//go:build e2e

// Package realnode checks what only a real node does, on the real control plane
// (sandbox/internal/stack) with the real node (sandbox/internal/realnode: the kubelet, containerd
// and runc, kube-proxy, CoreDNS) instead of the process kubelet: memory limits the kernel
// enforces, names the cluster DNS answers, Service IPs kube-proxy routes, and real Spark through
// the chart on images imported into containerd.
//
// It needs root and what `make node` and `make spark-images` prepare; SPARKHOOKS_NODE_DIR names
// the former (make e2e sets it).
package realnode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/localcluster"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

const (
	repoRoot = "../../.."
	nodeName = "real-node"
)

var shared struct {
	stack  *stack.Stack
	client kubernetes.Interface
	dir    string
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "realnode e2e: "+format+"\n", args...)
		return 1
	}
	nodeDir, kubeBinDir, helm := os.Getenv("SPARKHOOKS_NODE_DIR"), os.Getenv("KUBE_BIN_DIR"), os.Getenv("HELM")
	if nodeDir == "" || kubeBinDir == "" || helm == "" {
		return fail("SPARKHOOKS_NODE_DIR, KUBE_BIN_DIR and HELM must name the node, the control plane and Helm: make e2e sets them (make node, make kube, make helm)")
	}
	if os.Geteuid() != 0 {
		return fail("the real node needs root")
	}
	imagesDir := os.Getenv("SPARK_IMAGES_DIR")
	if imagesDir == "" {
		imagesDir = filepath.Join(repoRoot, ".cache", "spark-images")
	}
	imagesDir, _ = filepath.Abs(imagesDir)
	images, err := prockubelet.LoadImageTable(filepath.Join(imagesDir, "images.json"))
	if err != nil {
		return fail("%v\nPrepare the local Spark images first: make spark-images", err)
	}
	dir, err := os.MkdirTemp("", "sparkhooks-realnode-e2e-")
	if err != nil {
		return fail("%v", err)
	}
	keep := os.Getenv("SPARKHOOKS_E2E_KEEP") == "1"
	defer func() {
		if keep {
			fmt.Fprintf(os.Stderr, "realnode e2e: work directory kept: %s\n", dir)
			return
		}
		os.RemoveAll(dir)
	}()
	shared.dir = dir
	logFile, err := os.Create(filepath.Join(dir, "cluster.log"))
	if err != nil {
		return fail("%v", err)
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
	build := exec.Command("go", "build", "-C", repoRoot, "-o", binary, "./cmd/sparkhooks")
	// Static, as the Dockerfile builds the image's binary.
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fail("building sparkhooks: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	network, err := prockubelet.NewNetwork(ctx, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))))
	if err != nil {
		return fail("%v", err)
	}
	defer network.Close()
	if err := network.EnableEgress(ctx, "/etc/resolv.conf"); err != nil {
		logf("no egress: %v", err)
	}
	metacontroller := os.Getenv("METACONTROLLER_BIN")
	begin := time.Now()
	s, err := stack.Start(ctx, stack.Options{
		Dir: filepath.Join(dir, "cluster"), KubeBinDir: kubeBinDir, Helm: helm,
		Chart: filepath.Join(repoRoot, "chart"), ChartSet: []string{"replicaCount=1"}, Sparkhooks: binary,
		Metacontroller: metacontroller, MetacontrollerChart: filepath.Join(filepath.Dir(metacontroller), "helm", "metacontroller"),
		MetacontrollerValues: filepath.Join(repoRoot, "chart", "metacontroller-values.yaml"),
		Images:               images, Network: network, NodeName: nodeName, RealNode: nodeDir, Logf: logf,
	})
	if err != nil {
		return fail("starting the cluster: %v (logs in %s)", err, dir)
	}
	defer s.Stop()
	fmt.Fprintf(os.Stderr, "realnode e2e: the cluster is up in %s, the controller is %s\n", time.Since(begin).Round(100*time.Millisecond), s.Controller)
	shared.stack = s
	if shared.client, err = kubernetes.NewForConfig(s.Admin); err != nil {
		return fail("%v", err)
	}
	code := m.Run()
	if code != 0 && !keep {
		fmt.Fprintln(os.Stderr, "realnode e2e: set SPARKHOOKS_E2E_KEEP=1 to keep the logs of a run")
	}
	return code
}
