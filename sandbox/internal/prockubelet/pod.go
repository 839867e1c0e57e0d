package prockubelet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// podRunner runs one pod from its binding to this node to its final deletion.
type podRunner struct {
	k         *Kubelet
	namespace string
	name      string
	uid       types.UID
	dir       string

	mu         sync.Mutex
	pod        *corev1.Pod
	net        *PodNetwork
	status     podStatus
	procs      map[string]*process // the current process of each container
	volumes    map[string]string   // host directory of each volume
	supervised sync.WaitGroup      // the containers' supervisors
	deleting   chan struct{}       // closed when the pod has a deletion timestamp
	deleteOnce sync.Once
	gone       chan struct{} // closed when the pod no longer exists
	goneOnce   sync.Once
	stop       chan struct{} // closed when the kubelet stops
	stopOnce   sync.Once
	dirty      chan struct{}
	// terminating is set, under mu, once terminate has taken the processes to stop; no
	// container starts after that.
	terminating bool
	// retryPending is set while a failed status write waits for its retry.
	retryPending atomic.Bool
}

// podStatus is what the runner knows and reports.
type podStatus struct {
	networkReady bool
	initialized  bool
	initFailed   bool
	startTime    *metav1.Time
	init         []corev1.ContainerStatus
	main         []corev1.ContainerStatus
	// final marks containers that will not run again.
	final    map[string]bool
	terminal bool
}

func newPodRunner(k *Kubelet, pod *corev1.Pod) *podRunner {
	r := &podRunner{
		k: k, namespace: pod.Namespace, name: pod.Name, uid: pod.UID, pod: pod.DeepCopy(),
		dir:      filepath.Join(k.cfg.StateDir, podDirName(pod)),
		procs:    map[string]*process{},
		deleting: make(chan struct{}), gone: make(chan struct{}), stop: make(chan struct{}), dirty: make(chan struct{}, 1),
	}
	r.status.final = map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		r.status.init = append(r.status.init, waitingStatus(c, "PodInitializing", ""))
	}
	for _, c := range pod.Spec.Containers {
		r.status.main = append(r.status.main, waitingStatus(c, "ContainerCreating", ""))
	}
	return r
}

func waitingStatus(c corev1.Container, reason, message string) corev1.ContainerStatus {
	started := false
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, Started: &started,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
	}
}

// update takes the newest version of the pod object.
func (r *podRunner) update(pod *corev1.Pod) {
	r.mu.Lock()
	r.pod = pod.DeepCopy()
	r.mu.Unlock()
	if pod.DeletionTimestamp != nil {
		r.deleteOnce.Do(func() { close(r.deleting) })
	}
}

func (r *podRunner) removed() {
	r.deleteOnce.Do(func() { close(r.deleting) })
	r.goneOnce.Do(func() { close(r.gone) })
}

func (r *podRunner) shutdown() {
	r.stopOnce.Do(func() { close(r.stop) })
}

func (r *podRunner) current() *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pod.DeepCopy()
}

// ending is closed once the pod's containers must stop: deletion or kubelet shutdown.
func (r *podRunner) ending() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		select {
		case <-r.deleting:
		case <-r.stop:
		}
		close(ch)
	}()
	return ch
}

func (r *podRunner) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.pushLoop(ctx)
	defer r.cleanup()

	ending := r.ending()
	if r.prepare(ctx, ending) {
		r.runContainers(ctx, ending)
	}
	select {
	case <-ending:
	default:
		// Finished on its own: the sandbox goes, the pod and its logs stay until deleted.
		r.releaseNetwork()
		<-ending
	}
	r.terminate(ctx)
}

// prepare sets up everything the containers need; it reports false if the pod ended first.
func (r *podRunner) prepare(ctx context.Context, ending <-chan struct{}) bool {
	pod := r.current()
	now := metav1.NewTime(r.k.cfg.Now())
	r.mu.Lock()
	r.status.startTime = &now
	r.mu.Unlock()
	r.markDirty()
	if err := os.MkdirAll(filepath.Join(r.dir, "logs"), 0o755); err != nil {
		r.k.cfg.Logf("pod %s/%s: %v", r.namespace, r.name, err)
		return false
	}
	if !r.pullImages(ctx, pod, ending) {
		return false
	}
	podNet, err := r.k.cfg.Network.AddPod(ctx, string(r.uid))
	if err != nil {
		r.k.event(ctx, pod, corev1.EventTypeWarning, "FailedCreatePodSandBox", err.Error())
		r.k.cfg.Logf("pod %s/%s: %v", r.namespace, r.name, err)
		<-ending
		return false
	}
	r.mu.Lock()
	r.net = podNet
	r.status.networkReady = true
	r.mu.Unlock()
	if err := r.pushNow(ctx); err != nil {
		r.k.cfg.Logf("pod %s/%s: reporting the pod IP: %v", r.namespace, r.name, err)
	}
	if err := r.writePodFiles(pod); err != nil {
		r.k.cfg.Logf("pod %s/%s: %v", r.namespace, r.name, err)
		<-ending
		return false
	}
	for {
		volumes, err := r.k.prepareVolumes(ctx, r.current(), r.dir)
		if err == nil {
			r.mu.Lock()
			r.volumes = volumes.paths
			r.mu.Unlock()
			go r.refreshTokens(ctx, volumes.tokens)
			return true
		}
		var mountErr *mountError
		if !errors.As(err, &mountErr) {
			r.k.cfg.Logf("pod %s/%s: volumes: %v", r.namespace, r.name, err)
		}
		r.k.event(ctx, pod, corev1.EventTypeWarning, "FailedMount", "MountVolume.SetUp failed: "+err.Error())
		select {
		case <-ending:
			return false
		case <-time.After(2 * time.Second):
		}
	}
}

