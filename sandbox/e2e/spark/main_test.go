//go:build e2e

// Package spark runs real Spark through sparkhooks on the real control plane (sandbox/internal/stack):
// kube-apiserver, kube-controller-manager and kube-scheduler, the chart installed with Helm, the
// real Metacontroller from its own chart when METACONTROLLER_BIN names it (else the local
// stand-in), and the process kubelet (sandbox/internal/prockubelet) as the node, which runs every pod —
// the hook server and Metacontroller themselves, drivers, executors, Spark Connect servers,
// standalone masters and workers — as local processes on the image layers `make spark-images`
// prepares. Nothing here is simulated: the Spark driver reads the properties and pod template the
// hook wrote, asks the API server for its executors as the chart's spark account, and the tests
// read what Spark printed. The images' JVMs compile with C1 only (harness.QuickStartJVMs), to fit two cores.
//
// It needs root (namespaces, mounts, a bridge). Run with `make e2e`.
package spark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

const repoRoot = "../../.."

// nodeName is the one node of the cluster.
const nodeName = "spark-node"

var (
	sparkApplications = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}
	sparkConnects     = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1alpha1", Resource: "sparkconnects"}
	sparkClusters     = schema.GroupVersionResource{Group: "spark.apache.org", Version: "v1", Resource: "sparkclusters"}
	// apacheApplications are the Apache operator's SparkApplications.
	apacheApplications = schema.GroupVersionResource{Group: "spark.apache.org", Version: "v1", Resource: "sparkapplications"}
	pods               = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// suite is what TestMain starts for all tests; each test works in a namespace of its own.
type suite struct {
	stack     *stack.Stack
	imagesDir string
	dir       string
	binary    string // the sparkhooks binary the chart's Deployment runs
	egressErr error  // why pods cannot reach beyond the machine, if they cannot
	// hostIP is this machine's address on the pod network, where pods reach a server the test
	// runs.
	hostIP string
}

var shared suite

func TestMain(m *testing.M) {
	// Every container the kubelet starts begins as a copy of this binary.
	podinit.Reexec()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) (code int) {
	suite, err := harness.Prepare("spark e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { code = suite.Close(code) }()
	imagesDir, images, err := harness.SparkImages(repoRoot)
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	shared.dir, shared.imagesDir = suite.Dir, imagesDir
	logf := suite.Logf
	binary, err := suite.BuildSparkhooks(repoRoot, raceEnabled)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	network, err := harness.NewNetwork(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	defer network.Close()
	shared.hostIP = network.Gateway.String()
	// The Kubeflow SDK's servers fetch the Spark Connect jar from Maven Central, as in a
	// cluster with outbound access; the other tests need no egress.
	shared.egressErr = network.EnableEgress(ctx, "/etc/resolv.conf")
	metacontroller := os.Getenv("METACONTROLLER_BIN")
	// As in the sandbox: tests ask for more cores than the machine has; nothing limits them.
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")}
	realNode, sparkhooksImage := "", ""
	if os.Getenv("SPARKHOOKS_E2E_NODE") == "containerd" {
		// The real node (docs/real-node.md): the machine's cores, limits enforced.
		if realNode, capacity = os.Getenv("SPARKHOOKS_NODE_DIR"), nil; realNode == "" {
			fmt.Fprintln(os.Stderr, "spark e2e: SPARKHOOKS_E2E_NODE=containerd needs SPARKHOOKS_NODE_DIR (make node)")
			return 1
		}
		// The hook server runs from the production image, as on a cluster.
		if sparkhooksImage = os.Getenv("SPARKHOOKS_IMAGE_ARCHIVE"); sparkhooksImage == "" {
			fmt.Fprintln(os.Stderr, "spark e2e: SPARKHOOKS_E2E_NODE=containerd needs SPARKHOOKS_IMAGE_ARCHIVE (make image's bin/image.tar)")
			return 1
		}
		appTimeout *= 3
	}
	// Apache's SparkApplication is opt-in (chart/values.yaml): the suite serves it, for Apache's
	// own tests, as an admin would, its CRD applied before the chart.
	apacheCRD, err := optInCRDs(suite.Dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e:", err)
		return 1
	}
	s, err := stack.Start(ctx, stack.Options{
		Dir: filepath.Join(suite.Dir, "cluster"), KubeBinDir: suite.KubeBinDir, Helm: suite.Helm,
		Chart: filepath.Join(repoRoot, "chart"), ChartSet: []string{"replicaCount=1", "apacheSparkApplication.enabled=true"}, Sparkhooks: binary,
		CRDs:           []string{apacheCRD},
		Metacontroller: metacontroller, MetacontrollerChart: filepath.Join(filepath.Dir(metacontroller), "helm", "metacontroller"),
		MetacontrollerValues: filepath.Join(repoRoot, "chart", "metacontroller-values.yaml"),
		Images:               images, Network: network, NodeName: nodeName, Logf: logf,
		Capacity: capacity, RealNode: realNode, SparkhooksImage: sparkhooksImage,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "spark e2e: starting the cluster:", err)
		return 1
	}
	defer s.Stop()
	shared.stack, shared.binary = s, binary
	fmt.Fprintf(os.Stderr, "spark e2e: the controller is %s\n", s.Controller)

	return m.Run()
}

// optInCRDs is a directory under dir with the CRDs the chart leaves to the admin: Apache's
// SparkApplication.
func optInCRDs(dir string) (string, error) {
	crd, err := os.ReadFile(filepath.Join(repoRoot, "crds", "spark.apache.org_sparkapplications.yaml"))
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "opt-in-crds")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return out, os.WriteFile(filepath.Join(out, "spark.apache.org_sparkapplications.yaml"), crd, 0o644)
}
