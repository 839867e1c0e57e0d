// Package simkubelet is the node of the sandbox's simulated mode (sparkhooks-local --simulate):
// a kubelet that plays the phases of the pods kube-scheduler binds to it instead of running
// them, for a machine where the process kubelet cannot run pods (it needs root and the Spark
// images). To the control plane it is the process kubelet's node: it registers the Node with the
// machine's capacity and keeps it Ready with its Lease (prockubelet.Node), writes the pods'
// statuses as the node (system:node:<name>, so the Node authorizer and NodeRestriction judge
// it), and serves kubectl logs through the kubelet API (prockubelet.KubeletAPI), where every log
// says that nothing ran.
//
// It plays a pod as its restart policy says the program would behave: a pod that may end
// (Never, OnFailure: drivers, Jobs) succeeds after RunTime; one that always restarts (Spark
// Connect servers, StatefulSet pods) keeps running until deleted.
package simkubelet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// SimulatedLog is what `kubectl logs` shows of every container of a simulated pod.
const SimulatedLog = "sparkhooks-local is in simulated mode: this pod's phases were played, nothing was executed.\nPrepare the local Spark images (make spark-images) and restart it to run Spark for real.\n"

// Config configures a Kubelet.
type Config struct {
	// Client is the kubelet's own client, as the node (system:node:<NodeName>).
	Client   kubernetes.Interface
	NodeName string
	// NodeIP is the node's InternalIP, where the kubelet API listens (on a free port the Node
	// reports) and the address pods report as status.hostIP.
	NodeIP netip.Addr
	// ServingCert and ClientCAs secure the kubelet API as prockubelet.KubeletAPI says.
	ServingCert tls.Certificate
	ClientCAs   *x509.CertPool
	// Capacity replaces what the machine reports for the resources it names.
	Capacity corev1.ResourceList
	// Taints are the taints the Node is created with.
	Taints []corev1.Taint
	// StateDir is the kubelet's directory; its filesystem is the node's ephemeral storage.
	StateDir string
	// StartDelay is how long a bound pod takes to run; RunTime how long a pod that may end runs
	// before it succeeds.
	StartDelay, RunTime time.Duration
	Logf                func(format string, args ...any)
	Clock               clock.Clock
}

// Kubelet plays the pods bound to its node.
type Kubelet struct {
	cfg  Config
	node *prockubelet.Node
	pods corelisters.PodLister

	mu sync.Mutex
	// finishing tells, for every pod seen, whether its deletion is being played.
	finishing map[types.UID]bool
	nextIP    int
	wg        sync.WaitGroup
}

// New checks the configuration and measures the machine for the Node; Run starts the kubelet.
func New(cfg Config) (*Kubelet, error) {
	if len(cfg.ServingCert.Certificate) == 0 || cfg.ClientCAs == nil {
		return nil, errors.New("simkubelet: ServingCert and ClientCAs are required for the kubelet API")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("simkubelet: %w", err)
	}
	node, err := prockubelet.NewNode(prockubelet.NodeConfig{
		Client: cfg.Client, Name: cfg.NodeName, IP: cfg.NodeIP, Runtime: "simulated",
		Capacity: cfg.Capacity, Taints: cfg.Taints, StateDir: cfg.StateDir, Logf: cfg.Logf, Now: cfg.Clock.Now,
	})
	if err != nil {
		return nil, fmt.Errorf("simkubelet: %w", err)
	}
	return &Kubelet{cfg: cfg, node: node, finishing: map[types.UID]bool{}}, nil
}

// Run serves the kubelet API, keeps the Node Ready and plays the pods bound to it until ctx
// ends. The Node stays, as a stopped kubelet leaves it.
func (k *Kubelet) Run(ctx context.Context) error {
	listener, err := net.Listen("tcp", net.JoinHostPort(k.cfg.NodeIP.String(), "0"))
	if err != nil {
		return fmt.Errorf("listening for the kubelet API: %w", err)
	}
	api := prockubelet.KubeletAPI{ServingCert: k.cfg.ServingCert, ClientCAs: k.cfg.ClientCAs, Logs: k.logs, Logf: k.cfg.Logf}
	server, served := api.Serve(listener)
	defer server.Close()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Pods of this node only: the Node authorizer lets a node list no others.
	factory := informers.NewSharedInformerFactoryWithOptions(k.cfg.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", k.cfg.NodeName).String()
	}))
	informer := factory.Core().V1().Pods()
	k.pods = informer.Lister()
	handle := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			k.observe(runCtx, pod)
		}
	}
	forget := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if pod, ok := obj.(*corev1.Pod); ok {
			k.mu.Lock()
			delete(k.finishing, pod.UID)
			k.mu.Unlock()
		}
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, obj any) { handle(obj) }, DeleteFunc: forget}); err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}
	k.wg.Go(func() { k.node.KeepReady(runCtx, listener.Addr().(*net.TCPAddr).Port) })
	factory.Start(runCtx.Done())

	select {
	case <-ctx.Done():
		err = nil
	case err = <-served:
		err = fmt.Errorf("serving the kubelet API: %w", err)
	}
	cancel()
	factory.Shutdown()
	k.wg.Wait()
	return err
}

