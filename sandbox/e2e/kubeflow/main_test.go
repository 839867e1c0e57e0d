//go:build e2e

// Package kubeflow is the differential suite (issue 41): a corpus of SparkApplications (corpus_test.go),
// each run with real Spark under the Kubeflow Spark Operator's own chart and under sparkhooks with
// the real Metacontroller, on one cluster, one operator at a time, and what each made of it
// compared (sandbox/internal/compat): the driver and executor Pods, the Spark properties the driver
// ran with, the Services and ConfigMaps, the states and the final status. Every difference must
// be a row of the table in docs/kubeflow-compat.md.
//
// The cluster is the process kubelet on the real control plane, as in sandbox/e2e/spark; the
// operators go in and out with helm (stack.UninstallOperator, InstallKubeflow, InstallSparkhooks).
// make e2e runs the cases marked ci; make e2e-kubeflow runs them all (SPARKHOOKS_KUBEFLOW_CORPUS=all).
// It needs root, METACONTROLLER_BIN and KUBEFLOW_SPARK_OPERATOR.
package kubeflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/sparkimages"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

const repoRoot = "../../.."

// shared is what TestMain starts: the cluster, with sparkhooks installed first, and Kubeflow's
// release.
var shared struct {
	stack    *stack.Stack
	kubeflow *stack.KubeflowOperator
	// release is the Kubeflow Spark Operator's directory (examples/, test/e2e/).
	release string
	dir     string
}

func TestMain(m *testing.M) {
	// Every container the kubelet starts begins as a copy of this binary.
	podinit.Reexec()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) (code int) {
	release, metacontroller := os.Getenv("KUBEFLOW_SPARK_OPERATOR"), os.Getenv("METACONTROLLER_BIN")
	if release == "" || metacontroller == "" {
		fmt.Fprintln(os.Stderr, "kubeflow e2e: skipped: KUBEFLOW_SPARK_OPERATOR and METACONTROLLER_BIN must name the Kubeflow Spark Operator's release and Metacontroller (make finds them in ../shared)")
		return 0
	}
	suite, err := harness.Prepare("kubeflow e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { code = suite.Close(code) }()
	// Both operators' pods, and Kubeflow's spark-submit, run on the same quick-start images, so
	// the comparison is even.
	imagesDir, images, err := harness.SparkImages(repoRoot)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeflow e2e:", err)
		return 1
	}
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
		fmt.Fprintln(os.Stderr, "kubeflow e2e:", err)
		return 1
	}
	defer network.Close()
	script, _ := filepath.Abs(filepath.Join(repoRoot, "hack", "spark-images", "build.sh"))
	s, err := stack.Start(ctx, stack.Options{
		Dir: filepath.Join(suite.Dir, "cluster"), KubeBinDir: suite.KubeBinDir, Helm: suite.Helm,
		Chart: filepath.Join(repoRoot, "chart"), ChartSet: []string{"replicaCount=1"}, Sparkhooks: binary,
		Metacontroller: metacontroller, MetacontrollerChart: filepath.Join(filepath.Dir(metacontroller), "helm", "metacontroller"),
		MetacontrollerValues: filepath.Join(repoRoot, "chart", "metacontroller-values.yaml"),
		Images:               images, Network: network, NodeName: "kubeflow-node", Logf: logf,
		// Kubeflow's controller image, and any Spark release an application names, are prepared
		// when a pod first names them, as make run OPERATOR=kubeflow does.
		ImageSource: harness.QuickStartSource{ImageSource: &sparkimages.Builder{Script: script, Dir: imagesDir, Logf: logf, KubeflowOperator: release}},
		// As in the sandbox: the examples ask for more cores than the machine has; nothing
		// limits them.
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeflow e2e: starting the cluster:", err)
		return 1
	}
	defer s.Stop()
	shared.stack, shared.release, shared.dir = s, release, suite.Dir
	// Kubeflow's chart as its README installs it, with its defaults (its driver account
	// spark-operator-spark, its webhook, its UI Services).
	shared.kubeflow = &stack.KubeflowOperator{Chart: filepath.Join(release, "chart")}
	return m.Run()
}
