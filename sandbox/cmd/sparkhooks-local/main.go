// Command sparkhooks-local is the one-machine sandbox `make run` starts: a one-node Kubernetes
// cluster (the real kube-apiserver, kube-controller-manager and kube-scheduler, see
// sandbox/internal/stack) with sparkhooks installed by Helm from chart/, run by Metacontroller
// or its local stand-in. Its node is the process kubelet, which runs pods as local processes on
// the Spark images of .cache/spark-images, preparing one when a pod first names it (as a kubelet
// pulls), so `kubectl apply -f examples/spark-pi.yaml` runs real Spark; with --simulate, or where
// pods cannot run (not root, no namespaces), it is the simulated kubelet, which plays pods'
// phases without root and says so. docs/local.md lists what is real and where it differs from a
// cluster.
//
// It is a binary of its own so that etcd and the kubelets stay out of the `sparkhooks` image.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/reaper"
)

const usage = `usage: sparkhooks-local [flags]

Starts a one-machine Kubernetes cluster (kube-apiserver, kube-controller-manager, kube-scheduler:
make kube) with sparkhooks installed by Helm (make helm), run by Metacontroller or a local
stand-in (docs/local.md), and a kubelet that runs pods as local processes with real Spark (needs
root), preparing a Spark image when a pod first names it. With --simulate, or where pods cannot
run, the node plays the pods' phases instead, without root. With --operator kubeflow, the Kubeflow
Spark Operator's own chart is installed in place of sparkhooks', to compare. With
--apache-spark-application, the Apache operator's SparkApplication is served too. It needs kubectl.
Ctrl-C stops everything it started.

flags:
`

func main() {
	// Every container the kubelet starts begins as a copy of this binary, and so does the reaper.
	podinit.Reexec()
	reaper.Reexec()
	// With SIGPIPE caught, a write to a closed stdout or stderr (make run | tee, tee gone) fails
	// with EPIPE, which the terminal logs, instead of killing the sandbox before it cleans up.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// SIGHUP: the terminal closed.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "sparkhooks-local:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	return runSandbox(ctx, opts, stdout, stderr)
}

type options struct {
	dataDir    string
	keepData   bool // the user named the data dir: it outlives the run
	kubeconfig string
	apiAddr    string
	sparkhooks string
	images     string
	simulate   bool
	// realNode is the directory make node prints: the node is the real kubelet with containerd
	// instead of the process kubelet.
	realNode string
	// forcedSimulation is --simulate, as opposed to simulating for the reason simulationReason.
	forcedSimulation bool
	simulationReason string

	kubeBinDir           string
	helm                 string
	chart                string
	metacontroller       string
	metacontrollerChart  string
	metacontrollerValues string
	// operator is sparkhooks or kubeflow: the chart installed, ours or the Kubeflow Spark
	// Operator's from the release kubeflowOperator (its binary, entrypoint.sh and chart/).
	operator         string
	kubeflowOperator string
	readyFile        string
	// apache serves the Apache operator's SparkApplication too: its CRD, which the chart leaves
	// to the admin, and the chart value that renders its CompositeController.
	apache bool
}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("sparkhooks-local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	o := &options{}
	fs.StringVar(&o.dataDir, "data-dir", "", "keep the cluster's state (etcd, certificates, kubeconfig) here across restarts; default: a fresh temporary directory, removed on exit")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "write the kubeconfig here (default: kubeconfig in the data dir)")
	fs.StringVar(&o.apiAddr, "api-addr", "127.0.0.1:6443", "where the API server listens")
	fs.StringVar(&o.sparkhooks, "sparkhooks", "", "the sparkhooks binary that serves the hooks (default: sparkhooks next to this binary, else on PATH)")
	fs.StringVar(&o.images, "images", envOr("SPARK_IMAGES_DIR", filepath.Join(".cache", "spark-images")), "the local Spark images: those make spark-images prepared, and those pods' pulls prepare")
	fs.StringVar(&o.kubeBinDir, "kube-bin-dir", os.Getenv("KUBE_BIN_DIR"), "the directory of kube-apiserver, kube-controller-manager and kube-scheduler (make kube prints it)")
	fs.StringVar(&o.helm, "helm", os.Getenv("HELM"), "the helm binary that installs the charts (make helm prints it)")
	fs.StringVar(&o.chart, "chart", "chart", "the sparkhooks chart to install")
	fs.StringVar(&o.metacontroller, "metacontroller", os.Getenv("METACONTROLLER_BIN"), "the Metacontroller binary to run, from its own chart; empty: a local stand-in (docs/local.md)")
	fs.StringVar(&o.metacontrollerChart, "metacontroller-chart", "", "Metacontroller's chart (default: helm/metacontroller next to the binary)")
	fs.StringVar(&o.metacontrollerValues, "metacontroller-values", filepath.Join("chart", "metacontroller-values.yaml"), "the values Metacontroller's chart is installed with")
	fs.StringVar(&o.readyFile, "ready-file", "", "write the kubeconfig's path here once everything is up (for scripts and tests)")
	fs.StringVar(&o.operator, "operator", operatorSparkhooks, "the operator installed: sparkhooks, or kubeflow for the Kubeflow Spark Operator's own chart in its place, to compare (make run OPERATOR=kubeflow)")
	fs.StringVar(&o.kubeflowOperator, "kubeflow-operator", os.Getenv("KUBEFLOW_SPARK_OPERATOR"), "with --operator kubeflow: the Kubeflow Spark Operator release to run (its binary spark-operator, entrypoint.sh and chart/)")
	fs.BoolVar(&o.apache, "apache-spark-application", false, "serve the Apache operator's SparkApplication (spark.apache.org/v1) too: apply its CRD (crds/ next to --chart) and install the chart with apacheSparkApplication.enabled=true (make run APACHE=1; docs/apache.md)")
	fs.BoolVar(&o.simulate, "simulate", false, "play the pods' phases instead of running them, without root")
	fs.StringVar(&o.realNode, "real-node", "", "the directory make node prints: the node is the real kubelet with containerd and runc, kube-proxy and CoreDNS (docs/real-node.md) instead of the process kubelet, running the Spark images make spark-images prepared (make run NODE=containerd)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	o.keepData = o.dataDir != ""
	return o, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
