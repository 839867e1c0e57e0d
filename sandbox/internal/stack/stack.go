// Package stack starts the whole local cluster the sandbox (make run) and the end-to-end suites
// run on, from options, and stops it: etcd, the real kube-apiserver, kube-controller-manager and
// kube-scheduler (k8s.io/kubernetes, built by hack/kube), the process kubelet as the one node,
// Metacontroller (the real one from its own Helm chart, or the local stand-in where it is absent)
// and sparkhooks installed with Helm from chart/, as a user installs it. Both the hook server and
// Metacontroller run as the Pods their charts describe, on the process kubelet, from local image
// layers holding the binaries: no registry is needed, and the charts' RBAC, probes, mounts,
// security contexts and Services are what a cluster would run.
package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/localcluster"
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
	// Helm is the helm binary (hack/helm/build.sh).
	Helm string
	// Chart is sparkhooks' chart directory; ChartSet are --set arguments for its install.
	Chart    string
	ChartSet []string
	// Sparkhooks is the binary the chart's Deployment runs (the image's /sparkhooks).
	Sparkhooks string
	// Metacontroller is the upstream binary; empty runs the local stand-in instead.
	Metacontroller string
	// OwnControllers: the caller runs the CompositeControllers itself (the contract suite's
	// stand-ins, one per test namespace). The chart goes in without its CompositeControllers
	// (metacontroller.enabled=false) and neither Metacontroller nor the stand-in starts.
	OwnControllers bool
	// MetacontrollerChart is Metacontroller's chart directory and MetacontrollerValues the values
	// file it is installed with (chart/metacontroller-values.yaml).
	MetacontrollerChart, MetacontrollerValues string
	// Images are the Spark images the kubelet runs; the stack adds sparkhooks' and Metacontroller's.
	Images *prockubelet.ImageTable
	// Network is the node's pod network.
	Network *prockubelet.Network
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
}

// Stack is a running cluster.
type Stack struct {
	// Kubeconfig is a cluster-admin kubeconfig file; Admin the same as a client configuration.
	Kubeconfig string
	Admin      *restclient.Config
	// APIAddress is where the API server listens.
	APIAddress string
	// Kubelet is the node when it is the process kubelet, Node when it is a real one.
	Kubelet *prockubelet.Kubelet
	Node    *realnode.Node
	// Controller says what runs the CompositeControllers: "Metacontroller v4.17.2" or the stand-in.
	Controller string
	// Controllers are the stand-in's controllers by CompositeController name (none with the real
	// Metacontroller).
	Controllers map[string]*localcluster.ContractController
	// LogDir holds one log per component.
	LogDir string

	etcd    *localcluster.Etcd
	control *controlPlane
	helm    helmRunner
	chart   string
	// jobNamespacesMu serialises the release's upgrades.
	jobNamespacesMu sync.Mutex
	cancel          context.CancelFunc
	running         sync.WaitGroup
}

// Start starts the cluster and returns once the charts are installed and their Pods are ready.
// On error everything started so far is stopped again.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	begin := time.Now()
	phase := func(what string) { o.Logf("stack: %s after %s", what, time.Since(begin).Round(10*time.Millisecond)) }
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Stack{cancel: cancel, LogDir: filepath.Join(o.Dir, "logs"), Controllers: map[string]*localcluster.ContractController{}}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if s.etcd, err = localcluster.StartEtcd(filepath.Join(o.Dir, "etcd")); err != nil {
		return nil, err
	}
	address, err := concreteAddress(o.APIAddress)
	if err != nil {
		return nil, err
	}
	s.control, err = startControlPlane(ctx, controlPlaneOptions{
		dir: o.Dir, binDir: o.KubeBinDir, etcdURL: s.etcd.ClientURL, address: address,
		nodeIP: o.Network.Gateway, now: time.Now(),
	})
	if err != nil {
		if strings.Contains(err.Error(), "address already in use") {
			return nil, fmt.Errorf("%s is in use: stop what listens there or choose another address: %w", address, err)
		}
		return nil, err
	}
	s.Kubeconfig, s.Admin, s.APIAddress = s.control.kubeconfig, s.control.admin, address
	phase("the API server is ready")
	client, err := kubernetes.NewForConfig(s.Admin)
	if err != nil {
		return nil, err
	}

	chartImages, err := o.chartImages()
	if err != nil {
		return nil, err
	}
	var importSparkImages func(context.Context) error
	if o.RealNode != "" {
		if importSparkImages, err = s.startRealNode(ctx, runCtx, o, chartImages); err != nil {
			return nil, err
		}
		phase("the real node runs")
	} else if s.Kubelet, err = s.startKubelet(runCtx, o, o.Images.With(chartImages)); err != nil {
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
	go s.watchControlPlane(runCtx, o.Logf)
	return s, nil
}

