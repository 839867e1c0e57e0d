// Package prockubelet is a kubelet that runs each Pod as local processes, without container
// images or a container runtime: every container is a process in its own mount and UTS
// namespace, in a network namespace per pod, on a root filesystem made of a local image layer
// over the host's root, with the pod's volumes at the paths the pod names.
// Toward the control plane it is a node: it registers its Node, keeps its status and Lease
// fresh, runs the pods kube-scheduler binds to it, reports what a real kubelet reports (phases,
// container states, exit codes, termination messages, readiness from real probes), asks the
// TokenRequest API for the pods' service-account tokens, and serves the kubelet API that
// kube-apiserver calls for pods/log and pods/portforward.
//
// It needs root (namespaces, mounts, a bridge). Where it differs from a real kubelet is listed
// in docs/process-kubelet.md.
package prockubelet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// DefaultPort is the kubelet API's port when Config.Port is nil, a kubelet's usual 10250.
const DefaultPort = 10250

// DefaultKubeletVersion is the version the Node reports when Config.KubeletVersion is empty:
// the control plane this kubelet is written against.
const DefaultKubeletVersion = "v1.36.3"

// Config configures a Kubelet.
type Config struct {
	// Client is the kubelet's own client: as a node (user system:node:<NodeName>, group
	// system:nodes), the Node authorizer and NodeRestriction allow it what it does.
	Client kubernetes.Interface
	// NodeName is the Node the kubelet registers and runs the pods of.
	NodeName string
	// NodeIP is the node's InternalIP: the kubelet API listens there and pods report it as
	// status.hostIP. The default is the pod network's gateway, which the machine and every pod
	// reach.
	NodeIP netip.Addr
	// Port is the kubelet API's port on NodeIP: nil means DefaultPort, 0 a free port. The Node
	// reports the port in use (status.daemonEndpoints), which is where kube-apiserver calls.
	Port *int
	// ServingCert is the kubelet API's TLS certificate; kube-apiserver checks it against
	// --kubelet-certificate-authority if it has one, at the address it calls (NodeIP).
	ServingCert tls.Certificate
	// ClientCAs verify the client certificates of kubelet API callers (kube-apiserver's
	// --kubelet-client-certificate); a request without one they verify is refused with 401.
	ClientCAs *x509.CertPool
	// KubeletVersion is the Node's status.nodeInfo.kubeletVersion; DefaultKubeletVersion if empty.
	KubeletVersion string
	// Capacity replaces what the machine reports for the resources it names (cpu, memory,
	// ephemeral-storage, pods); allocatable follows. Nothing enforces requests here, so a test
	// cluster may offer the scheduler more than the machine has.
	Capacity corev1.ResourceList
	// RegisterWithTaints are the taints the Node is created with (the kubelet's
	// --register-with-taints), to keep workloads off a node meant for system Pods.
	RegisterWithTaints []corev1.Taint
	// Namespace limits the kubelet to one namespace; empty means all.
	Namespace string
	// Images are the images present; ImageSource, if set, prepares the ones a pod names that are
	// not (a pull), and PullReport receives the pulls' progress.
	Images      *ImageTable
	ImageSource ImageSource
	PullReport  func(PullReport)
	Network     *Network
	// StateDir holds one directory per pod: volumes, logs, the hosts file, container scratch.
	// It must not be under a directory the containers see from the host (/usr, /var, /opt...).
	StateDir string
	// APIServer is the host:port that pods reach as kubernetes.default.svc:443.
	APIServer string
	// InitBinary is an executable that calls podinit.Reexec before anything else; the default is
	// the running executable.
	InitBinary string
	Logf       func(format string, args ...any)
	Now        func() time.Time
}

// Kubelet runs the pods bound to its node.
type Kubelet struct {
	cfg    Config
	node   *Node
	images *imageStore

	mu       sync.Mutex
	runners  map[types.UID]*podRunner
	pods     corelisters.PodLister
	services corelisters.ServiceLister
	hostsGen chan struct{}
	stopping bool
	// started counts the container processes started per namespace, for tests and the sandbox
	// to report what a run cost.
	started map[string]int
	wg      sync.WaitGroup
}

