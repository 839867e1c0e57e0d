// Package stack starts the whole local cluster the sandbox (make run) and the end-to-end suites
// run on, from options, and stops it: etcd, the real kube-apiserver, kube-controller-manager and
// kube-scheduler (k8s.io/kubernetes, built by hack/kube), one node, Metacontroller (the real one
// from its own Helm chart, or the local stand-in where it is absent) and sparkhooks installed
// with Helm from chart/, as a user installs it.
//
// The node is the process kubelet, or, in simulated mode (Options.Simulated), the simulated
// kubelet, which plays pods' phases and needs neither root nor images. On the process kubelet
// the hook server and Metacontroller run as the Pods their charts describe, from local image
// layers holding the binaries: no registry is needed, and the charts' RBAC, probes, mounts,
// security contexts and Services are what a cluster would run. On the simulated node the hook
// server runs as a host process behind the chart's Service (hosthooks.go), and so does
// Metacontroller (metacontrollerhost.go), else the stand-in runs the CompositeControllers.
//
// With Options.Kubeflow, the Kubeflow Spark Operator's own chart goes in instead of sparkhooks'
// and nothing runs CompositeControllers (kubeflow.go), so that the same cluster can be compared
// under the operator sparkhooks replaces.
//
// The stack keeps what it starts running (supervise.go): a control-plane process or the host
// hook server that exits is restarted, and one that keeps exiting ends the cluster (Failed); the
// kubelet restarts the charts' Pods. Options.Report hears of every restart.
package stack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/mcstandin"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/realnode"
)

// Namespaces the charts are installed into, as their READMEs suggest.
const (
	SparkhooksNamespace     = "sparkhooks"
	MetacontrollerNamespace = "metacontroller"
)

// Options say what to start.
type Options struct {
	// Dir holds the cluster's state: etcd, certificates, kubeconfigs, logs/, the kubelet's pods.
	Dir string
	// APIAddress is where the API server listens (a loopback host:port); empty picks a free port.
	APIAddress string
	// KubeBinDir holds kube-apiserver, kube-controller-manager and kube-scheduler (hack/kube/build.sh).
	KubeBinDir string
	// APIServerMemoryLimit is ControlPlaneOptions.APIServerMemoryLimit.
	APIServerMemoryLimit string
	// Helm is the helm binary (hack/helm/build.sh).
	Helm string
	// Chart is sparkhooks' chart directory; ChartSet are --set arguments for its install.
	Chart    string
	ChartSet []string
	// CRDs are directories of CustomResourceDefinitions the cluster serves before the charts go
	// in, as an administrator installs an API the chart's registrations name (the Gateway API's:
	// hack/gateway-api/build.sh): Metacontroller does not start a controller whose child the
	// cluster does not serve.
	CRDs []string
	// Sparkhooks is the binary the chart's Deployment runs (the image's /sparkhooks).
	Sparkhooks string
	// SparkhooksImage, when set, is the image make image builds (its OCI archive, bin/image.tar):
	// a real node runs the chart's Pods from exactly that image, imported into containerd as a
	// cluster pulls it, rather than from an image of Sparkhooks made here. The process kubelet has
	// no container runtime and runs Sparkhooks either way.
	SparkhooksImage string
	// Metacontroller is the upstream binary; empty runs the local stand-in instead.
	Metacontroller string
	// Kubeflow, when set, installs the Kubeflow Spark Operator's chart instead of sparkhooks'
	// (kubeflow.go): Chart, ChartSet, Sparkhooks and Metacontroller are then unused.
	Kubeflow *KubeflowOperator
	// OwnControllers: the caller runs the CompositeControllers itself (the contract suite's
	// stand-ins, one per test namespace). The chart goes in without its CompositeControllers
	// (metacontroller.enabled=false) and neither Metacontroller nor the stand-in starts.
	OwnControllers bool
	// MetacontrollerChart is Metacontroller's chart directory and MetacontrollerValues the values
	// file it is installed with (chart/metacontroller-values.yaml).
	MetacontrollerChart, MetacontrollerValues string
	// Images are the Spark images the process kubelet runs; the stack adds sparkhooks' and
	// Metacontroller's.
	Images *prockubelet.ImageTable
	// ImageSource prepares the images a pod names that Images lacks (prockubelet.Config), and
	// PullReport receives the pulls' progress.
	ImageSource prockubelet.ImageSource
	PullReport  func(prockubelet.PullReport)
	// Network is the process kubelet's pod network.
	Network *prockubelet.Network
	// Simulated, if set, makes the node the simulated kubelet instead of the process kubelet
	// (Images and Network are then unused).
	Simulated *SimulatedNode
	// NodeName names the one node.
	NodeName string
	// Capacity overrides what the node offers the scheduler (prockubelet.Config.Capacity): the
	// process kubelet enforces no limits, so a small machine may offer what examples sized for a
	// cluster request.
	Capacity corev1.ResourceList
	// NodeTaints are the node's taints; the charts' Pods are installed tolerating them. A suite
	// that plays the node of its own workloads taints this one so that only the system Pods
	// (the hooks, Metacontroller) land here.
	NodeTaints []corev1.Taint
	// RealNode, when set, is the directory hack/node/build.sh prints, and the node is a real one
	// (docs/real-node.md): the kubelet with containerd and runc, kube-proxy, CoreDNS, the images
	// imported into containerd. Empty: the process kubelet.
	RealNode string
	// Logf receives the stack's background errors.
	Logf func(format string, args ...any)
	// Report receives, one line each, what the user of the cluster should see as it happens: a
	// component (a control-plane process, the hook server's host process) that exited and is
	// restarted, a container of the charts' Pods that the kubelet restarted or backs off from.
	Report func(line string)
}

