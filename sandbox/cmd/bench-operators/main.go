// Command bench-operators is make bench-operators (docs/benchmarks.md): on the sandbox's real
// control plane with simulated pods and the real Metacontroller as a host process, it creates N
// applications at once through each operator in turn, on the same cluster, and measures how long
// until every driver Pod exists and every application has ended, the create-to-driver latency,
// the CPU and memory the operator's processes and the whole machine use, and the API requests per
// application. The operators: sparkhooks (its hook server and Metacontroller), the ceiling (a
// CompositeController whose hook makes one Pod and copies its phase: Metacontroller and the API
// server alone) and, last, the Kubeflow Spark Operator (its controller, with the spark-submit JVMs
// it runs, and its webhook, as host processes). It prints one Markdown table and the ratios of
// sparkhooks to the others.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/opbench"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

var sparkApplications = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}

type options struct {
	sizes                                                     []int
	timeout                                                   time.Duration
	kubeBinDir, helm, chart, sparkhooks                       string
	metacontroller, metacontrollerChart, metacontrollerValues string
	// kubeflow is the Kubeflow Spark Operator's release and kubeflowRoot the root of its image
	// (Spark and Java for its spark-submit); kubeflowMax the largest N it runs.
	kubeflow, kubeflowRoot string
	kubeflowMax            int
	keep                   bool
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == ceilingHookArg {
		fmt.Fprintln(os.Stderr, "ceiling hook:", serveCeiling(os.Args[2]))
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench-operators:", err)
		}
		os.Exit(1)
	}
}

