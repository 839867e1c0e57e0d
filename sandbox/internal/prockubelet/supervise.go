package prockubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet/podinit"
)

// Restart back-off, as the kubelet's: 10 s doubling to 5 min, reset after 10 min of running.
const (
	backoffInitial = 10 * time.Second
	backoffMax     = 5 * time.Minute
	backoffReset   = 10 * time.Minute
)

// Termination messages are capped as the kubelet caps them.
const (
	terminationMessageMax = 4096
	fallbackLogLines      = 80
	fallbackLogBytes      = 2048
)

// runContainers runs the init containers in order, then the containers, until every container
// has ended for good or the pod ends.
func (r *podRunner) runContainers(ctx context.Context, ending <-chan struct{}) {
	pod := r.current()
	var sidecars sync.WaitGroup
	sidecarsStop := make(chan struct{})
	stopSidecars := sync.OnceFunc(func() { close(sidecarsStop) })
	defer stopSidecars()
	sidecarEnding := merge(ending, sidecarsStop)

	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			started := make(chan struct{})
			r.supervised.Add(1)
			sidecars.Add(1)
			go func() {
				defer r.supervised.Done()
				defer sidecars.Done()
				r.supervise(ctx, sidecarEnding, c, func(int32) bool { return true }, started)
			}()
			select {
			case <-started:
			case <-ending:
				return
			}
			continue
		}
		for attempt := 0; ; attempt++ {
			exit, ok := r.runToCompletion(ctx, ending, c)
			if !ok {
				return
			}
			if exit == 0 {
				break
			}
			if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
				r.mu.Lock()
				r.status.initFailed = true
				r.mu.Unlock()
				r.markDirty()
				return
			}
			if !sleepOrEnd(ending, backoffDelay(attempt+1)) {
				return
			}
		}
	}
	r.mu.Lock()
	r.status.initialized = true
	r.mu.Unlock()
	r.markDirty()

	restart := func(exit int32) bool {
		switch pod.Spec.RestartPolicy {
		case corev1.RestartPolicyNever:
			return false
		case corev1.RestartPolicyOnFailure:
			return exit != 0
		}
		return true
	}
	var main sync.WaitGroup
	for _, c := range pod.Spec.Containers {
		r.supervised.Add(1)
		main.Add(1)
		go func() {
			defer r.supervised.Done()
			defer main.Done()
			r.supervise(ctx, ending, c, restart, nil)
		}()
	}
	allDone := make(chan struct{})
	go func() {
		main.Wait()
		close(allDone)
	}()
	select {
	case <-allDone:
		// Sidecars end once the containers they serve have.
		stopSidecars()
		r.mu.Lock()
		var procs []*process
		for _, c := range pod.Spec.InitContainers {
			if p := r.procs[c.Name]; p != nil {
				procs = append(procs, p)
			}
		}
		r.mu.Unlock()
		for _, p := range procs {
			p.stop(terminationGrace(pod))
		}
		sidecars.Wait()
	case <-ending:
	}
}

func terminationGrace(pod *corev1.Pod) time.Duration {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

// runToCompletion runs an init container once; ok is false when the pod ended first.
func (r *podRunner) runToCompletion(ctx context.Context, ending <-chan struct{}, c corev1.Container) (int32, bool) {
	for {
		p, err := r.startContainer(ctx, c)
		if errors.Is(err, errPodEnding) {
			return 0, false
		}
		if err != nil {
			r.startFailed(ctx, c, err)
			if !sleepOrEnd(ending, backoffInitial) {
				return 0, false
			}
			continue
		}
		r.setRunning(c.Name, p)
		<-p.done
		exit := r.recordExit(c, p, true)
		return exit, true
	}
}

// supervise runs a container and starts it again when restart says so, with back-off; it returns
// once the container has ended for good. started, if not nil, is closed at the first start.
func (r *podRunner) supervise(ctx context.Context, ending <-chan struct{}, c corev1.Container, restart func(int32) bool, started chan struct{}) {
	failures := 0
	for {
		p, err := r.startContainer(ctx, c)
		if errors.Is(err, errPodEnding) {
			r.finalWaiting(c)
			return
		}
		if err != nil {
			r.startFailed(ctx, c, err)
			if !sleepOrEnd(ending, backoffInitial) {
				r.finalWaiting(c)
				return
			}
			continue
		}
		r.setRunning(c.Name, p)
		if started != nil {
			close(started)
			started = nil
		}
		probeCtx, stopProbes := context.WithCancel(ctx)
		go r.probe(probeCtx, c, p)
		<-p.done
		stopProbes()
		exit, finishedAt := p.result()
		var again bool
		select {
		case <-ending:
		default:
			again = restart(exit)
		}
		r.recordExit(c, p, !again)
		if !again {
			return
		}
		if finishedAt.Sub(p.startedAt) > backoffReset {
			failures = 0
		}
		delay := backoffDelay(failures)
		failures++
		if delay > 0 {
			r.setWaiting(c.Name, "CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", delay, c.Name, r.name, r.namespace, r.uid))
			r.k.event(ctx, r.current(), corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container "+c.Name)
			r.markDirty()
		}
		if !sleepOrEnd(ending, delay) {
			r.finalizeLast(c)
			return
		}
	}
}

// backoffDelay is the wait before the restart that follows n earlier failures: none before the
// first restart, then 10 s doubling to 5 min.
func backoffDelay(n int) time.Duration {
	if n == 0 {
		return 0
	}
	d := backoffInitial
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

func sleepOrEnd(ending <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ending:
			return false
		default:
			return true
		}
	}
	select {
	case <-ending:
		return false
	case <-time.After(d):
		return true
	}
}