// SimulatedNode configures the simulated node (sandbox/internal/simkubelet). No kubelet runs
// the chart's Deployment then: the hook server runs as a host process at IP behind the chart's
// Service (hosthooks.go). Metacontroller, when given, runs as a host process too
// (metacontrollerhost.go): it would reach the hooks at the Service's name, which resolves only
// through cluster DNS, which this cluster has not, so the chart's registrations name the hook
// server's host address instead (metacontroller.hookBaseURL).
type SimulatedNode struct {
	// IP is the node's address, where the kubelet API and the hook server listen: an address of
	// this machine other than loopback, which EndpointSlice validation refuses. The zero value
	// picks one (HostIP).
	IP netip.Addr
	// StartDelay is how long a pod takes to run; RunTime how long one that may end runs.
	StartDelay, RunTime time.Duration
}

// Stack is a running cluster.
type Stack struct {
	// Kubeconfig is a cluster-admin kubeconfig file; Admin the same as a client configuration.
	Kubeconfig string
	Admin      *restclient.Config
	// APIAddress is where the API server listens; Version is what it says its version is.
	APIAddress, Version string
	// Kubelet is the node when it is the process kubelet, Node when it is a real one; both are
	// nil on a simulated node.
	Kubelet *prockubelet.Kubelet
	Node    *realnode.Node
	// NodeIP is the node's address.
	NodeIP netip.Addr
	// HookServer is where the hook server's host process serves HTTP on a simulated node; empty
	// where it runs as the chart's Pods.
	HookServer string
	// Controller says what runs the CompositeControllers: "Metacontroller v4.17.2" or the stand-in.
	Controller string
	// Controllers are the stand-in's controllers by CompositeController name (none with the real
	// Metacontroller).
	Controllers map[string]*mcstandin.Controller
	// LogDir holds one log per component.
	LogDir string

	control *ControlPlane
	hooks   *component
	// hookHTTPPort is the port the hook server's host process serves the hooks at, chosen
	// before the chart goes in when a host-process Metacontroller calls it there; 0: any.
	hookHTTPPort int
	// metacontroller is Metacontroller's host process on a simulated node.
	metacontroller *component
	// kubeflowOnHost are the Kubeflow Spark Operator's controller and webhook as host processes
	// on a simulated node (kubeflowhost.go).
	kubeflowOnHost []*component
	// failed delivers the first reason the cluster cannot go on (Failed).
	failed   chan error
	failOnce sync.Once
	helm     helmRunner
	chart    string
	// skipSchemaValidation: the release's values are ones the chart's schema refuses.
	skipSchemaValidation bool
	// upgradeMu serialises the release's upgrades.
	upgradeMu sync.Mutex
	// options are what the stack was started with, for installing an operator again
	// (operators.go); operator is the one installed now.
	options  Options
	operator Operator
	// kubeflow is the Kubeflow Spark Operator's chart while it is the operator installed.
	kubeflow *KubeflowOperator
	cancel   context.CancelFunc
	running  sync.WaitGroup
}

