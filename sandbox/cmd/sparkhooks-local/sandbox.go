package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/klogsink"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/reaper"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/sparkimages"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// nodeName is the sandbox's one node.
const nodeName = "sparkhooks-local"

// The operators the sandbox installs (--operator).
const (
	operatorSparkhooks = "sparkhooks"
	operatorKubeflow   = "kubeflow"
)

// check turns what would fail half-way into one line up front: each says what to do.
func (o *options) check() error {
	if _, err := exec.LookPath("kubectl"); err != nil {
		return errors.New("kubectl is not on PATH: install it (Debian: apt-get install kubectl) and start again")
	}
	if o.sparkhooks == "" {
		self, err := os.Executable()
		if err == nil {
			o.sparkhooks = filepath.Join(filepath.Dir(self), "sparkhooks")
		}
		if _, err := os.Stat(o.sparkhooks); err != nil {
			if path, err := exec.LookPath("sparkhooks"); err == nil {
				o.sparkhooks = path
			}
		}
	}
	if info, err := os.Stat(o.sparkhooks); err != nil || info.IsDir() {
		return fmt.Errorf("no sparkhooks binary at %q: build it (make build) or pass --sparkhooks", o.sparkhooks)
	}
	o.forcedSimulation = o.simulate
	if err := o.checkOperator(); err != nil {
		return err
	}
	if o.realNode != "" {
		if o.simulate {
			return errors.New("--real-node runs pods for real and --simulate plays them: pick one")
		}
		if reason := cannotRunPods(); reason != "" {
			return fmt.Errorf("--real-node: pods cannot run here: %s", reason)
		}
		if _, err := os.Stat(filepath.Join(o.realNode, "kubelet")); err != nil {
			return fmt.Errorf("--real-node %q has no kubelet: build the node (make node prints its directory) and pass it", o.realNode)
		}
	}
	if !o.simulate {
		if reason := cannotRunPods(); reason != "" {
			o.simulate, o.simulationReason = true, reason
		}
	}
	// Simulated, Kubeflow's controller still runs spark-submit, on this machine, from a Spark
	// layer the image script prepares.
	if !o.simulate || o.operator == operatorKubeflow {
		if _, err := os.Stat(imageScript); err != nil {
			return fmt.Errorf("no %s, which prepares the Spark images pods name: start it from the repository root (make run)", imageScript)
		}
		abs, err := filepath.Abs(o.images)
		if err != nil {
			return fmt.Errorf("--images: %w", err)
		}
		o.images = abs
	}
	if info, err := os.Stat(o.chart); err != nil || !info.IsDir() {
		return fmt.Errorf("--chart %s is not a directory: start it from the repository root (make run) or pass --chart", o.chart)
	}
	if err := o.checkApache(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(o.kubeBinDir, "kube-apiserver")); o.kubeBinDir == "" || err != nil {
		return fmt.Errorf("no kube-apiserver in --kube-bin-dir %q: build the control plane (make kube prints its directory) and pass it", o.kubeBinDir)
	}
	if info, err := os.Stat(o.helm); o.helm == "" || err != nil || info.IsDir() {
		return fmt.Errorf("no helm at --helm %q: build it (make helm prints its path) and pass it", o.helm)
	}
	if o.metacontroller != "" && o.operator == operatorKubeflow {
		// Not refused: make run passes the team's Metacontroller whenever it is there. The
		// banner says there is none.
		o.metacontroller = ""
	}
	if o.metacontroller != "" {
		if _, err := os.Stat(o.metacontroller); err != nil {
			return fmt.Errorf("--metacontroller: %w", err)
		}
		if o.metacontrollerChart == "" {
			o.metacontrollerChart = filepath.Join(filepath.Dir(o.metacontroller), "helm", "metacontroller")
		}
	}
	return nil
}

// apacheCRD is the CRD of the Apache operator's SparkApplication, which the chart leaves to the
// admin (docs/install.md), relative to the chart's directory.
var apacheCRD = filepath.Join("..", "crds", "spark.apache.org_sparkapplications.yaml")

// checkApache checks that --apache-spark-application has a chart to serve it and its CRD.
func (o *options) checkApache() error {
	if !o.apache {
		return nil
	}
	if o.operator != operatorSparkhooks {
		return fmt.Errorf("--apache-spark-application serves Apache's kind with sparkhooks' chart: not with --operator %s", o.operator)
	}
	if _, err := os.Stat(filepath.Join(o.chart, apacheCRD)); err != nil {
		return fmt.Errorf("--apache-spark-application: no CRD of Apache's SparkApplication at %s: start it from the repository root (make run APACHE=1)", filepath.Join(o.chart, apacheCRD))
	}
	return nil
}

