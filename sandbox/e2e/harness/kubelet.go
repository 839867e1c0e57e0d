//go:build e2e

package harness

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Kubelet is a fake kubelet of NodeName for one namespace. The real scheduler binds pods to the
// node; the Kubelet finishes the graceful deletion of pods bound there (terminated containers,
// then the final delete, as a kubelet does) and otherwise leaves them Pending until a test moves
// them with Start, Succeed, Fail, Evict or OOMKill. AddExecutors plays the Spark driver creating
// its executors. It also plays the schedulers a cluster may run besides kube-scheduler (YuniKorn,
// Volcano, …): a pod that names one is bound to NodeName as that scheduler would bind it.
type Kubelet struct {
	client    kubernetes.Interface
	namespace string
	// TerminationDelay is how long a deleted pod stays Terminating before it is gone.
	TerminationDelay time.Duration

	mu          sync.Mutex
	terminating map[string]bool
	nextIP      int
}

// NewKubelet returns a fake kubelet for namespace.
func NewKubelet(cfg *restclient.Config, namespace string) (*Kubelet, error) {
	// A kubelet's client limits, as the process kubelet has: at client-go's 5 a second, a test
	// that starts and stops many pods was paced by this client, not by the hooks.
	cfg = restclient.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Kubelet{
		client: client, namespace: namespace, TerminationDelay: 100 * time.Millisecond,
		terminating: map[string]bool{}, nextIP: 1,
	}, nil
}

// Run binds pods for other schedulers and terminates deleted pods until ctx ends.
func (k *Kubelet) Run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(k.client, 0, informers.WithNamespace(k.namespace))
	informer := factory.Core().V1().Pods().Informer()
	handle := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			go k.observe(ctx, pod)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, cur any) { handle(cur) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

func (k *Kubelet) observe(ctx context.Context, pod *corev1.Pod) {
	switch {
	case pod.Spec.NodeName == NodeName && pod.DeletionTimestamp != nil:
		k.terminate(ctx, pod)
	case pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && pod.Spec.SchedulerName != corev1.DefaultSchedulerName:
		k.bind(ctx, pod)
	}
}

// bind plays a scheduler other than kube-scheduler: the pod is bound to the fake node through
// the binding subresource, which also marks it scheduled. A pod bound meanwhile (or gone) makes
// the binding fail, which is the answer.
func (k *Kubelet) bind(ctx context.Context, pod *corev1.Pod) {
	_ = k.client.CoreV1().Pods(k.namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: NodeName},
	}, metav1.CreateOptions{})
}

// terminate finishes a graceful deletion like a kubelet: after TerminationDelay the containers
// are reported terminated and the pod is deleted for good.
func (k *Kubelet) terminate(ctx context.Context, pod *corev1.Pod) {
	k.mu.Lock()
	if k.terminating[string(pod.UID)] {
		k.mu.Unlock()
		return
	}
	k.terminating[string(pod.UID)] = true
	k.mu.Unlock()

	select {
	case <-ctx.Done():
		return
	case <-time.After(k.TerminationDelay):
	}
	// Only this pod: by the time the delay is over it may be gone, and a new pod of the same name
	// (the next attempt's driver) running in its place.
	_ = k.updateStatus(ctx, pod.Name, func(p *corev1.Pod) {
		if p.UID != pod.UID {
			return
		}
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
			p.Status.Phase = corev1.PodFailed
			terminateContainers(p, 143, "Error", "")
		}
	})
	uid := pod.UID
	zero := int64(0)
	_ = k.client.CoreV1().Pods(k.namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
}

// Start reports the pod running: every container started and ready, an IP, Ready conditions.
func (k *Kubelet) Start(ctx context.Context, name string) error {
	return k.updateStatus(ctx, name, func(p *corev1.Pod) {
		now := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		if p.Status.StartTime == nil {
			p.Status.StartTime = &now
		}
		if p.Status.PodIP == "" {
			p.Status.PodIP = k.allocateIP()
			p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
			p.Status.HostIP = hostIP
			p.Status.HostIPs = []corev1.HostIP{{IP: hostIP}}
		}
		yes := true
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: "docker-pullable://" + c.Image, Ready: true, Started: &yes,
				ContainerID: "containerd://" + string(p.UID) + "-" + c.Name,
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		for _, cond := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			setCondition(p, cond, corev1.ConditionTrue)
		}
	})
}

// Succeed reports every container exited 0 and the pod Succeeded.
func (k *Kubelet) Succeed(ctx context.Context, name string) error {
	return k.updateStatus(ctx, name, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodSucceeded
		terminateContainers(p, 0, "Completed", "")
		setCondition(p, corev1.PodReady, corev1.ConditionFalse)
		setCondition(p, corev1.ContainersReady, corev1.ConditionFalse)
	})
}