// Start starts the cluster and returns once the charts are installed and their Pods are ready.
// On error everything started so far is stopped again.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Report == nil {
		o.Report = func(string) {}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	begin := time.Now()
	phase := func(what string) { o.Logf("stack: %s after %s", what, time.Since(begin).Round(10*time.Millisecond)) }
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Stack{cancel: cancel, LogDir: filepath.Join(o.Dir, "logs"), Controllers: map[string]*mcstandin.Controller{}, failed: make(chan error, 1), options: o}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if s.NodeIP, err = o.nodeIP(); err != nil {
		return nil, err
	}
	// The charts' image layers (copies of the binaries the node runs) are made while the control
	// plane starts, rather than on the way from the API server to the charts.
	var chartImages map[string]prockubelet.Image
	var layers errgroup.Group
	if o.Simulated == nil && o.Kubeflow == nil {
		layers.Go(func() (err error) {
			chartImages, err = o.chartImages()
			return err
		})
	}
	s.control, err = StartControlPlane(ctx, ControlPlaneOptions{
		Dir: o.Dir, KubeBinDir: o.KubeBinDir, Address: o.APIAddress, NodeIP: s.NodeIP, Now: time.Now(),
		APIServerMemoryLimit: o.APIServerMemoryLimit,
	})
	if layersErr := layers.Wait(); err == nil {
		err = layersErr
	}
	if err != nil {
		return nil, err
	}
	s.Kubeconfig, s.Admin, s.APIAddress = s.control.Kubeconfig, s.control.Admin, s.control.Address
	phase("the API server is ready")
	client, err := kubernetes.NewForConfig(s.Admin)
	if err != nil {
		return nil, err
	}
	version, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("asking the API server its version: %w", err)
	}
	s.Version = version.GitVersion
	var importSparkImages func(context.Context) error
	switch {
	case o.RealNode != "":
		if importSparkImages, err = s.startRealNode(ctx, runCtx, o, chartImages); err != nil {
			return nil, err
		}
		phase("the real node runs")
	case o.Simulated != nil:
		err = s.startSimulatedKubelet(runCtx, o)
	default:
		err = s.startProcessKubelet(runCtx, o, o.Images.With(chartImages))
	}
	if err != nil {
		return nil, err
	}
	// The charts go in while the node registers: their Pods wait for it in Pending, and a node
	// that never gets Ready cancels the install.
	group, groupCtx := errgroup.WithContext(ctx)
	group.Go(func() error {
		if err := s.waitForNode(groupCtx, client, o.NodeName); err != nil {
			return err
		}
		phase("the node is Ready")
		if s.Node != nil {
			if err := s.waitForRealNode(groupCtx, client); err != nil {
				return err
			}
			phase("CoreDNS serves")
		}
		// The service-account controller gives every namespace its default account; until it
		// has, admission refuses the namespace's pods.
		return s.poll(groupCtx, "the default ServiceAccount", func(ctx context.Context) error {
			_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
			return err
		})
	})
	group.Go(func() error { return s.installCharts(groupCtx, runCtx, o, client, phase) })
	if importSparkImages != nil {
		group.Go(func() error { return importSparkImages(groupCtx) })
	}
	if err := group.Wait(); err != nil {
		return nil, err
	}
	phase("the controllers run")
	s.supervise(runCtx, defaultRestarts(), o.Report)
	if o.Simulated == nil {
		if err := s.reportPodRestarts(runCtx, client, o.Report); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// installCRDs applies the CustomResourceDefinitions in dir, server-side (some are too big for
// kubectl's last-applied annotation), and waits until the API server serves them.
func (s *Stack) installCRDs(ctx context.Context, dir string) error {
	if out, err := kubectl.Run(ctx, s.Kubeconfig, "apply", "--server-side", "-f", dir); err != nil {
		return fmt.Errorf("applying the CRDs in %s: %w: %s", dir, err, out)
	}
	if out, err := kubectl.Run(ctx, s.Kubeconfig, "wait", "--for=condition=Established", "--timeout=60s", "-f", dir); err != nil {
		return fmt.Errorf("the CRDs in %s are not established: %w: %s", dir, err, out)
	}
	return nil
}

// applyCRDFiles applies the CustomResourceDefinitions of dir's YAML files server-side, as
// kubectl apply --server-side does, without a kubectl process: its start and discovery took half
// a second, on the path every start waits on.
func applyCRDFiles(ctx context.Context, cfg *restclient.Config, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no YAML files in %s", dir)
	}
	client, err := apiextensionsclientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := docs.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("reading %s: %w", file, err)
			}
			manifest, err := utilyaml.ToJSON(doc)
			if err != nil {
				return fmt.Errorf("reading %s: %w", file, err)
			}
			var crd metav1.PartialObjectMetadata
			if err := json.Unmarshal(manifest, &crd); err != nil {
				return fmt.Errorf("reading %s: %w", file, err)
			}
			if crd.Name == "" {
				continue
			}
			if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.ApplyPatchType, manifest, metav1.PatchOptions{FieldManager: "sparkhooks-local"}); err != nil {
				return fmt.Errorf("applying %s from %s: %w", crd.Name, file, err)
			}
		}
	}
	return nil
}