func merge(a, b <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		}
		close(out)
	}()
	return out
}

// startContainer resolves and starts one run of c.
func (r *podRunner) startContainer(ctx context.Context, c corev1.Container) (*process, error) {
	image, ok := r.k.images.lookup(c.Image)
	if !ok {
		return nil, &configError{msg: fmt.Sprintf("image %q is not in the local image table", c.Image)}
	}
	r.mu.Lock()
	pod := r.pod.DeepCopy()
	if r.net != nil {
		pod.Status.PodIP = r.net.IP.String()
		pod.Status.PodIPs = []corev1.PodIP{{IP: pod.Status.PodIP}}
	}
	pod.Status.HostIP = r.k.cfg.NodeIP.String()
	pod.Status.HostIPs = []corev1.HostIP{{IP: pod.Status.HostIP}}
	volumes := r.volumes
	restarts := int32(0)
	if s := r.statusOf(c.Name); s != nil {
		restarts = s.RestartCount
	}
	netns := ""
	if r.net != nil {
		netns = r.net.Path
	}
	r.mu.Unlock()

	lookups := containerLookups{
		configMap: func(name string) (*corev1.ConfigMap, error) {
			return r.k.cfg.Client.CoreV1().ConfigMaps(r.namespace).Get(ctx, name, metav1.GetOptions{})
		},
		secret: func(name string) (*corev1.Secret, error) {
			return r.k.cfg.Client.CoreV1().Secrets(r.namespace).Get(ctx, name, metav1.GetOptions{})
		},
		apiServerHost: r.k.cfg.Network.Gateway.String(),
	}
	resolved, err := resolveContainer(pod, &c, image, lookups)
	if err != nil {
		return nil, err
	}
	mounts, err := containerMounts(&c, volumes, r.podFiles())
	if err != nil {
		return nil, err
	}
	run := fmt.Sprintf("%s-%d", c.Name, restarts)
	termPath := filepath.Join(r.dir, "termination", run)
	if err := os.MkdirAll(filepath.Dir(termPath), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(termPath, nil, 0o666); err != nil {
		return nil, err
	}
	_ = os.Chmod(termPath, 0o666)
	termTarget := c.TerminationMessagePath
	if termTarget == "" {
		termTarget = corev1.TerminationMessagePathDefault
	}
	spec := podinit.Spec{
		NetNS:      netns,
		Hostname:   firstOf(podHostnames(pod)),
		Scratch:    filepath.Join(r.dir, "scratch", run),
		ImageRoot:  image.Root,
		Argv:       resolved.argv,
		Env:        resolved.env,
		WorkingDir: resolved.workingDir,
		UID:        resolved.uid, GID: resolved.gid, Groups: resolved.groups,
	}
	for _, m := range mounts {
		spec.Mounts = append(spec.Mounts, podinit.Mount{Source: m.source, Target: m.target, ReadOnly: m.readOnly})
	}
	spec.Mounts = append(spec.Mounts, podinit.Mount{Source: termPath, Target: termTarget})
	if err := os.MkdirAll(spec.Scratch, 0o700); err != nil {
		return nil, err
	}
	// Started and registered under the lock terminate takes to find what to stop: a process
	// started after it looked would outlive the pod.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.terminating {
		return nil, errPodEnding
	}
	p, err := r.k.startProcess(spec, filepath.Join(r.dir, "specs", run+".json"), r.logPath(c.Name, restarts))
	if err != nil {
		return nil, err
	}
	p.terminationPath = termPath
	r.procs[c.Name] = p
	r.k.mu.Lock()
	r.k.started[r.namespace]++
	r.k.mu.Unlock()
	return p, nil
}

