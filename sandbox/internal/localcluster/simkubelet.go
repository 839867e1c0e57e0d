package localcluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// SimulatedKubelet plays the phases of pods without running anything, for a sandbox whose Spark
// images are not prepared: a pod is bound, runs after StartDelay, and a SparkApplication's driver
// succeeds after RunTime. Servers (Spark Connect, standalone masters and workers) keep running.
// Deleted pods are reported terminated and removed. Its logs say that nothing ran.
type SimulatedKubelet struct {
	Client     kubernetes.Interface
	NodeName   string
	StartDelay time.Duration
	RunTime    time.Duration
	Logf       func(string, ...any)

	mu      sync.Mutex
	playing map[types.UID]bool
	nextIP  int
}

// SimulatedLog is what `kubectl logs` shows of a simulated pod.
const SimulatedLog = "sparkhooks-local is in simulated mode: this pod's phases were played, nothing was executed.\nPrepare the local Spark images (make spark-images) and restart it to run Spark for real.\n"

// Logs is the log source of simulated pods.
func (k *SimulatedKubelet) Logs(context.Context, string, string, *corev1.PodLogOptions) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(SimulatedLog)), nil
}

// Run plays the pods of every namespace until ctx ends.
func (k *SimulatedKubelet) Run(ctx context.Context) error {
	k.playing = map[types.UID]bool{}
	factory := informers.NewSharedInformerFactory(k.Client, 0)
	pods := factory.Core().V1().Pods().Informer()
	handle := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			k.observe(ctx, pod)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, obj any) { handle(obj) }}); err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

func (k *SimulatedKubelet) observe(ctx context.Context, pod *corev1.Pod) {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != k.NodeName {
		return
	}
	if pod.DeletionTimestamp != nil {
		go k.finish(ctx, pod)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.playing[pod.UID] || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	k.playing[pod.UID] = true
	k.nextIP++
	ip := fmt.Sprintf("10.254.%d.%d", k.nextIP/250, 1+k.nextIP%250)
	go k.play(ctx, pod, ip)
}

// play binds the pod, starts it and, for a driver of a SparkApplication, completes it.
func (k *SimulatedKubelet) play(ctx context.Context, pod *corev1.Pod, ip string) {
	if pod.Spec.NodeName == "" {
		k.update(ctx, pod, func(p *corev1.Pod) bool {
			p.Spec.NodeName = k.NodeName
			return true
		}, false)
	}
	if !sleep(ctx, k.StartDelay) {
		return
	}
	now := metav1.Now()
	k.update(ctx, pod, func(p *corev1.Pod) bool {
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		p.Status.StartTime = &now
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		p.Status.ContainerStatuses = containerStatuses(p, func(string) corev1.ContainerState {
			return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		}, true)
		return true
	}, true)
	if !completes(pod) || !sleep(ctx, k.RunTime) {
		return
	}
	k.terminate(ctx, pod, corev1.PodSucceeded)
}

// completes reports a pod that ends on its own: a SparkApplication's driver. A Spark Connect
// server is a driver too, but runs until deleted.
func completes(pod *corev1.Pod) bool {
	return pod.Labels["spark-role"] == "driver" && pod.Labels["sparkoperator.k8s.io/app-name"] != "" &&
		pod.Labels["sparkoperator.k8s.io/connect-name"] == ""
}

func (k *SimulatedKubelet) finish(ctx context.Context, pod *corev1.Pod) {
	k.terminate(ctx, pod, corev1.PodSucceeded)
	zero := int64(0)
	uid := pod.UID
	err := k.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.logf("simulated pod %s/%s: delete: %v", pod.Namespace, pod.Name, err)
	}
	k.mu.Lock()
	delete(k.playing, pod.UID)
	k.mu.Unlock()
}

func (k *SimulatedKubelet) terminate(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase) {
	now := metav1.Now()
	k.update(ctx, pod, func(p *corev1.Pod) bool {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return false
		}
		p.Status.Phase = phase
		for i := range p.Status.Conditions {
			if t := p.Status.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
				p.Status.Conditions[i].Status, p.Status.Conditions[i].Reason = corev1.ConditionFalse, "PodCompleted"
			}
		}
		started := now
		if p.Status.StartTime != nil {
			started = *p.Status.StartTime
		}
		p.Status.ContainerStatuses = containerStatuses(p, func(string) corev1.ContainerState {
			return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", Message: "simulated: nothing was executed", StartedAt: started, FinishedAt: now,
			}}
		}, false)
		return true
	}, true)
}

func containerStatuses(p *corev1.Pod, state func(string) corev1.ContainerState, ready bool) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range p.Spec.Containers {
		started := ready
		out = append(out, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "simulated://" + c.Image, State: state(c.Name), Ready: ready, Started: &started})
	}
	return out
}

// update changes the pod (its status when status is true) if change says so.
func (k *SimulatedKubelet) update(ctx context.Context, pod *corev1.Pod, change func(*corev1.Pod) bool, status bool) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := k.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || fresh.UID != pod.UID || !change(fresh) {
			return err
		}
		if status {
			_, err = k.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
		} else {
			_, err = k.Client.CoreV1().Pods(pod.Namespace).Update(ctx, fresh, metav1.UpdateOptions{})
		}
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		k.logf("simulated pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

func (k *SimulatedKubelet) logf(format string, args ...any) {
	if k.Logf != nil {
		k.Logf(format, args...)
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