// installCharts installs sparkhooks' chart and, as the options say, Metacontroller from its own
// chart or the stand-in, and returns once the controllers run.
func (s *Stack) installCharts(ctx, runCtx context.Context, o Options, client kubernetes.Interface, phase func(string)) error {
	helm := helmRunner{binary: o.Helm, kubeconfig: s.Kubeconfig, home: filepath.Join(o.Dir, "helm"), logDir: s.LogDir}
	s.helm = helm
	if o.Kubeflow != nil {
		return s.installKubeflow(ctx, o.Kubeflow, phase)
	}
	s.chart = o.Chart
	tolerations, err := tolerationsValue(o.NodeTaints, "tolerations")
	if err != nil {
		return err
	}
	sparkhooks := installOptions{set: o.ChartSet, setJSON: tolerations, wait: true}
	if o.Simulated != nil {
		// The simulated node would play the Deployment's Pods as Running at addresses where
		// nothing answers, and the Service would send the webhook calls there. The host process
		// stands in for them (runHooksOnHost). The chart's schema refuses 0 replicas, rightly
		// for a cluster: nothing would serve the webhooks; here the host process does.
		sparkhooks.set = append(slices.Clone(sparkhooks.set), "replicaCount=0")
		sparkhooks.skipSchemaValidation = true
		if o.Metacontroller != "" {
			// Metacontroller as a process of this machine cannot resolve the Service's name
			// (no cluster DNS): the registrations name the hook server's host address instead,
			// as a cluster whose Metacontroller runs outside it sets hookBaseURL.
			if s.hookHTTPPort, err = freePort(s.NodeIP.String()); err != nil {
				return err
			}
			base := "http://" + net.JoinHostPort(s.NodeIP.String(), strconv.Itoa(s.hookHTTPPort))
			sparkhooks.set = append(sparkhooks.set, "metacontroller.hookBaseURL="+base)
		}
	}
	s.skipSchemaValidation = sparkhooks.skipSchemaValidation
	switch {
	case o.OwnControllers:
		s.Controller = "the caller's controllers"
		sparkhooks.set = append(slices.Clone(sparkhooks.set), "metacontroller.enabled=false")
	case o.Metacontroller != "":
		s.Controller = "Metacontroller " + chartAppVersion(o.MetacontrollerChart)
		// Its CRDs first, as an administrator applies them, so that Metacontroller starts after
		// sparkhooks' CRDs exist and finds them at once rather than at its next discovery.
		if err := applyCRDFiles(ctx, s.Admin, filepath.Join(o.MetacontrollerChart, "crds")); err != nil {
			return fmt.Errorf("applying Metacontroller's CRDs: %w", err)
		}
	default:
		s.Controller = "the local stand-in for Metacontroller (not Metacontroller: docs/local.md)"
		if err := installCompositeControllerCRD(ctx, s.Admin); err != nil {
			return err
		}
	}
	for _, dir := range o.CRDs {
		if err := s.installCRDs(ctx, dir); err != nil {
			return err
		}
	}
	group, groupCtx := errgroup.WithContext(ctx)
	group.Go(func() error {
		if err := helm.install(groupCtx, "sparkhooks", o.Chart, SparkhooksNamespace, sparkhooks); err != nil {
			return err
		}
		phase("sparkhooks' chart is installed and its Pods are ready")
		return nil
	})
	if o.Metacontroller != "" && !o.OwnControllers {
		group.Go(func() error { return s.installMetacontroller(groupCtx, o, helm, tolerations) })
	}
	if err := group.Wait(); err != nil {
		return err
	}
	if o.Simulated != nil {
		if err := s.runHooksOnHost(ctx, o, client); err != nil {
			return err
		}
		phase("the hook server runs on the host behind the chart's Service")
	}
	switch {
	case o.OwnControllers:
	case o.Metacontroller != "":
		if o.Simulated != nil {
			if err := s.runMetacontrollerOnHost(ctx, o, client); err != nil {
				return err
			}
			phase("Metacontroller runs on the host")
		}
		if err := s.waitForControllers(ctx, client, time.Time{}); err != nil {
			return err
		}
	default:
		if err := s.startStandIn(ctx, runCtx, o); err != nil {
			return err
		}
	}
	s.operator = OperatorSparkhooks
	return nil
}