// Fail reports the Spark container (the first container) exited with exitCode and the pod Failed.
func (k *Kubelet) Fail(ctx context.Context, name string, exitCode int32) error {
	return k.updateStatus(ctx, name, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		terminateContainers(p, exitCode, "Error", "")
		setCondition(p, corev1.PodReady, corev1.ConditionFalse)
		setCondition(p, corev1.ContainersReady, corev1.ConditionFalse)
	})
}

// AddExecutors plays the Spark driver: it creates n running executor pods owned by the driver
// pod, labelled like Spark labels them (the driver's labels with spark-role=executor and
// spark-exec-id), and returns their names.
func (k *Kubelet) AddExecutors(ctx context.Context, driverName string, n int) ([]string, error) {
	driver, err := k.client.CoreV1().Pods(k.namespace).Get(ctx, driverName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("executors need their driver: %w", err)
	}
	image := ""
	if len(driver.Spec.Containers) > 0 {
		image = driver.Spec.Containers[0].Image
	}
	yes := true
	var names []string
	for i := 1; i <= n; i++ {
		labels := maps.Clone(driver.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		// Executors are created by the driver, not by the operator's controller.
		delete(labels, "controller-uid")
		labels["spark-role"] = "executor"
		labels["spark-exec-id"] = strconv.Itoa(i)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: driverName + "-exec-",
				Namespace:    k.namespace,
				Labels:       labels,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Pod", Name: driver.Name, UID: driver.UID, Controller: &yes,
				}},
			},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "spark-kubernetes-executor", Image: image}},
			},
		}
		created, err := k.client.CoreV1().Pods(k.namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return names, fmt.Errorf("creating executor %d: %w", i, err)
		}
		if err := k.waitBound(ctx, created.Name); err != nil {
			return names, err
		}
		if err := k.Start(ctx, created.Name); err != nil {
			return names, err
		}
		names = append(names, created.Name)
	}
	return names, nil
}

// waitBound waits until the scheduler has bound the pod to the fake node.
func (k *Kubelet) waitBound(ctx context.Context, name string) error {
	var node string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err := k.client.CoreV1().Pods(k.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = pod.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s not bound to a node: %w", k.namespace, name, err)
	}
	if node != NodeName {
		return fmt.Errorf("pod %s/%s bound to node %s, not the fake node %s", k.namespace, name, node, NodeName)
	}
	return nil
}

func (k *Kubelet) allocateIP() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	ip := fmt.Sprintf("10.244.%d.%d", k.nextIP/250, k.nextIP%250+1)
	k.nextIP++
	return ip
}

// updateStatus changes the status of a pod bound to the fake node through the status
// subresource, retrying on conflicts. A kubelet reports only the pods of its node.
func (k *Kubelet) updateStatus(ctx context.Context, name string, change func(*corev1.Pod)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := k.client.CoreV1().Pods(k.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Spec.NodeName != NodeName {
			return fmt.Errorf("bound to node %q, not the fake node %s", pod.Spec.NodeName, NodeName)
		}
		change(pod)
		_, err = k.client.CoreV1().Pods(k.namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("kubelet: pod %s/%s: %w", k.namespace, name, err)
	}
	return nil
}

// terminateContainers reports the first (Spark) container exited with exitCode and reason, and
// any other container exited 0.
func terminateContainers(p *corev1.Pod, exitCode int32, reason, message string) {
	now := metav1.Now()
	started := now
	byName := map[string]corev1.ContainerStatus{}
	for _, s := range p.Status.ContainerStatuses {
		byName[s.Name] = s
	}
	p.Status.ContainerStatuses = nil
	for i, c := range p.Spec.Containers {
		code, why := int32(0), "Completed"
		if i == 0 {
			code, why = exitCode, reason
		}
		if s, ok := byName[c.Name]; ok && s.State.Running != nil {
			started = s.State.Running.StartedAt
		}
		no := false
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: false, Started: &no,
			ContainerID: "containerd://" + string(p.UID) + "-" + c.Name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: why, Message: message, StartedAt: started, FinishedAt: now,
				ContainerID: "containerd://" + string(p.UID) + "-" + c.Name,
			}},
		})
	}
}

func setCondition(p *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus) {
	now := metav1.Now()
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			if p.Status.Conditions[i].Status != status {
				p.Status.Conditions[i].Status = status
				p.Status.Conditions[i].LastTransitionTime = now
			}
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: now})
}