// New checks the configuration and returns a kubelet; Run starts it.
func New(cfg Config) (*Kubelet, error) {
	if cfg.Client == nil || cfg.Network == nil || cfg.StateDir == "" || cfg.NodeName == "" {
		return nil, errors.New("prockubelet: Client, Network, StateDir and NodeName are required")
	}
	if len(cfg.ServingCert.Certificate) == 0 || cfg.ClientCAs == nil {
		return nil, errors.New("prockubelet: ServingCert and ClientCAs are required for the kubelet API")
	}
	for _, hidden := range hostDirsSeenByContainers {
		if cfg.StateDir == hidden || strings.HasPrefix(cfg.StateDir, hidden+"/") {
			return nil, fmt.Errorf("prockubelet: the state directory %s is under %s, which containers see from the host", cfg.StateDir, hidden)
		}
	}
	if cfg.InitBinary == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("prockubelet: finding the running executable for podinit: %w", err)
		}
		cfg.InitBinary = self
	}
	if !cfg.NodeIP.IsValid() {
		cfg.NodeIP = cfg.Network.Gateway
	}
	if cfg.Port == nil {
		port := DefaultPort
		cfg.Port = &port
	}
	if cfg.KubeletVersion == "" {
		cfg.KubeletVersion = DefaultKubeletVersion
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, err
	}
	node, err := NewNode(NodeConfig{
		Client: cfg.Client, Name: cfg.NodeName, IP: cfg.NodeIP, KubeletVersion: cfg.KubeletVersion, Runtime: "prockubelet",
		Capacity: cfg.Capacity, Taints: cfg.RegisterWithTaints, StateDir: cfg.StateDir, Logf: cfg.Logf, Now: cfg.Now,
	})
	if err != nil {
		return nil, fmt.Errorf("prockubelet: %w", err)
	}
	return &Kubelet{cfg: cfg, node: node, runners: map[types.UID]*podRunner{}, started: map[string]int{}, hostsGen: make(chan struct{}, 1)}, nil
}

// hostDirsSeenByContainers are the host directories a container's root includes (see podinit).
var hostDirsSeenByContainers = []string{"/bin", "/etc", "/home", "/lib", "/lib64", "/opt", "/root", "/sbin", "/srv", "/usr", "/var"}

// Run serves the kubelet API on NodeIP, registers the Node and keeps it Ready with its Lease,
// and runs the pods bound to it until ctx ends; then it stops every container (SIGTERM, then
// SIGKILL after the grace period), removes the pods' network namespaces and stops serving. The
// Node stays, as a stopped kubelet leaves it.
func (k *Kubelet) Run(ctx context.Context) error {
	if err := k.cfg.Network.Forward(ctx, 443, k.cfg.APIServer); err != nil {
		return err
	}
	address := net.JoinHostPort(k.cfg.NodeIP.String(), strconv.Itoa(*k.cfg.Port))
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("listening for the kubelet API on %s: %w", address, err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	server, served := k.api().Serve(listener)

	// Pods of this node only: the Node authorizer lets a node list no others, and in a
	// one-node cluster they are every pod a Service can select.
	podFactory := informers.NewSharedInformerFactoryWithOptions(k.cfg.Client, 0, informers.WithNamespace(k.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", k.cfg.NodeName).String()
		}))
	serviceFactory := informers.NewSharedInformerFactoryWithOptions(k.cfg.Client, 0, informers.WithNamespace(k.cfg.Namespace))
	podInformer := podFactory.Core().V1().Pods()
	svcInformer := serviceFactory.Core().V1().Services()
	k.pods, k.services = podInformer.Lister(), svcInformer.Lister()

	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k.images = newImageStore(runCtx, k.cfg.Images, k.cfg.ImageSource, k.cfg.PullReport, k.cfg.Now)
	handle := func(obj any) {
		if pod, ok := podOf(obj); ok {
			k.observe(runCtx, pod)
		}
		k.hostsChanged()
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: handle, UpdateFunc: func(_, cur any) { handle(cur) }, DeleteFunc: k.deleted,
	}); err != nil {
		return err
	}
	if _, err := svcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { k.hostsChanged() }, UpdateFunc: func(any, any) { k.hostsChanged() }, DeleteFunc: func(any) { k.hostsChanged() },
	}); err != nil {
		return err
	}
	var heartbeat sync.WaitGroup
	heartbeat.Go(func() { k.node.KeepReady(runCtx, port) })
	podFactory.Start(runCtx.Done())
	serviceFactory.Start(runCtx.Done())
	podFactory.WaitForCacheSync(ctx.Done())
	serviceFactory.WaitForCacheSync(ctx.Done())
	go k.rewriteHosts(runCtx)

	select {
	case <-ctx.Done():
	case err = <-served:
		err = fmt.Errorf("serving the kubelet API: %w", err)
	}
	k.mu.Lock()
	k.stopping = true
	runners := make([]*podRunner, 0, len(k.runners))
	for _, r := range k.runners {
		runners = append(runners, r)
	}
	k.mu.Unlock()
	for _, r := range runners {
		r.shutdown()
	}
	k.wg.Wait()
	cancel()
	heartbeat.Wait()
	podFactory.Shutdown()
	serviceFactory.Shutdown()
	_ = server.Close()
	return err
}