// apacheCRDDir is a directory under dir holding Apache's CRD alone, as stack.Options.CRDs takes
// directories.
func apacheCRDDir(o *options, dir string) (string, error) {
	out := filepath.Join(dir, "opt-in-crds")
	if err := copyFile(filepath.Join(o.chart, apacheCRD), filepath.Join(out, filepath.Base(apacheCRD))); err != nil {
		return "", fmt.Errorf("--apache-spark-application: %w", err)
	}
	return out, nil
}

// checkOperator checks --operator and, for Kubeflow's, its release. The sparkhooks binary is
// still required: make run builds it either way.
func (o *options) checkOperator() error {
	switch o.operator {
	case operatorSparkhooks:
		return nil
	case operatorKubeflow:
	default:
		return fmt.Errorf("--operator %q: want %s or %s", o.operator, operatorSparkhooks, operatorKubeflow)
	}
	if o.realNode != "" {
		return errors.New("--operator kubeflow runs on the process kubelet or simulated (docs/local.md): the real node runs only the Spark images imported at its start, not the operator's")
	}
	for _, f := range []string{"spark-operator", "entrypoint.sh", filepath.Join("chart", "Chart.yaml")} {
		if _, err := os.Stat(filepath.Join(o.kubeflowOperator, f)); o.kubeflowOperator == "" || err != nil {
			return fmt.Errorf("--kubeflow-operator %q has no %s: pass a Kubeflow Spark Operator release (its binary, entrypoint.sh and chart/; make run finds v2.5.2 next to the repository at ../shared/kubeflow-spark-operator)", o.kubeflowOperator, f)
		}
	}
	abs, err := filepath.Abs(o.kubeflowOperator)
	if err != nil {
		return err
	}
	o.kubeflowOperator = abs
	return nil
}

// imageScript prepares a Spark image when a pod first names it (hack/spark-images/README.md).
const imageScript = "hack/spark-images/build.sh"

// cannotRunPods says why pods cannot run as processes here, and what to do, or "" if they can:
// they need root and new mount, network and UTS namespaces.
func cannotRunPods() string {
	if os.Geteuid() != 0 {
		return "Not root: running pods needs mount and network namespaces. Start it as root (sudo make run) to run Spark."
	}
	probe := exec.Command("/bin/sh", "-c", ":")
	probe.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWUTS}
	if err := probe.Run(); err != nil {
		return fmt.Sprintf("This machine refuses new mount and network namespaces (%v). Run it where it may create them (a VM, or a container started with --privileged) to run Spark.", err)
	}
	return ""
}

// sandbox is what runSandbox started, stopped in reverse order, and the reaper that removes it
// should the sandbox die before it can.
type sandbox struct {
	stops  []func()
	reaper *reaper.Reaper
	logf   func(format string, args ...any)
}

func (s *sandbox) onStop(f func()) { s.stops = append(s.stops, f) }

func (s *sandbox) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// track tells the reaper what a call to it names; a reaper that cannot be told is logged, not
// fatal: the sandbox still cleans up after itself.
func (s *sandbox) track(err error) {
	if err != nil {
		s.logf("%v", err)
	}
}