// installMetacontroller installs Metacontroller from its chart once sparkhooks' chart has made
// its first CompositeController, while sparkhooks' Pod starts.
func (s *Stack) installMetacontroller(ctx context.Context, o Options, helm helmRunner, tolerations []string) error {
	// Not before the chart's first CompositeController exists: Helm has made the CRDs (and
	// waited for them) by then, so Metacontroller's first discovery finds them rather than its
	// next one.
	if err := s.poll(ctx, "the chart's CompositeControllers", func(ctx context.Context) error {
		return s.anyCompositeController(ctx)
	}); err != nil {
		return err
	}
	// Not waited for by Helm: the controllers' Events say more than its readiness probe. One
	// replica: the node is one machine. Its CRDs went in first: applied again, Helm would patch
	// each and wait for them while sparkhooks' Pod starts.
	metacontroller := installOptions{valuesFiles: []string{o.MetacontrollerValues}, set: []string{"replicas=1"}, setJSON: tolerations, skipCRDs: true}
	if o.Simulated != nil {
		// Its RBAC and StatefulSet, whose container runs on the host (runMetacontrollerOnHost):
		// no Pod, which the simulated node would play as Running.
		metacontroller.set = []string{"replicas=0"}
	}
	return helm.install(ctx, "metacontroller", o.MetacontrollerChart, MetacontrollerNamespace, metacontroller)
}

// concreteAddress turns an empty address or port 0 into a free loopback port: the API server
// must be told its port.
func concreteAddress(address string) (string, error) {
	if address == "" {
		address = "127.0.0.1:0"
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return "", fmt.Errorf("API server address %q: %w", address, err)
	}
	if port != "0" {
		return address, nil
	}
	free, err := freePort(host)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(free)), nil
}