// api is the kubelet API of this kubelet's pods.
func (k *Kubelet) api() KubeletAPI {
	return KubeletAPI{
		ServingCert: k.cfg.ServingCert, ClientCAs: k.cfg.ClientCAs, PortForward: k.servePortForward, Logf: k.cfg.Logf,
		Logs: func(namespace, pod, container string, opts *corev1.PodLogOptions) (ContainerLog, error) {
			logs, err := k.openLogs(namespace, pod, container, opts)
			if err != nil {
				return nil, err
			}
			return logs, nil
		},
	}
}

// podOf returns the pod an informer event is about, tombstones included.
func podOf(obj any) (*corev1.Pod, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	return pod, ok
}

// deleted ends the runner of a pod that is gone from the API.
func (k *Kubelet) deleted(obj any) {
	if pod, ok := podOf(obj); ok {
		k.mu.Lock()
		r := k.runners[pod.UID]
		k.mu.Unlock()
		if r != nil {
			r.removed()
		}
	}
	k.hostsChanged()
}

// observe starts a runner for a pod bound to this node and passes updates (a deletion
// timestamp) to its runner.
func (k *Kubelet) observe(ctx context.Context, pod *corev1.Pod) {
	k.mu.Lock()
	if k.stopping {
		k.mu.Unlock()
		return
	}
	r, ok := k.runners[pod.UID]
	if !ok {
		r = newPodRunner(k, pod)
		k.runners[pod.UID] = r
		k.wg.Add(1)
		go func() {
			defer k.wg.Done()
			r.run(ctx)
			k.mu.Lock()
			delete(k.runners, pod.UID)
			k.mu.Unlock()
		}()
	}
	k.mu.Unlock()
	r.update(pod)
}

func (k *Kubelet) hostsChanged() {
	select {
	case k.hostsGen <- struct{}{}:
	default:
	}
}

// rewriteHosts keeps every running pod's /etc/hosts in line with the Services and pods, as
// cluster DNS would answer.
func (k *Kubelet) rewriteHosts(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.hostsGen:
		}
		k.mu.Lock()
		runners := make([]*podRunner, 0, len(k.runners))
		for _, r := range k.runners {
			runners = append(runners, r)
		}
		k.mu.Unlock()
		for _, r := range runners {
			r.writeHosts()
		}
	}
}

// hostsFor renders the hosts file of pod at ip.
func (k *Kubelet) hostsFor(pod *corev1.Pod, ip string) string {
	if k.services == nil || k.pods == nil {
		return renderHosts(pod, ip, k.cfg.Network.Gateway.String(), nil, nil)
	}
	services, _ := k.services.List(labels.Everything())
	pods, _ := k.pods.List(labels.Everything())
	return renderHosts(pod, ip, k.cfg.Network.Gateway.String(), services, pods)
}

// event records an Event about the pod, as the kubelet's recorder does.
func (k *Kubelet) event(ctx context.Context, pod *corev1.Pod, eventType, reason, message string) {
	now := metav1.NewTime(k.cfg.Now())
	_, err := k.cfg.Client.CoreV1().Events(pod.Namespace).Create(ctx, &corev1.Event{
		// Named as client-go's recorder names them: a generated name may not end in a dot.
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1",
		},
		Reason: reason, Message: message, Type: eventType,
		Source:         corev1.EventSource{Component: "kubelet", Host: k.cfg.NodeName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}, metav1.CreateOptions{})
	if err != nil {
		k.cfg.Logf("event %s for pod %s/%s (%s): %v", reason, pod.Namespace, pod.Name, message, err)
	}
}

// podByName finds the runner of a pod of this node, for the kubelet API.
func (k *Kubelet) podByName(namespace, name string) *podRunner {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range k.runners {
		if r.namespace == namespace && r.name == name {
			return r
		}
	}
	return nil
}

func podDirName(pod *corev1.Pod) string {
	return filepath.Join(pod.Namespace + "_" + pod.Name + "_" + string(pod.UID))
}

// ContainersStarted returns how many container processes (restarts included) the kubelet has
// started for pods of namespace.
func (k *Kubelet) ContainersStarted(namespace string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.started[namespace]
}