// installCharts installs sparkhooks' chart and, as the options say, Metacontroller from its own
// chart or the stand-in, and returns once the controllers run.
func (s *Stack) installCharts(ctx, runCtx context.Context, o Options, client kubernetes.Interface, phase func(string)) error {
	helm := helmRunner{binary: o.Helm, kubeconfig: s.Kubeconfig, home: filepath.Join(o.Dir, "helm"), logDir: s.LogDir}
	s.helm, s.chart = helm, o.Chart
	tolerations, err := tolerationsValue(o.NodeTaints)
	if err != nil {
		return err
	}
	chartSet := o.ChartSet
	switch {
	case o.OwnControllers:
		s.Controller = "the caller's controllers"
		chartSet = append(slices.Clone(chartSet), "metacontroller.enabled=false")
	case o.Metacontroller != "":
		s.Controller = "Metacontroller " + chartAppVersion(o.MetacontrollerChart)
		// Its CRDs first, as an administrator applies them, so that Metacontroller starts after
		// sparkhooks' CRDs exist and finds them at once rather than at its next discovery.
		if _, err := localcluster.Kubectl(ctx, s.Kubeconfig, "apply", "--server-side", "-f", filepath.Join(o.MetacontrollerChart, "crds")); err != nil {
			return fmt.Errorf("applying Metacontroller's CRDs: %w", err)
		}
	default:
		s.Controller = "the local stand-in for Metacontroller (not Metacontroller: docs/local.md)"
		if err := installCompositeControllerCRD(ctx, s.Admin); err != nil {
			return err
		}
	}
	if err := helm.install(ctx, "sparkhooks", o.Chart, SparkhooksNamespace, nil, chartSet, tolerations, true); err != nil {
		return err
	}
	phase("sparkhooks' chart is installed and its Pods are ready")
	switch {
	case o.OwnControllers:
	case o.Metacontroller != "":
		// Not waited for by Helm: the controllers' Events below say more than its readiness
		// probe. One replica: the node is one machine.
		if err := helm.install(ctx, "metacontroller", o.MetacontrollerChart, MetacontrollerNamespace, []string{o.MetacontrollerValues}, []string{"replicas=1"}, tolerations, false); err != nil {
			return err
		}
		if err := s.waitForControllers(ctx, client); err != nil {
			return err
		}
	default:
		if err := s.startStandIn(ctx, runCtx, o); err != nil {
			return err
		}
	}
	return nil
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
		{"the sparkhooks binary", o.Sparkhooks},
	} {
		if info, err := os.Stat(f.path); err != nil || info.IsDir() {
			return fmt.Errorf("no %s at %q", f.what, f.path)
		}
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
	if _, err := exec.LookPath("kubectl"); err != nil {
		return errors.New("kubectl is not on PATH: install it (Debian: apt-get install kubectl)")
	}
	if o.Network == nil || o.NodeName == "" || o.Dir == "" {
		return errors.New("stack: Dir, Network and NodeName are required")
	}
	return nil
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
		"ghcr.io/sparkhooks/sparkhooks:" + chartAppVersion(o.Chart): {
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

// tolerationsValue is the --set-json argument that makes a chart's Pods tolerate taints, or none.
func tolerationsValue(taints []corev1.Taint) ([]string, error) {
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
	return []string{"tolerations=" + string(data)}, nil
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

// waitForControllers waits until Metacontroller has started every CompositeController the chart
// installed, which it announces with an Event each: until then an application would wait for
// Metacontroller's next discovery.
func (s *Stack) waitForControllers(ctx context.Context, client kubernetes.Interface) error {
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
			started[e.InvolvedObject.Name] = true
		}
		for _, cc := range list.Items {
			if !started[cc.GetName()] {
				return fmt.Errorf("%s not started", cc.GetName())
			}
		}
		return nil
	})
}

// watchControlPlane reports a component that exits while the cluster runs.
func (s *Stack) watchControlPlane(ctx context.Context, logf func(string, ...any)) {
	for _, p := range s.control.processes {
		go func() {
			select {
			case <-ctx.Done():
			case <-p.exited:
				logf("%v", p.failure())
			}
		}()
	}
}

// Stop stops the node (its pods first), the controllers, the control plane and etcd.
func (s *Stack) Stop() {
	if s.cancel != nil {
		s.cancel()
	}
	s.running.Wait()
	if s.Node != nil {
		s.Node.Stop()
	}
	if s.control != nil {
		s.control.stop()
	}
	if s.etcd != nil {
		s.etcd.Stop()
	}
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
	s.jobNamespacesMu.Lock()
	defer s.jobNamespacesMu.Unlock()
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
	return s.helm.upgrade(ctx, "sparkhooks", s.chart, SparkhooksNamespace, []string{"spark.jobNamespaces=" + string(list)})
}