func (o *Options) check() error {
	for _, f := range []struct{ what, path string }{
		{"kube-apiserver (make kube)", filepath.Join(o.KubeBinDir, "kube-apiserver")},
		{"helm (make helm)", o.Helm},
	} {
		if info, err := os.Stat(f.path); err != nil || info.IsDir() {
			return fmt.Errorf("no %s at %q", f.what, f.path)
		}
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		return errors.New("kubectl is not on PATH: install it (Debian: apt-get install kubectl)")
	}
	if o.NodeName == "" || o.Dir == "" {
		return errors.New("stack: Dir and NodeName are required")
	}
	if o.Kubeflow != nil {
		if err := o.Kubeflow.check(o); err != nil {
			return err
		}
		if o.Network == nil && o.Simulated == nil {
			return errors.New("stack: the process kubelet needs a Network")
		}
		return nil
	}
	if info, err := os.Stat(o.Sparkhooks); err != nil || info.IsDir() {
		return fmt.Errorf("no sparkhooks binary at %q", o.Sparkhooks)
	}
	if o.Metacontroller != "" {
		if _, err := os.Stat(o.Metacontroller); err != nil {
			return fmt.Errorf("Metacontroller: %w", err)
		}
		if _, err := os.Stat(filepath.Join(o.MetacontrollerChart, "Chart.yaml")); err != nil {
			return fmt.Errorf("Metacontroller's chart: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Chart, "Chart.yaml")); err != nil {
		return fmt.Errorf("sparkhooks' chart: %w", err)
	}
	if o.Simulated != nil {
		return nil
	}
	if o.Network == nil {
		return errors.New("stack: the process kubelet needs a Network")
	}
	return nil
}

// nodeIP is the node's address: the pod network's gateway for the process kubelet, the
// machine's own address for the simulated node.
func (o *Options) nodeIP() (netip.Addr, error) {
	if o.Simulated == nil {
		return o.Network.Gateway, nil
	}
	if o.Simulated.IP.IsValid() {
		return o.Simulated.IP, nil
	}
	return HostIP()
}

// chartImages are the two images the charts name, each a layer with the binary where the upstream
// image has it.
func (o *Options) chartImages() (map[string]prockubelet.Image, error) {
	layers := filepath.Join(o.Dir, "images")
	sparkhooks := filepath.Join(layers, "sparkhooks")
	if err := installBinary(o.Sparkhooks, filepath.Join(sparkhooks, "sparkhooks")); err != nil {
		return nil, err
	}
	// As the Dockerfile builds it: the binary at /sparkhooks, run as nonroot.
	images := map[string]prockubelet.Image{
		o.sparkhooksImageRef(): {
			Root: sparkhooks, Entrypoint: []string{"/sparkhooks"}, Cmd: []string{"serve"}, User: "65532:65532",
		},
	}
	if o.Metacontroller != "" {
		metacontroller := filepath.Join(layers, "metacontroller")
		if err := installBinary(o.Metacontroller, filepath.Join(metacontroller, "usr", "bin", "metacontroller")); err != nil {
			return nil, err
		}
		images["ghcr.io/metacontroller/metacontroller:"+chartAppVersion(o.MetacontrollerChart)] = prockubelet.Image{
			Root: metacontroller, Entrypoint: []string{"/usr/bin/metacontroller"}, User: "65534",
		}
	}
	return images, nil
}

// sparkhooksImageRef is the image the chart's Pods name by default.
func (o *Options) sparkhooksImageRef() string {
	return "ghcr.io/sparkhooks/sparkhooks:" + chartAppVersion(o.Chart)
}

// tolerationsValue are the --set-json arguments, one per values key, that make a chart's Pods
// tolerate taints, or none.
func tolerationsValue(taints []corev1.Taint, keys ...string) ([]string, error) {
	if len(taints) == 0 {
		return nil, nil
	}
	var tolerations []corev1.Toleration
	for _, t := range taints {
		tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect})
	}
	data, err := json.Marshal(tolerations)
	if err != nil {
		return nil, err
	}
	var set []string
	for _, key := range keys {
		set = append(set, key+"="+string(data))
	}
	return set, nil
}

// installBinary copies an executable into an image layer, readable by the image's user.
func installBinary(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}

// chartAppVersion reads a chart's appVersion, the tag its image defaults to.
func chartAppVersion(chart string) string {
	data, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		return ""
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return ""
	}
	return c.AppVersion
}

func (s *Stack) waitForNode(ctx context.Context, client kubernetes.Interface, name string) error {
	return s.poll(ctx, "node "+name+" to be Ready", func(ctx context.Context) error {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				for _, t := range node.Spec.Taints {
					if t.Key == corev1.TaintNodeNotReady {
						return fmt.Errorf("still tainted: %v", node.Spec.Taints)
					}
				}
				return nil
			}
		}
		return errors.New("not Ready yet")
	})
}

// poll runs check until it succeeds, a control-plane component exits or a minute has passed.
func (s *Stack) poll(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return pollUntil(ctx, what, check, s.control.exited)
}

// anyCompositeController fails until a CompositeController exists.
func (s *Stack) anyCompositeController(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(s.Admin)
	if err != nil {
		return err
	}
	list, err := dyn.Resource(compositeControllers).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	if len(list.Items) == 0 {
		return errors.New("none yet")
	}
	return nil
}

// waitForControllers waits until Metacontroller has started every CompositeController the chart
// installed, which it announces with an Event each: until then an application would wait for
// Metacontroller's next discovery. Events last seen before since are of an earlier install.
func (s *Stack) waitForControllers(ctx context.Context, client kubernetes.Interface, since time.Time) error {
	dyn, err := dynamic.NewForConfig(s.Admin)
	if err != nil {
		return err
	}
	list, err := dyn.Resource(compositeControllers).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the CompositeControllers: %w", err)
	}
	return s.poll(ctx, "Metacontroller to start the chart's controllers", func(ctx context.Context) error {
		events, err := client.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=CompositeController,reason=Started"})
		if err != nil {
			return err
		}
		started := map[string]bool{}
		for _, e := range events.Items {
			// Event times have a second's precision.
			if !e.LastTimestamp.Time.Before(since.Truncate(time.Second)) {
				started[e.InvolvedObject.Name] = true
			}
		}
		for _, cc := range list.Items {
			if !started[cc.GetName()] {
				return fmt.Errorf("%s not started", cc.GetName())
			}
		}
		return nil
	})
}