// observe starts playing a new pod and finishes a deleted one.
func (k *Kubelet) observe(ctx context.Context, pod *corev1.Pod) {
	if pod.Spec.NodeName != k.cfg.NodeName {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	finishing, seen := k.finishing[pod.UID]
	if pod.DeletionTimestamp != nil {
		if !finishing {
			k.finishing[pod.UID] = true
			k.wg.Go(func() { k.finish(ctx, pod) })
		}
		return
	}
	if seen || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	k.finishing[pod.UID] = false
	k.nextIP++
	// Addresses mean nothing here (no pod network); they are distinct, and outside the Services'
	// range, so that EndpointSlices and Spark's driver address look as in a cluster.
	ip := fmt.Sprintf("10.254.%d.%d", k.nextIP/250, 1+k.nextIP%250)
	k.wg.Go(func() { k.play(ctx, pod, ip) })
}

// play starts the pod after StartDelay and, if its program may end, ends it after RunTime.
func (k *Kubelet) play(ctx context.Context, pod *corev1.Pod, ip string) {
	if !k.sleep(ctx, k.cfg.StartDelay) {
		return
	}
	now := metav1.NewTime(k.cfg.Clock.Now())
	k.updateStatus(ctx, pod, func(p *corev1.Pod) bool {
		if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
			return false
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.HostIP, p.Status.HostIPs = k.cfg.NodeIP.String(), []corev1.HostIP{{IP: k.cfg.NodeIP.String()}}
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		p.Status.StartTime = &now
		for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			setCondition(&p.Status, c, corev1.ConditionTrue, "", now)
		}
		p.Status.InitContainerStatuses = initContainerStatuses(p, now)
		p.Status.ContainerStatuses = containerStatuses(p.Spec.Containers, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, true)
		return true
	})
	if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || !k.sleep(ctx, k.cfg.RunTime) {
		return
	}
	k.terminate(ctx, pod)
}

// finish ends a deleted pod's containers, as after SIGTERM, and removes the pod, as a kubelet
// does once they have stopped.
func (k *Kubelet) finish(ctx context.Context, pod *corev1.Pod) {
	k.terminate(ctx, pod)
	zero := int64(0)
	uid := pod.UID
	err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		k.cfg.Logf("simulated pod %s/%s: delete: %v", pod.Namespace, pod.Name, err)
	}
}

// terminate reports the pod's containers exited 0 and the pod Succeeded.
func (k *Kubelet) terminate(ctx context.Context, pod *corev1.Pod) {
	now := metav1.NewTime(k.cfg.Clock.Now())
	k.updateStatus(ctx, pod, func(p *corev1.Pod) bool {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return false
		}
		started := now
		if p.Status.StartTime != nil {
			started = *p.Status.StartTime
		}
		p.Status.Phase = corev1.PodSucceeded
		for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.ContainersReady, corev1.PodReady} {
			setCondition(&p.Status, c, corev1.ConditionFalse, "PodCompleted", now)
		}
		p.Status.ContainerStatuses = containerStatuses(p.Spec.Containers, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", Message: "simulated: nothing was executed", StartedAt: started, FinishedAt: now,
		}}, false)
		return true
	})
}

// initContainerStatuses reports the init containers completed, but for sidecars (restartable
// init containers), which run beside the containers.
func initContainerStatuses(p *corev1.Pod, now metav1.Time) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range p.Spec.InitContainers {
		state := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}}
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar {
			state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		}
		out = append(out, containerStatuses([]corev1.Container{c}, state, sidecar)...)
	}
	return out
}

func containerStatuses(containers []corev1.Container, state corev1.ContainerState, ready bool) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range containers {
		started := ready
		out = append(out, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "simulated://" + c.Image, ContainerID: "simulated://" + c.Name,
			State: *state.DeepCopy(), Ready: ready, Started: &started,
		})
	}
	return out
}

// setCondition sets a pod condition, keeping its transition time while its status holds.
func setCondition(status *corev1.PodStatus, t corev1.PodConditionType, value corev1.ConditionStatus, reason string, now metav1.Time) {
	i := slices.IndexFunc(status.Conditions, func(c corev1.PodCondition) bool { return c.Type == t })
	if i < 0 {
		status.Conditions = append(status.Conditions, corev1.PodCondition{Type: t})
		i = len(status.Conditions) - 1
	}
	c := &status.Conditions[i]
	if c.Status != value {
		c.LastTransitionTime = now
	}
	c.Status, c.Reason = value, reason
}

// updateStatus changes the pod's status through the status subresource, if change says so.
func (k *Kubelet) updateStatus(ctx context.Context, pod *corev1.Pod, change func(*corev1.Pod) bool) {
	pods := k.cfg.Client.CoreV1().Pods(pod.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || fresh.UID != pod.UID || !change(fresh) {
			return err
		}
		_, err = pods.UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		k.cfg.Logf("simulated pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// logs answers the kubelet API's /containerLogs: the pod and container must exist, as for a
// kubelet; the log is SimulatedLog.
func (k *Kubelet) logs(namespace, name, container string, _ *corev1.PodLogOptions) (prockubelet.ContainerLog, error) {
	pod, err := k.pods.Pods(namespace).Get(name)
	if err != nil {
		return nil, &prockubelet.APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("pod %q does not exist", name)}
	}
	all := append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...)
	if !slices.ContainsFunc(all, func(c corev1.Container) bool { return c.Name == container }) {
		return nil, &prockubelet.APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("container %q not found in pod %q", container, name)}
	}
	return textLog(SimulatedLog), nil
}

// textLog is a log that is a fixed text.
type textLog string

func (l textLog) WriteTo(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, string(l))
	return err
}

func (textLog) Close() error { return nil }

func (k *Kubelet) sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-k.cfg.Clock.After(d):
		return true
	}
}
