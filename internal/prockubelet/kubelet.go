// Package prockubelet is a kubelet (and a one-node scheduler) that runs each Pod as local
// processes, without container images or a container runtime: every container is a process in
// its own mount and UTS namespace, in a network namespace per pod, on a root filesystem made of a
// local image layer over the host's root, with the pod's volumes at the paths the pod names.
// It reports what a real kubelet reports (phases, container states, exit codes, termination
// messages, readiness from real probes) and keeps the containers' logs for pods/log.
//
// It needs root (namespaces, mounts, a bridge). Where it differs from a real kubelet is listed
// in docs/process-kubelet.md.
package prockubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Config configures a Kubelet.
type Config struct {
	Client kubernetes.Interface
	// NodeName is the node the kubelet binds pods to and runs pods of.
	NodeName string
	// Namespace limits the kubelet to one namespace; empty means all.
	Namespace string
	Images    *ImageTable
	Network   *Network
	// StateDir holds one directory per pod: volumes, logs, the hosts file, container scratch.
	// It must not be under a directory the containers see from the host (/usr, /var, /opt...).
	StateDir string
	// APIServer is the host:port that pods reach as kubernetes.default.svc:443.
	APIServer string
	// CACert is the certificate bundle pods trust the API server with (ca.crt).
	CACert []byte
	Tokens TokenIssuer
	// InitBinary is an executable that calls podinit.Reexec before anything else; the default is
	// the running executable.
	InitBinary string
	Logf       func(format string, args ...any)
	Now        func() time.Time
}

// Kubelet runs the pods bound to its node.
type Kubelet struct {
	cfg Config

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
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, err
	}
	return &Kubelet{cfg: cfg, runners: map[types.UID]*podRunner{}, started: map[string]int{}, hostsGen: make(chan struct{}, 1)}, nil
}

// hostDirsSeenByContainers are the host directories a container's root includes (see podinit).
var hostDirsSeenByContainers = []string{"/bin", "/etc", "/home", "/lib", "/lib64", "/opt", "/root", "/sbin", "/srv", "/usr", "/var"}

// Run runs pods until ctx ends, then stops every container (SIGTERM, then SIGKILL after the
// grace period) and removes the pods' network namespaces.
func (k *Kubelet) Run(ctx context.Context) error {
	if err := k.cfg.Network.Forward(ctx, 443, k.cfg.APIServer); err != nil {
		return err
	}
	var options []informers.SharedInformerOption
	if k.cfg.Namespace != "" {
		options = append(options, informers.WithNamespace(k.cfg.Namespace))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(k.cfg.Client, 0, options...)
	podInformer := factory.Core().V1().Pods()
	svcInformer := factory.Core().V1().Services()
	k.pods, k.services = podInformer.Lister(), svcInformer.Lister()

	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handle := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			if tomb, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
				pod, ok = tomb.Obj.(*corev1.Pod)
			}
		}
		if ok {
			k.observe(runCtx, pod)
		}
		k.hostsChanged()
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: handle, UpdateFunc: func(_, cur any) { handle(cur) }, DeleteFunc: k.deleted(handle),
	}); err != nil {
		return err
	}
	if _, err := svcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { k.hostsChanged() }, UpdateFunc: func(any, any) { k.hostsChanged() }, DeleteFunc: func(any) { k.hostsChanged() },
	}); err != nil {
		return err
	}
	factory.Start(runCtx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go k.rewriteHosts(runCtx)

	<-ctx.Done()
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
	factory.Shutdown()
	return nil
}

func (k *Kubelet) deleted(handle func(any)) func(any) {
	return func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			if tomb, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
				pod, ok = tomb.Obj.(*corev1.Pod)
			}
		}
		if ok {
			k.mu.Lock()
			r := k.runners[pod.UID]
			k.mu.Unlock()
			if r != nil {
				r.removed()
			}
		}
		k.hostsChanged()
	}
}

// observe binds an unscheduled pod, starts a runner for a pod of this node, and passes updates
// (a deletion timestamp) to its runner.
func (k *Kubelet) observe(ctx context.Context, pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		if pod.DeletionTimestamp == nil {
			go k.bind(ctx, pod)
		} else {
			go k.finalDelete(ctx, pod)
		}
		return
	}
	if pod.Spec.NodeName != k.cfg.NodeName {
		return
	}
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

// bind plays the scheduler: every pod fits the one node.
func (k *Kubelet) bind(ctx context.Context, pod *corev1.Pod) {
	err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: k.cfg.NodeName},
	}, metav1.CreateOptions{})
	if err == nil {
		return
	}
	// An API server without pods/binding: set the node as the binding would.
	_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || fresh.UID != pod.UID || fresh.Spec.NodeName != "" || fresh.DeletionTimestamp != nil {
			return nil
		}
		fresh.Spec.NodeName = k.cfg.NodeName
		_, err = k.cfg.Client.CoreV1().Pods(pod.Namespace).Update(ctx, fresh, metav1.UpdateOptions{})
		return err
	})
}

// finalDelete removes a pod that was deleted before any kubelet ran it.
func (k *Kubelet) finalDelete(ctx context.Context, pod *corev1.Pod) {
	zero := int64(0)
	uid := pod.UID
	_ = k.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid},
	})
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

// podByName finds a running pod's runner for the log endpoint.
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