func firstOf(a, _ string) string { return a }

// errPodEnding refuses to start a container once the pod is being stopped.
var errPodEnding = errors.New("the pod is being stopped")

func (r *podRunner) logPath(container string, restart int32) string {
	return filepath.Join(r.dir, "logs", container, fmt.Sprintf("%d.log", restart))
}

// startFailed reports a container that could not be started.
func (r *podRunner) startFailed(ctx context.Context, c corev1.Container, err error) {
	reason := "RunContainerError"
	var cfgErr *configError
	if errors.As(err, &cfgErr) {
		reason = "CreateContainerConfigError"
	}
	r.setWaiting(c.Name, reason, err.Error())
	r.k.event(ctx, r.current(), corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
	r.markDirty()
}

func (r *podRunner) setRunning(name string, p *process) {
	r.mu.Lock()
	if s := r.statusOf(name); s != nil {
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(p.startedAt)}}
		s.ContainerID = fmt.Sprintf("process://%d", p.pid())
		s.ImageID = "local://" + s.Image
		s.Ready = false
		started := !r.hasStartupProbe(name)
		s.Started = &started
		if started && !r.hasReadinessProbe(name) {
			s.Ready = true
		}
	}
	r.mu.Unlock()
	r.markDirty()
}

func (r *podRunner) hasStartupProbe(name string) bool {
	c := findContainer(r.pod, name)
	return c != nil && c.StartupProbe != nil
}

func (r *podRunner) hasReadinessProbe(name string) bool {
	c := findContainer(r.pod, name)
	return c != nil && c.ReadinessProbe != nil
}

// recordExit writes the container's terminated state (final) or moves it to the last state for a
// restart; it returns the exit code.
func (r *podRunner) recordExit(c corev1.Container, p *process, final bool) int32 {
	exit, finishedAt := p.result()
	reason := "Completed"
	if exit != 0 {
		reason = "Error"
	}
	terminated := &corev1.ContainerStateTerminated{
		ExitCode: exit, Reason: reason, Message: terminationMessage(c, p, exit),
		StartedAt: metav1.NewTime(p.startedAt), FinishedAt: metav1.NewTime(finishedAt),
		ContainerID: fmt.Sprintf("process://%d", p.pid()),
	}
	if p.signal != 0 {
		terminated.Signal = int32(p.signal)
	}
	r.mu.Lock()
	if s := r.statusOf(c.Name); s != nil {
		notStarted := false
		s.Ready, s.Started = false, &notStarted
		if final {
			s.State = corev1.ContainerState{Terminated: terminated}
			r.status.final[c.Name] = true
		} else {
			s.LastTerminationState = corev1.ContainerState{Terminated: terminated}
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
			s.RestartCount++
		}
	}
	r.mu.Unlock()
	r.markDirty()
	return exit
}

// finalizeLast turns a container waiting to restart into one that has ended for good, with its
// last run as its state.
func (r *podRunner) finalizeLast(c corev1.Container) {
	r.mu.Lock()
	if s := r.statusOf(c.Name); s != nil && s.LastTerminationState.Terminated != nil {
		s.State = s.LastTerminationState
		s.LastTerminationState = corev1.ContainerState{}
		s.RestartCount--
		r.status.final[c.Name] = true
	}
	r.mu.Unlock()
	r.markDirty()
}

// finalWaiting marks a container that never started as ended for good.
func (r *podRunner) finalWaiting(c corev1.Container) {
	r.mu.Lock()
	if s := r.statusOf(c.Name); s != nil {
		reason := "ContainerStatusUnknown"
		if s.State.Waiting != nil {
			reason = s.State.Waiting.Reason
		}
		s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: reason}}
		r.status.final[c.Name] = true
	}
	r.mu.Unlock()
	r.markDirty()
}

// terminationMessage reads what the container wrote to its termination-message path or, with
// FallbackToLogsOnError and a failure, the tail of its log.
func terminationMessage(c corev1.Container, p *process, exit int32) string {
	data, _ := readLimited(p.terminationPath, terminationMessageMax)
	if len(data) > 0 {
		return string(data)
	}
	if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError || exit == 0 {
		return ""
	}
	return tailLines(p.logPath, fallbackLogLines, fallbackLogBytes)
}

func readLimited(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, limit)
	n, _ := f.Read(buf)
	return buf[:n], nil
}
