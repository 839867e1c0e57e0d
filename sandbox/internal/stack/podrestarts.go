package stack

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// reportPodRestarts tells report when the kubelet restarts a container of the charts' Pods (the
// hook server, Metacontroller) and when it backs off from one that keeps failing. These are Pods
// as in a cluster, and the kubelet treats them as one does: it restarts them per their restart
// policy, with back-off, and never gives up (CrashLoopBackOff); the cluster goes on, so that the
// user can look at them with kubectl (describe, logs --previous) and at everything else that runs.
// What a cluster does not do is tell anyone: the lines do, where the user is looking.
func (s *Stack) reportPodRestarts(ctx context.Context, client kubernetes.Interface, report func(string)) error {
	for _, namespace := range []string{SparkhooksNamespace, MetacontrollerNamespace} {
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
		_, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, cur any) {
				before, ok1 := old.(*corev1.Pod)
				after, ok2 := cur.(*corev1.Pod)
				if !ok1 || !ok2 {
					return
				}
				for _, r := range podRestarts(before, after) {
					line := r.String()
					if r.backOff != "" {
						line += "; the end of its last run:\n" + indent(previousLog(ctx, client, after, r.container))
					}
					report(line)
				}
			},
		})
		if err != nil {
			return err
		}
		factory.Start(ctx.Done())
		s.running.Go(func() {
			<-ctx.Done()
			factory.Shutdown()
		})
	}
	return nil
}

// podRestart is a container that the kubelet restarted (restart > 0) or now backs off from
// restarting (backOff, the kubelet's own words).
type podRestart struct {
	namespace, pod, container string
	restart                   int32
	exit                      string
	backOff                   string
}

func (r podRestart) String() string {
	what := fmt.Sprintf("container %s of Pod %s/%s", r.container, r.namespace, r.pod)
	if r.backOff != "" {
		return fmt.Sprintf("%s keeps failing: CrashLoopBackOff, %s (kubectl -n %s describe pod %s)", what, r.backOff, r.namespace, r.pod)
	}
	return fmt.Sprintf("%s exited (%s); the kubelet restarted it (restart %d)", what, r.exit, r.restart)
}

// podRestarts compares two statuses of a Pod: a container's restart count that went up is a
// restart, a container that went into CrashLoopBackOff is a back-off.
func podRestarts(old, cur *corev1.Pod) []podRestart {
	if old.UID != cur.UID {
		return nil
	}
	before := map[string]corev1.ContainerStatus{}
	for _, s := range old.Status.ContainerStatuses {
		before[s.Name] = s
	}
	var out []podRestart
	for _, s := range cur.Status.ContainerStatuses {
		was, ok := before[s.Name]
		if !ok {
			continue
		}
		r := podRestart{namespace: cur.Namespace, pod: cur.Name, container: s.Name, restart: s.RestartCount}
		if s.RestartCount > was.RestartCount {
			r.exit = terminationReason(s.LastTerminationState.Terminated)
			out = append(out, r)
		}
		if backingOff(s) && (!backingOff(was) || s.RestartCount != was.RestartCount) {
			r.backOff, _, _ = strings.Cut(s.State.Waiting.Message, " restarting")
			out = append(out, r)
		}
	}
	return out
}

func backingOff(s corev1.ContainerStatus) bool {
	return s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff"
}

// terminationReason says how a run ended in os/exec's words, as the stack's own processes say it.
func terminationReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t == nil:
		return "unknown"
	case t.Signal != 0:
		return "signal: " + syscall.Signal(t.Signal).String()
	}
	return fmt.Sprintf("exit status %d", t.ExitCode)
}

// previousLog is the end of the container's last run's log, read as kubectl logs --previous does.
func previousLog(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, container string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lines := int64(10)
	data, err := client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, Previous: true, TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(kubectl -n %s logs %s -c %s --previous: %v)", pod.Namespace, pod.Name, container, err)
	}
	return strings.TrimRight(string(data), "\n")
}

func indent(text string) string {
	return "    " + strings.ReplaceAll(text, "\n", "\n    ")
}