// pullImages makes sure the image of every container is present, in the containers' order,
// pulling what is missing as a kubelet pulls from a registry; it reports false if the pod ended
// first.
func (r *podRunner) pullImages(ctx context.Context, pod *corev1.Pod, ending <-chan struct{}) bool {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if !r.pullImage(ctx, pod, c, ending) {
			return false
		}
	}
	return true
}

// imagePullErrorShown is how long a failed pull shows as ErrImagePull before the back-off
// (ImagePullBackOff): a kubelet's next sync of the pod.
const imagePullErrorShown = 5 * time.Second

// pullImage makes sure c's image is present: Pulling, then Pulled with the time and size, or a
// failure as ErrImagePull with the source's reason, then ImagePullBackOff until the next try
// (10 s doubling to 5 min, as a kubelet's image back-off). The events are a kubelet's, worded
// as it words them.
func (r *podRunner) pullImage(ctx context.Context, pod *corev1.Pod, c corev1.Container, ending <-chan struct{}) bool {
	if _, ok := r.k.images.lookup(c.Image); ok {
		r.k.event(ctx, pod, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.Image))
		return true
	}
	for failures := 1; ; failures++ {
		if c.ImagePullPolicy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			r.setWaiting(c.Name, "ErrImageNeverPull", msg)
			r.k.event(ctx, pod, corev1.EventTypeWarning, "ErrImageNeverPull", msg)
			r.markDirty()
			if !sleepOrEnd(ending, backoffDelay(failures)) {
				return false
			}
			// Another pod may have pulled it meanwhile.
			if _, ok := r.k.images.lookup(c.Image); ok {
				return true
			}
			continue
		}
		r.k.event(ctx, pod, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.Image))
		asked := r.k.cfg.Now()
		image, took, err := r.k.images.pull(c.Image, pod.Namespace+"/"+pod.Name, ending)
		if errors.Is(err, errPodEnding) {
			return false
		}
		if err == nil {
			// A pod that joined a pull under way waited for less than all of it.
			waited := r.k.cfg.Now().Sub(asked)
			r.k.event(ctx, pod, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.",
				c.Image, min(took, waited).Truncate(time.Millisecond), waited.Truncate(time.Millisecond), image.Size))
			return true
		}
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		r.setWaiting(c.Name, "ErrImagePull", msg)
		r.markDirty()
		r.k.event(ctx, pod, corev1.EventTypeWarning, "Failed", msg)
		r.k.event(ctx, pod, corev1.EventTypeWarning, "Failed", "Error: ErrImagePull")
		if !sleepOrEnd(ending, imagePullErrorShown) {
			return false
		}
		backOff := fmt.Sprintf("Back-off pulling image %q", c.Image)
		r.setWaiting(c.Name, "ImagePullBackOff", backOff)
		r.markDirty()
		r.k.event(ctx, pod, corev1.EventTypeNormal, "BackOff", backOff)
		r.k.event(ctx, pod, corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
		if !sleepOrEnd(ending, backoffDelay(failures)-imagePullErrorShown) {
			return false
		}
	}
}

// resolvConf is a pod's resolver configuration. There is no cluster DNS: cluster names resolve
// through /etc/hosts, which the kubelet keeps current, and other names through the machine's
// resolvers when the network has egress.
func resolvConf(nameservers []netip.Addr) string {
	var b strings.Builder
	b.WriteString("# No cluster DNS: cluster names resolve through /etc/hosts, which the kubelet keeps current.\n")
	if len(nameservers) == 0 {
		b.WriteString("nameserver 127.0.0.1\n")
	}
	for _, ns := range nameservers {
		fmt.Fprintf(&b, "nameserver %s\n", ns)
	}
	b.WriteString("options timeout:1 attempts:2\n")
	return b.String()
}