func runSandbox(ctx context.Context, o *options, stdout, stderr io.Writer) (err error) {
	started := time.Now()
	// Until the sandbox has its log, what it would log goes to stderr.
	sb := sandbox{logf: func(format string, args ...any) { fmt.Fprintf(stderr, "sparkhooks-local: "+format+"\n", args...) }}
	defer sb.stop()
	if sb.reaper, err = reaper.Start(stderr); err != nil {
		return err
	}
	// The reaper's stop runs last, once everything else is stopped and removed (the log too).
	sb.onStop(func() {
		if err := sb.reaper.Done(); err != nil {
			fmt.Fprintf(stderr, "sparkhooks-local: the reaper: %v\n", err)
		}
	})

	dir, err := dataDir(o)
	if err != nil {
		return err
	}
	if !o.keepData {
		sb.onStop(func() { os.RemoveAll(dir) })
		sb.track(sb.reaper.Remove(dir))
	}
	unlock, err := lockDataDir(dir)
	if err != nil {
		return err
	}
	sb.onStop(unlock)
	logFile, err := os.OpenFile(filepath.Join(dir, "sandbox.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	sb.onStop(func() { logFile.Close() })
	klogsink.Redirect(logFile)
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(logFile, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}
	sb.logf = logf
	if o.keepData {
		// The data dir stays, but not the pods' tmpfs volumes mounted below it.
		sb.track(sb.reaper.Unmount(dir))
	}
	out := &terminal{out: stdout, logf: logf}
	// What the user should see as it happens goes to the terminal and to the log.
	report := func(line string) {
		fmt.Fprintln(out, line)
		logf("%s", line)
	}
	startCtx, cancelStart := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelStart()
	// Pull progress goes to stdout itself: on a terminal it rewrites its line in place.
	cluster, up, err := startCluster(startCtx, o, dir, &sb, logf, report, newPullPrinter(stdout).report)
	if err != nil {
		return err
	}
	// The History Server is a value of sparkhooks' chart.
	if !o.simulate && o.operator != operatorKubeflow {
		go startHistoryServer(ctx, cluster, report)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if o.kubeconfig != "" {
		if err := copyFile(kubeconfig, o.kubeconfig); err != nil {
			return fmt.Errorf("writing the kubeconfig: %w", err)
		}
		kubeconfig = o.kubeconfig
	}
	abs, _ := filepath.Abs(kubeconfig)
	fmt.Fprintf(out, `sparkhooks-local is up in %s (state and logs in %s).
%s
  export KUBECONFIG=%s
%s
Then: kubectl logs spark-pi-driver. Ctrl-C stops everything.
`, time.Since(started).Round(100*time.Millisecond), dir, up, abs, firstSteps(o.apache))
	if o.readyFile != "" {
		// Written aside and renamed: a script polling for the file must never read it empty
		// (a test did, and ran kubectl without a kubeconfig).
		partial := o.readyFile + ".partial"
		if err := os.WriteFile(partial, []byte(abs+"\n"), 0o644); err != nil {
			return fmt.Errorf("writing the ready file: %w", err)
		}
		if err := os.Rename(partial, o.readyFile); err != nil {
			return fmt.Errorf("writing the ready file: %w", err)
		}
		sb.onStop(func() { os.Remove(o.readyFile) })
		sb.track(sb.reaper.Remove(o.readyFile))
	}
	select {
	case <-ctx.Done():
		report("sparkhooks-local: stopping")
		return nil
	case err := <-cluster.Failed():
		// Stopped rather than left running half a cluster that looks up and answers nothing.
		report("sparkhooks-local: stopping: " + firstLine(err.Error()))
		return err
	}
}

// firstSteps are the banner's first commands. With Apache's kind served too, both kinds answer
// to sparkapp and sparkapplication, so every command names the group.
func firstSteps(apache bool) string {
	steps := `  kubectl apply -f examples/spark-pi.yaml
  kubectl get sparkapplications.sparkoperator.k8s.io -w
`
	if apache {
		steps += `
Apache's SparkApplication is served too: kubectl resolves sparkapp to it, so name the group
(sparkapplications.sparkoperator.k8s.io, sparkapplications.spark.apache.org):
  kubectl apply -f examples/apache/apache-spark-pi.yaml
  kubectl get sparkapplications.spark.apache.org -w
`
	}
	return steps
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// startCluster starts the real control plane, the node (the process kubelet, the real one, or the
// simulated one) and the charts (sandbox/internal/stack), and returns what the banner says of
// them. The process kubelet prepares the Spark images pods name as it goes, reporting to pulls.
func startCluster(ctx context.Context, o *options, dir string, sb *sandbox, logf func(string, ...any), report func(string), pulls func(prockubelet.PullReport)) (*stack.Stack, string, error) {
	opts := stack.Options{
		Dir: filepath.Join(dir, "cluster"), APIAddress: o.apiAddr, KubeBinDir: o.kubeBinDir, Helm: o.helm,
		Chart: o.chart, Sparkhooks: o.sparkhooks,
		// One replica on one node; a readiness probe every second instead of five, so that the
		// banner comes as soon as the hook server listens rather than at its second probe.
		ChartSet:       []string{"replicaCount=1", "readinessProbe.periodSeconds=1"},
		Metacontroller: o.metacontroller, MetacontrollerChart: o.metacontrollerChart, MetacontrollerValues: o.metacontrollerValues,
		NodeName: nodeName, Logf: logf, Report: report,
		// Spark's examples ask a core per driver and executor: SparkPi alone wants three, more
		// than most laptops' sandboxes have to spare. Nothing limits CPU here, so the node offers
		// more than the machine has and the scheduler places them.
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")},
		// The sandbox's API server holds a few hundred objects: past its start-up peak, a soft
		// limit makes its collector hand back about 100 MiB (330 MiB resident instead of 440).
		// It costs the start CPU: the heap passes 250 MiB while the CRDs go in, and the collector
		// then runs without pause (9.9 s of CPU to be up instead of about 7 with 300 MiB, which
		// would put the sandbox over 600 MiB).
		APIServerMemoryLimit: "250MiB",
	}
	egress, imagesLine := "", ""
	if o.operator == operatorKubeflow {
		opts.Kubeflow = &stack.KubeflowOperator{
			Chart: filepath.Join(o.kubeflowOperator, "chart"),
			// The ServiceAccount our chart gives drivers, which the examples name; Kubeflow's
			// own default is spark-operator-spark.
			Set: []string{"spark.serviceAccount.name=spark"},
		}
		if o.simulate {
			if err := kubeflowOnHost(ctx, o, opts.Kubeflow, logf, report); err != nil {
				return nil, "", err
			}
		}
	} else if !o.simulate {
		set, err := eventLogValues(dir)
		if err != nil {
			return nil, "", err
		}
		opts.ChartSet = append(opts.ChartSet, set...)
	}
	if o.apache {
		crds, err := apacheCRDDir(o, dir)
		if err != nil {
			return nil, "", err
		}
		opts.CRDs = append(opts.CRDs, crds)
		opts.ChartSet = append(opts.ChartSet, "apacheSparkApplication.enabled=true")
	}
	if o.simulate {
		opts.Simulated = &stack.SimulatedNode{StartDelay: time.Second, RunTime: 5 * time.Second}
	} else {
		images, prepared, err := loadImages(o.images)
		if err != nil {
			return nil, "", err
		}
		imagesLine = imagesBanner(o.images, prepared)
		random := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
		network, err := prockubelet.NewNetwork(ctx, random)
		if err != nil {
			return nil, "", err
		}
		sb.onStop(func() { _ = network.Close() })
		sb.track(sb.reaper.Network(network.Bridge))
		if err := network.EnableEgress(ctx, "/etc/resolv.conf"); err != nil {
			egress = fmt.Sprintf("Pods have no outbound access: %v\n", err)
		}
		opts.Images, opts.Network = images, network
		if o.realNode != "" {
			// containerd pulls from registries, which this machine may not reach: the node
			// runs the images imported at its start.
			opts.RealNode = o.realNode
			imagesLine = realNodeImagesBanner(o.images, prepared)
		} else {
			opts.ImageSource = &sparkimages.Builder{Script: imageScript, Dir: o.images, Logf: logf, KubeflowOperator: o.kubeflowOperator}
			opts.PullReport = pulls
		}
	}
	s, err := stack.Start(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	sb.onStop(s.Stop)
	if err := copyFile(s.Kubeconfig, filepath.Join(dir, "kubeconfig")); err != nil {
		return nil, "", err
	}
	controlPlane := fmt.Sprintf("Kubernetes %s: kube-apiserver (https://%s), kube-controller-manager and kube-scheduler; logs in %s.\n", s.Version, s.APIAddress, s.LogDir)
	if o.realNode != "" {
		cpus, err := allocatableCPU(ctx, s)
		if err != nil {
			return nil, "", err
		}
		return s, fmt.Sprintf(`%sNode %s: the kubelet with containerd and runc (docs/real-node.md), kube-proxy and CoreDNS, on the pod network %s.
%s%s%sInstalled with Helm: %s in namespace %s (hooks and webhooks), run by %s.
`, controlPlane, nodeName, opts.Network.Subnet, imagesLine, cpuHint(cpus), egress, o.chart, stack.SparkhooksNamespace, s.Controller), nil
	}
	if o.operator == operatorKubeflow && o.simulate {
		return s, fmt.Sprintf(`%s
%sNode %s: the simulated kubelet at %s, which plays the phases of the pods bound to it.
Installed with Helm in place of sparkhooks: %s's own chart (%s) in namespace %s; its CRDs; no Metacontroller. Its controller and webhook run as processes of this machine (the release's binary, behind the chart's Services), the controller's spark-submit with the Spark and Java of %s.
`, simulatedMode(o), controlPlane, nodeName, s.NodeIP, s.Controller, opts.Kubeflow.Chart, stack.KubeflowNamespace, filepath.Dir(opts.Kubeflow.SparkHome)), nil
	}
	if o.operator == operatorKubeflow {
		return s, fmt.Sprintf(`%sNode %s: the process kubelet, pods as local processes on the images in %s, on the pod network %s.
%s%sInstalled with Helm in place of sparkhooks: %s's own chart (%s) in namespace %s, its controller and webhook from the image %s prepared from the release; its CRDs; no Metacontroller.
`, controlPlane, nodeName, o.images, opts.Network.Subnet, imagesLine, egress, s.Controller, opts.Kubeflow.Chart, stack.KubeflowNamespace, opts.Kubeflow.Image()), nil
	}
	if !o.simulate {
		return s, fmt.Sprintf(`%sNode %s: the process kubelet, pods as local processes on the images in %s, on the pod network %s.
%s%sInstalled with Helm: %s in namespace %s (hooks and webhooks), run by %s.
`, controlPlane, nodeName, o.images, opts.Network.Subnet, imagesLine, egress, o.chart, stack.SparkhooksNamespace, s.Controller), nil
	}
	mode := simulatedMode(o)
	controller := ""
	if o.metacontroller != "" {
		controller = "Metacontroller runs as a process of this machine too, calling the hooks at that address (the chart's metacontroller.hookBaseURL): no cluster DNS resolves the Service's name here.\n"
	}
	return s, fmt.Sprintf(`%s
%sNode %s: the simulated kubelet at %s, which plays the phases of the pods bound to it.
Installed with Helm: %s in namespace %s (hooks and webhooks), run by %s; sparkhooks serve runs as a process of this machine at %s behind the chart's Service.
%s`, mode, controlPlane, nodeName, s.NodeIP, o.chart, stack.SparkhooksNamespace, s.Controller, s.HookServer, controller), nil
}

// simulatedMode is the banner's first line in simulated mode, with why when it was not asked for.
func simulatedMode(o *options) string {
	mode := "Mode: SIMULATED: pods' phases are played, nothing is executed (docs/local.md)."
	if !o.forcedSimulation {
		mode += " " + o.simulationReason
	}
	return mode
}

// kubeflowSparkImage is the Spark image whose layer Kubeflow's controller runs spark-submit from
// on a simulated node: the one hack/spark-images/kubeflow-operator.sh builds the operator's image
// on, as upstream builds it on Spark 4.0.
const kubeflowSparkImage = "apache/spark:4.0.1"

// kubeflowOnHost readies k to run as processes of this machine, as no simulated pod runs
// anything: the release's binary, and the Spark distribution and Java of kubeflowSparkImage's
// layer, prepared (once) by the image script.
func kubeflowOnHost(ctx context.Context, o *options, k *stack.KubeflowOperator, logf func(string, ...any), report func(string)) error {
	report("Preparing " + kubeflowSparkImage + ", whose spark-submit Kubeflow's controller runs (once; then from " + o.images + ").")
	builder := &sparkimages.Builder{Script: imageScript, Dir: o.images, Logf: logf}
	image, err := builder.Pull(ctx, kubeflowSparkImage, func(prockubelet.Progress) {})
	if err != nil {
		return fmt.Errorf("preparing the Spark that Kubeflow's spark-submit runs: %w", err)
	}
	k.Binary = filepath.Join(o.kubeflowOperator, "spark-operator")
	k.SparkHome = filepath.Join(image.Root, "opt", "spark")
	k.JavaHome = filepath.Join(image.Root, "opt", "java", "openjdk")
	return nil
}

// loadImages reads the image table of dir, empty if nothing was prepared there yet, and the
// Spark versions it holds.
func loadImages(dir string) (*prockubelet.ImageTable, []string, error) {
	path := filepath.Join(dir, "images.json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return prockubelet.NewImageTable(nil), nil, nil
	}
	table, err := prockubelet.LoadImageTable(path)
	if err != nil {
		return nil, nil, err
	}
	layers, _ := filepath.Glob(filepath.Join(dir, "spark-*"))
	var versions []string
	for _, layer := range layers {
		versions = append(versions, strings.TrimPrefix(filepath.Base(layer), "spark-"))
	}
	return table, versions, nil
}

// imagesBanner says which Spark images are ready and that the others are prepared on first use.
func imagesBanner(dir string, prepared []string) string {
	if len(prepared) == 0 {
		return fmt.Sprintf("Spark images: none in %s yet. The first pod to name one waits in ContainerCreating while it is prepared, as a kubelet pulls an image: pip downloads the pyspark sdist of its Spark version, any release from 3.4.0 (320 to 460 MB per version, once), with its progress below.\n", dir)
	}
	return fmt.Sprintf("Spark images: %s ready; another apache/spark or spark release from 3.4.0 is prepared when a pod first names it (pip downloads its pyspark sdist, progress below).\n", strings.Join(prepared, ", "))
}

// allocatableCPU is what the real node offers the scheduler: the machine's cores, unlike the
// process kubelet's 16.
func allocatableCPU(ctx context.Context, s *stack.Stack) (resource.Quantity, error) {
	client, err := kubernetes.NewForConfig(s.Admin)
	if err != nil {
		return resource.Quantity{}, err
	}
	node, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("reading the node's capacity: %w", err)
	}
	return node.Status.Allocatable[corev1.ResourceCPU], nil
}

// cpuHint warns, on a node with fewer cores than SparkPi asks for (examples/spark-pi.yaml: a
// core for the driver and each of its two executors), that its executors would wait in Pending,
// and says what to change.
func cpuHint(cpus resource.Quantity) string {
	if cpus.Cmp(*resource.NewQuantity(3, resource.DecimalSI)) >= 0 {
		return ""
	}
	return fmt.Sprintf("The node offers %s CPUs, fewer than the 3 cores SparkPi requests (its executors would stay Pending, Insufficient cpu): lower the requests, as on a small cluster (spec.driver.coreRequest and spec.executor.coreRequest: 300m).\n", cpus.String())
}

// realNodeImagesBanner says which Spark images containerd has: those prepared before the start.
func realNodeImagesBanner(dir string, prepared []string) string {
	if len(prepared) == 0 {
		return fmt.Sprintf("Spark images: none in %s: the node runs only what make spark-images prepared before it started (a pod naming another image fails with ErrImagePull).\n", dir)
	}
	return fmt.Sprintf("Spark images: %s, imported into containerd; the node runs only these (make spark-images prepares others before a start).\n", strings.Join(prepared, ", "))
}

func dataDir(o *options) (string, error) {
	if !o.keepData {
		return os.MkdirTemp("", "sparkhooks-local-")
	}
	dir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("--data-dir: %w", err)
	}
	return dir, nil
}

// lockDataDir keeps two sandboxes off one data dir: etcd would refuse the second half-way.
func lockDataDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another sparkhooks-local: stop it or pass another --data-dir", dir)
	}
	return func() { f.Close() }, nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}

// historyServerImage is the sandbox History Server's image: SparkPi's, so that one pull serves
// both.
const historyServerImage = "3.5.3"

// eventLogValues are the chart values that send every application's event log to
// DIR/spark-events, which the History Server reads: a hostPath, the one node's disk, mounted at
// /spark-events. --history-server-url is set from the start, so that the hook server does not
// roll when the History Server is added.
func eventLogValues(dir string) ([]string, error) {
	events := filepath.Join(dir, "spark-events")
	if err := os.MkdirAll(events, 0o777); err != nil {
		return nil, err
	}
	// Drivers and the History Server run as the image's spark user.
	if err := os.Chmod(events, 0o777); err != nil {
		return nil, err
	}
	return []string{
		"eventLog.dir=file:/spark-events",
		"eventLog.volume.hostPath.path=" + events,
		"eventLog.volume.hostPath.type=Directory",
		"historyServer.image.tag=" + historyServerImage,
		"historyServer.url=http://sparkhooks-history." + stack.SparkhooksNamespace + ".svc:18080",
	}, nil
}

// startHistoryServer adds the History Server to the release once the sandbox is up: the install
// does not wait for its image, which the first run pulls.
func startHistoryServer(ctx context.Context, s *stack.Stack, report func(string)) {
	started := time.Now()
	if err := s.SetChartValues(ctx, "historyServer.enabled=true"); err != nil {
		if ctx.Err() == nil {
			report("The History Server did not start: " + firstLine(err.Error()))
		}
		return
	}
	report(fmt.Sprintf("The History Server is ready (%s): once an application has ended, kubectl spark ui NAME shows its jobs and stages.", time.Since(started).Round(100*time.Millisecond)))
}