// supervise keeps the control plane's processes and the hook server's host process running
// (supervise.go) and watches etcd, which runs in this process: it cannot be restarted apart from
// it, so its failure is the cluster's.
func (s *Stack) supervise(ctx context.Context, policy restartPolicy, report func(string)) {
	components := slices.Clone(s.control.components)
	for _, c := range []*component{s.hooks, s.metacontroller} {
		if c != nil {
			components = append(components, c)
		}
	}
	for _, c := range components {
		// Each supervision ends on its own too: an uninstalled operator's host processes stop
		// for good (UninstallOperator).
		componentCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		c.unsupervise = func() { cancel(); <-done }
		s.running.Go(func() {
			defer close(done)
			if err := c.supervise(componentCtx, policy, report); err != nil {
				s.fail(err)
			}
		})
	}
	s.running.Go(func() {
		select {
		case <-ctx.Done():
		case err := <-s.control.etcd.failed():
			s.fail(fmt.Errorf("etcd stopped: %w", err))
		}
	})
}

// Failed delivers why the cluster cannot go on, once: a component that kept exiting, etcd or the
// kubelet stopping. Nothing restarts then; the caller stops the stack.
func (s *Stack) Failed() <-chan error { return s.failed }

func (s *Stack) fail(err error) {
	s.failOnce.Do(func() { s.failed <- err })
}

// Stop stops the node (its pods first), the controllers, the hook server's host process, the
// control plane and etcd.
func (s *Stack) Stop() {
	if s.cancel != nil {
		s.cancel()
	}
	s.running.Wait()
	if s.metacontroller != nil {
		s.metacontroller.stop(10 * time.Second)
	}
	if s.hooks != nil {
		s.hooks.stop(10 * time.Second)
	}
	for _, c := range s.kubeflowOnHost {
		c.stop(10 * time.Second)
	}
	if s.Node != nil {
		s.Node.Stop()
	}
	if s.control != nil {
		s.control.Stop()
	}
}

// SetChartValues upgrades the release with --set-json key=value arguments on top of its current
// values, as an administrator changes the settings of an installed chart, and waits for its Pods
// to be ready; a value of null restores the chart's default.
func (s *Stack) SetChartValues(ctx context.Context, setJSON ...string) error {
	s.upgradeMu.Lock()
	defer s.upgradeMu.Unlock()
	return s.helm.upgrade(ctx, "sparkhooks", s.chart, SparkhooksNamespace, setJSON, s.skipSchemaValidation)
}

// AddJobNamespace creates a namespace and makes it one of the chart's spark.jobNamespaces, as an
// administrator onboards a team: helm upgrade gives it the driver's ServiceAccount, Role and
// RoleBinding and puts it under the validating webhook.
func (s *Stack) AddJobNamespace(ctx context.Context, name string, labels map[string]string) error {
	client, err := kubernetes.NewForConfig(s.Admin)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	s.upgradeMu.Lock()
	defer s.upgradeMu.Unlock()
	out, err := s.helm.run(ctx, "get", "values", "sparkhooks", "--namespace", SparkhooksNamespace, "--all", "--output", "json")
	if err != nil {
		return err
	}
	var values struct {
		Spark struct {
			JobNamespaces []string `json:"jobNamespaces"`
		} `json:"spark"`
	}
	if err := json.Unmarshal([]byte(out), &values); err != nil {
		return fmt.Errorf("reading the release's values: %w", err)
	}
	if slices.Contains(values.Spark.JobNamespaces, name) {
		return nil
	}
	list, err := json.Marshal(append(values.Spark.JobNamespaces, name))
	if err != nil {
		return err
	}
	return s.helm.upgrade(ctx, "sparkhooks", s.chart, SparkhooksNamespace, []string{"spark.jobNamespaces=" + string(list)}, s.skipSchemaValidation)
}