// writePodFiles writes the files the kubelet mounts into every container.
func (r *podRunner) writePodFiles(pod *corev1.Pod) error {
	hostname, _ := podHostnames(pod)
	files := map[string]string{
		"hostname":    hostname + "\n",
		"resolv.conf": resolvConf(r.k.cfg.Network.Nameservers),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	r.writeHosts()
	return nil
}

// writeHosts rewrites the pod's /etc/hosts in place (the file is bind-mounted, so its inode
// must stay).
func (r *podRunner) writeHosts() {
	r.mu.Lock()
	podNet := r.net
	pod := r.pod.DeepCopy()
	r.mu.Unlock()
	if podNet == nil {
		return
	}
	content := r.k.hostsFor(pod, podNet.IP.String())
	path := filepath.Join(r.dir, "hosts")
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return
	}
	_ = rewriteInPlace(path, content)
}

// rewriteInPlace replaces the content of the file at path, keeping its inode. It writes over
// the old content and then cuts the file to length: truncating first would leave the file
// empty for a moment, and a resolver reading a pod's /etc/hosts then would not find
// kubernetes.default.svc, which the unchanged first lines of every version name.
func rewriteInPlace(path, content string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(content)))
}

func (r *podRunner) podFiles() map[string]string {
	return map[string]string{
		"/etc/hosts":       filepath.Join(r.dir, "hosts"),
		"/etc/hostname":    filepath.Join(r.dir, "hostname"),
		"/etc/resolv.conf": filepath.Join(r.dir, "resolv.conf"),
	}
}

func (r *podRunner) setWaiting(name, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.statusOf(name); s != nil {
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		s.Ready = false
		started := false
		s.Started = &started
	}
}

// statusOf returns the status entry of a container; the caller holds r.mu.
func (r *podRunner) statusOf(name string) *corev1.ContainerStatus {
	for i := range r.status.init {
		if r.status.init[i].Name == name {
			return &r.status.init[i]
		}
	}
	for i := range r.status.main {
		if r.status.main[i].Name == name {
			return &r.status.main[i]
		}
	}
	return nil
}

// terminate stops every container (SIGTERM, the grace period, SIGKILL), reports them terminated
// and, for a deleted pod, deletes it for good.
func (r *podRunner) terminate(ctx context.Context) {
	pod := r.current()
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.DeletionGracePeriodSeconds != nil {
		grace = *pod.DeletionGracePeriodSeconds
	}
	select {
	case <-r.stop:
		// The kubelet itself is stopping (a sandbox's Ctrl-C): nobody waits for the API.
		if grace > 5 {
			grace = 5
		}
	default:
	}
	r.mu.Lock()
	r.terminating = true
	procs := make([]*process, 0, len(r.procs))
	for _, p := range r.procs {
		procs = append(procs, p)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop(time.Duration(grace) * time.Second)
		}()
	}
	wg.Wait()
	// The supervisors record the exits; give them the moment they need.
	r.waitSupervisors()

	select {
	case <-r.stop:
		return
	case <-r.gone:
		return
	default:
	}
	r.mu.Lock()
	if !r.status.terminal {
		r.status.terminal = true
	}
	r.mu.Unlock()
	if err := r.pushNow(ctx); err != nil && !apierrors.IsNotFound(err) {
		r.k.cfg.Logf("pod %s/%s: final status: %v", r.namespace, r.name, err)
	}
	zero := int64(0)
	uid := r.uid
	err := r.k.cfg.Client.CoreV1().Pods(r.namespace).Delete(ctx, r.name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		r.k.cfg.Logf("pod %s/%s: final delete: %v", r.namespace, r.name, err)
	}
}

func (r *podRunner) waitSupervisors() {
	r.supervised.Wait()
}

func (r *podRunner) releaseNetwork() {
	r.mu.Lock()
	podNet := r.net
	r.mu.Unlock()
	if podNet != nil {
		r.k.cfg.Network.RemovePod(podNet)
	}
}

func (r *podRunner) cleanup() {
	r.releaseNetwork()
	select {
	case <-r.stop:
		// A stopped kubelet keeps nothing of its pods' sandboxes; their state goes with the dir.
	default:
	}
	unmountVolumes(r.dir)
	_ = os.RemoveAll(r.dir)
}

func (r *podRunner) markDirty() {
	select {
	case r.dirty <- struct{}{}:
	default:
	}
}

func (r *podRunner) pushLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.dirty:
			if err := r.pushNow(ctx); err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
				r.k.cfg.Logf("pod %s/%s: status: %v", r.namespace, r.name, err)
				// One retry at a time, however many changes failed to go out meanwhile.
				if r.retryPending.CompareAndSwap(false, true) {
					time.AfterFunc(time.Second, func() {
						r.retryPending.Store(false)
						r.markDirty()
					})
				}
			}
		}
	}
}

// pushNow writes the pod's status as the runner knows it.
func (r *podRunner) pushNow(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := r.k.cfg.Client.CoreV1().Pods(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != r.uid {
			return apierrors.NewNotFound(corev1.Resource("pods"), r.name)
		}
		r.mu.Lock()
		pod.Status = r.computeStatus(pod)
		r.mu.Unlock()
		_, err = r.k.cfg.Client.CoreV1().Pods(r.namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}