func parse(args []string) (*options, error) {
	fs := flag.NewFlagSet("bench-operators", flag.ContinueOnError)
	o := &options{}
	sizes := fs.String("n", "100", "how many applications each run creates at once, comma-separated for several runs")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Minute, "how long one operator's run may take")
	fs.StringVar(&o.kubeBinDir, "kube-bin-dir", os.Getenv("KUBE_BIN_DIR"), "the control plane's binaries (make kube)")
	fs.StringVar(&o.helm, "helm", os.Getenv("HELM"), "helm (make helm)")
	fs.StringVar(&o.chart, "chart", "chart", "sparkhooks' chart")
	fs.StringVar(&o.sparkhooks, "sparkhooks", "bin/sparkhooks", "the sparkhooks binary the hook server runs")
	fs.StringVar(&o.metacontroller, "metacontroller", os.Getenv("METACONTROLLER_BIN"), "the Metacontroller binary")
	fs.StringVar(&o.metacontrollerChart, "metacontroller-chart", "", "Metacontroller's chart (default: helm/metacontroller next to the binary)")
	fs.StringVar(&o.metacontrollerValues, "metacontroller-values", filepath.Join("chart", "metacontroller-values.yaml"), "the values Metacontroller's chart is installed with")
	fs.StringVar(&o.kubeflow, "kubeflow-operator", os.Getenv("KUBEFLOW_SPARK_OPERATOR"), "the Kubeflow Spark Operator's release (spark-operator, chart/); empty: sparkhooks and the ceiling only")
	fs.StringVar(&o.kubeflowRoot, "kubeflow-image-root", filepath.Join(os.Getenv("SPARK_IMAGES_DIR"), "kubeflow-spark-operator-2.5.2"), "the root file system of the operator's image (make spark-images), whose Spark and Java its spark-submit runs with")
	fs.IntVar(&o.kubeflowMax, "kubeflow-max-n", 100, "the largest N the Kubeflow Spark Operator runs")
	fs.BoolVar(&o.keep, "keep", false, "keep the cluster's work directory (logs) after the run")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-n %q: want positive counts separated by commas", *sizes)
		}
		o.sizes = append(o.sizes, n)
	}
	if o.metacontroller == "" {
		return nil, errors.New("-metacontroller (METACONTROLLER_BIN) must name the real Metacontroller: the benchmark measures it, not the stand-in")
	}
	if o.metacontrollerChart == "" {
		o.metacontrollerChart = filepath.Join(filepath.Dir(o.metacontroller), "helm", "metacontroller")
	}
	for _, p := range []*string{&o.chart, &o.sparkhooks, &o.metacontroller, &o.metacontrollerChart, &o.metacontrollerValues, &o.kubeflow, &o.kubeflowRoot} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	if o.kubeflow != "" {
		// Checked before the cluster starts, not after sparkhooks' runs.
		for _, f := range []string{filepath.Join(o.kubeflow, "spark-operator"), filepath.Join(o.kubeflowRoot, "opt", "spark", "bin", "spark-submit"), filepath.Join(o.kubeflowRoot, "opt", "java", "openjdk", "bin", "java")} {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("the Kubeflow Spark Operator needs %s (its release, and its image's root from make spark-images): %w", f, err)
			}
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sparkhooks-bench-operators-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintf(os.Stderr, "bench-operators: work directory %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	logFile, err := os.Create(filepath.Join(dir, "bench.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	logf := func(format string, args ...any) {
		fmt.Fprintf(logFile, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}
	apiAddr, err := freeAddress()
	if err != nil {
		return err
	}
	s, err := stack.Start(ctx, stack.Options{
		Dir: filepath.Join(dir, "cluster"), APIAddress: apiAddr, KubeBinDir: o.kubeBinDir, Helm: o.helm,
		Chart: o.chart, Sparkhooks: o.sparkhooks, ChartSet: []string{"replicaCount=1"},
		Metacontroller: o.metacontroller, MetacontrollerChart: o.metacontrollerChart, MetacontrollerValues: o.metacontrollerValues,
		NodeName: "bench", Logf: logf,
		// Room for every driver of the largest run at once: simulated pods use nothing.
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("4Ti"), corev1.ResourcePods: resource.MustParse("5000")},
		// As make run's simulated node: a second to start, five to run.
		Simulated: &stack.SimulatedNode{StartDelay: time.Second, RunTime: 5 * time.Second},
	})
	if err != nil {
		return fmt.Errorf("starting the cluster (logs in %s): %w", dir, err)
	}
	defer s.Stop()
	fmt.Fprintf(os.Stderr, "bench-operators: Kubernetes %s, %s, simulated pods\n", s.Version, s.Controller)

	// The benchmark is the user creating applications: a client that the API server, not
	// client-go's limiter, paces.
	user := restclient.CopyConfig(s.Admin)
	user.QPS, user.Burst = 1000, 2000
	b := &bench{timeout: o.timeout}
	if b.dyn, err = dynamic.NewForConfig(user); err != nil {
		return err
	}
	if b.core, err = kubernetes.NewForConfig(user); err != nil {
		return err
	}
	if err := s.AddJobNamespace(ctx, "bench-sparkhooks", nil); err != nil {
		return err
	}
	if _, err := b.core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-ceiling"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	hook, err := startCeiling(ctx, s.Admin, s.NodeIP.String())
	if hook != nil {
		defer func() { _ = hook.Process.Kill(); _ = hook.Wait() }()
	}
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	operators := []operator{
		{name: "sparkhooks", namespace: "bench-sparkhooks", resource: sparkApplications,
			manifest: sparkApplication("bench-sparkhooks"), finished: sparkApplicationFinished,
			processes: func() ([]int, error) { return childrenRunning(2, o.sparkhooks, o.metacontroller) }},
		{name: "ceiling", namespace: "bench-ceiling", resource: ceilingRuns,
			manifest: ceilingRun("bench-ceiling"), finished: ceilingFinished,
			processes: func() ([]int, error) { return childrenRunning(2, self, o.metacontroller) }},
	}
	var runs []opbench.Run
	measure := func(op operator, sizes []int) error {
		if err := b.warmUp(ctx, op); err != nil {
			return err
		}
		for _, n := range sizes {
			fmt.Fprintf(os.Stderr, "bench-operators: %s, N = %d\n", op.name, n)
			r, err := b.run(ctx, op, n)
			if err != nil {
				return err
			}
			runs = append(runs, r)
			// Each run's row as it ends: a later run that fails leaves the earlier ones.
			if err := opbench.WriteTable(os.Stderr, runs[len(runs)-1:]); err != nil {
				return err
			}
			if err := b.cleanUp(ctx, op); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range o.sizes {
		for _, op := range operators {
			if err := measure(op, []int{n}); err != nil {
				return err
			}
		}
	}
	// Kubeflow last: the simulated stack installs it in place of sparkhooks, not back.
	if o.kubeflow != "" {
		var sizes []int
		for _, n := range o.sizes {
			if n <= o.kubeflowMax {
				sizes = append(sizes, n)
			}
		}
		kubeflow, err := startKubeflow(ctx, s, b, o)
		if err != nil {
			return err
		}
		if err := measure(kubeflow, sizes); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s, %s; Kubernetes %s, %s, simulated pods (a second to start, five to run).\n\n", machine(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), s.Version, s.Controller)
	if err := opbench.WriteTable(stdout, runs); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, a := range runs {
		if a.Operator != "sparkhooks" {
			continue
		}
		for _, other := range runs {
			if other.Operator != a.Operator && other.N == a.N {
				if err := opbench.WriteRatios(stdout, a, other); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// startKubeflow replaces sparkhooks with the Kubeflow Spark Operator's chart, its controller and
// webhook host processes on the simulated node, for applications in bench-kubeflow.
func startKubeflow(ctx context.Context, s *stack.Stack, b *bench, o *options) (operator, error) {
	const namespace = "bench-kubeflow"
	k := &stack.KubeflowOperator{
		Chart: filepath.Join(o.kubeflow, "chart"),
		// The driver ServiceAccount the applications name, in the namespace they are in.
		Set:    []string{"spark.serviceAccount.name=spark", "spark.jobNamespaces={" + namespace + "}"},
		Binary: filepath.Join(o.kubeflow, "spark-operator"), SparkHome: filepath.Join(o.kubeflowRoot, "opt", "spark"), JavaHome: filepath.Join(o.kubeflowRoot, "opt", "java", "openjdk"),
	}
	if _, err := b.core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return operator{}, err
	}
	if err := s.UninstallOperator(ctx); err != nil {
		return operator{}, fmt.Errorf("uninstalling sparkhooks: %w", err)
	}
	if err := s.InstallKubeflow(ctx, k); err != nil {
		return operator{}, fmt.Errorf("installing the Kubeflow Spark Operator: %w", err)
	}
	fmt.Fprintf(os.Stderr, "bench-operators: %s runs\n", s.Controller)
	return operator{name: "Kubeflow", namespace: namespace, resource: sparkApplications,
		manifest: sparkApplication(namespace), finished: sparkApplicationFinished,
		processes: func() ([]int, error) { return childrenRunning(2, k.Binary) }}, nil
}

// machine says what the benchmark ran on: the CPU model, its count and the memory.
func machine() string {
	model, memory := "unknown CPU", "unknown memory"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
				kib, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				memory = fmt.Sprintf("%.1f GiB", float64(kib)/(1<<20))
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%d × %s, %s", runtime.NumCPU(), model, memory)
}

// freeAddress is a loopback address no one listens on, for the API server: other clusters of
// the machine's users may hold the usual port.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
