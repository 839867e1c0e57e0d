//go:build e2e

package spark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// What only the real node does (docs/real-node.md): limits the kernel enforces, names the cluster
// DNS answers, Service IPs kube-proxy routes.

// nodeTestImage is a Spark image: it has a shell and Python, and is on the node.
const nodeTestImage = "apache/spark:3.5.3"

// pythonPod is a pod of nodeTestImage that runs a Python program.
func pythonPod(name, program string, resources corev1.ResourceRequirements) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			// Python as the container's first process ignores SIGTERM: the kubelet would wait
			// the default 30 s before it kills a pod being deleted.
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "main", Image: nodeTestImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"python3", "-c", program}, Resources: resources,
			}},
		},
	}
}

func (n *namespace) createPod(pod *corev1.Pod) {
	n.t.Helper()
	if _, err := n.core.CoreV1().Pods(n.name).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		n.t.Fatal(err)
	}
}

// waitForPod waits until the pod is in one of the phases and returns it.
func (n *namespace) waitForPod(name string, timeout time.Duration, phases ...corev1.PodPhase) *corev1.Pod {
	n.t.Helper()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		var err error
		if pod, err = n.pod(name); err != nil {
			return false, nil
		}
		for _, p := range phases {
			if pod.Status.Phase == p {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		n.t.Fatalf("pod %s/%s: want phase %v within %s", n.name, name, phases, timeout)
	}
	return pod
}

// containerCgroup is the directory of a running container's cgroup in one v1 hierarchy, where the
// kubelet and runc put it: under the node's cgroup root, the pod's QoS class and the pod.
func containerCgroup(pod *corev1.Pod, hierarchy string) (string, error) {
	if len(pod.Status.ContainerStatuses) == 0 {
		return "", fmt.Errorf("pod %s has no container status", pod.Name)
	}
	_, id, ok := strings.Cut(pod.Status.ContainerStatuses[0].ContainerID, "://")
	if !ok {
		return "", fmt.Errorf("pod %s: container ID %q", pod.Name, pod.Status.ContainerStatuses[0].ContainerID)
	}
	qos := ""
	switch pod.Status.QOSClass {
	case corev1.PodQOSBurstable:
		qos = "burstable"
	case corev1.PodQOSBestEffort:
		qos = "besteffort"
	}
	return filepath.Join("/sys/fs/cgroup", hierarchy, shared.stack.Node.CgroupRoot, "kubepods", qos, "pod"+string(pod.UID), id), nil
}

func readCgroupInt(dir, file string) (int64, error) {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// observeCgroups records, on the real node, the memory limit of the container cgroup of each
// running pod of the application, once per pod.
func (r *executorRecorder) observeCgroups() {
	if shared.stack.Node == nil {
		return
	}
	pods, err := r.n.core.CoreV1().Pods(r.n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "sparkoperator.k8s.io/app-name=" + r.app})
	if err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		r.mu.Lock()
		_, seen := r.memoryLimits[pod.Name]
		r.mu.Unlock()
		if seen || pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Running == nil {
			continue
		}
		dir, err := containerCgroup(pod, "memory")
		if err != nil {
			continue
		}
		limit, err := readCgroupInt(dir, "memory.limit_in_bytes")
		if err != nil {
			continue // the container ended in between
		}
		r.mu.Lock()
		r.memoryLimits[pod.Name] = [2]int64{limit, pod.Spec.Containers[0].Resources.Limits.Memory().Value()}
		r.mu.Unlock()
	}
}

// checkCgroupLimits checks, on the real node, that the cgroups of the driver and of an executor
// were read while they ran, and that each allowed exactly the memory limit its pod asked for.
func checkCgroupLimits(t *testing.T, r *executorRecorder, driver string) {
	t.Helper()
	if shared.stack.Node == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	executors := 0
	for pod, limits := range r.memoryLimits {
		if _, ok := r.executors[pod]; ok {
			executors++
		}
		if limits[1] == 0 || limits[0] != limits[1] {
			t.Errorf("pod %s: its cgroup allows %d bytes, the pod asks for a limit of %d", pod, limits[0], limits[1])
		}
	}
	if _, ok := r.memoryLimits[driver]; !ok || executors == 0 {
		t.Errorf("cgroups read of %v: want the driver's and an executor's", r.memoryLimits)
	}
}

// TestLimitsAreEnforced: the container's cgroup holds the limits of its pod, and the kernel kills
// a container that allocates past its memory limit, which the pod's status tells as OOMKilled.
func TestLimitsAreEnforced(t *testing.T) {
	requireRealNode(t)
	parallelOnRealNode(t)
	n := newNamespace(t, "limits")
	n.createPod(pythonPod("limited", "import time; print('up', flush=True); time.sleep(3600)", corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("50Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
	}))
	n.createPod(pythonPod("hog", "b = bytearray(512 << 20); print('allocated', len(b))", corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}))

	pod := n.waitForPod("limited", 2*time.Minute, corev1.PodRunning)
	for _, c := range []struct {
		hierarchy, file string
		want            int64
	}{
		{"memory", "memory.limit_in_bytes", 100 << 20},
		// 300m of a 100 ms period; the kubelet's CPU shares: 1024 per core requested.
		{"cpu", "cpu.cfs_quota_us", 30000},
		{"cpu", "cpu.shares", 51},
	} {
		dir, err := containerCgroup(pod, c.hierarchy)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := readCgroupInt(dir, c.file); err != nil || got != c.want {
			t.Errorf("%s of the container: %d (%v), want %d", c.file, got, err, c.want)
		}
	}

	pod = n.waitForPod("hog", 2*time.Minute, corev1.PodFailed, corev1.PodSucceeded)
	if pod.Status.Phase != corev1.PodFailed || len(pod.Status.ContainerStatuses) == 0 {
		t.Fatalf("the pod that allocates 512 MiB under a 64 MiB limit: %s; log: %s", pod.Status.Phase, n.logs("hog", ""))
	}
	term := pod.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Errorf("its container ended %+v, want OOMKilled with exit code 137", term)
	}
}

// TestClusterDNSAndServiceIPs: a pod finds a Service by its short and full names through CoreDNS,
// the name resolves to the Service's cluster IP, and kube-proxy takes a connection to that IP's
// port to the pod's target port. The API server is reached the way pods reach it in a cluster:
// kubernetes.default through its cluster IP.
func TestClusterDNSAndServiceIPs(t *testing.T) {
	requireRealNode(t)
	parallelOnRealNode(t)
	n := newNamespace(t, "dns")
	n.createPod(pythonPod("web", "import http.server, functools\n"+
		"h = functools.partial(http.server.SimpleHTTPRequestHandler, directory='/opt/spark')\n"+
		"http.server.ThreadingHTTPServer(('', 8080), h).serve_forever()", corev1.ResourceRequirements{}))
	web := n.waitForPod("web", 2*time.Minute, corev1.PodRunning)
	svc, err := n.core.CoreV1().Services(n.name).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fullName := "web." + n.name + ".svc.cluster.local"
	n.createPod(pythonPod("client", `
import socket, ssl, time, urllib.request
for name in ["web", "`+fullName+`", "kubernetes.default"]:
    print("resolved", name, socket.gethostbyname(name))
# The endpoints reach kube-proxy a moment after the Service: try for a while.
for attempt in range(60):
    try:
        body = urllib.request.urlopen("http://web/RELEASE", timeout=2).read().decode()
        break
    except OSError as e:
        print("retry", e)
        time.sleep(1)
print("fetched", body.split(",")[0])
ctx = ssl.create_default_context(cafile="/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
try:
    urllib.request.urlopen("https://kubernetes.default.svc/version", context=ctx, timeout=5)
except urllib.error.HTTPError as e:
    print("apiserver", e.code)
else:
    print("apiserver", 200)
`, corev1.ResourceRequirements{}))
	client := n.waitForPod("client", 3*time.Minute, corev1.PodSucceeded, corev1.PodFailed)
	log := n.logs("client", "")
	if client.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("the client pod %s: %s", client.Status.Phase, log)
	}
	for _, want := range []string{
		"resolved web " + svc.Spec.ClusterIP,
		"resolved " + fullName + " " + svc.Spec.ClusterIP,
		"resolved kubernetes.default 10.0.0.1",
		"fetched Spark 3.5.3",
		// Through its cluster IP and TLS, valid for the Service's name; /version is public.
		"apiserver 200",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the client's log has no %q:\n%s", want, log)
		}
	}
	if svc.Spec.ClusterIP == web.Status.PodIP {
		t.Errorf("the Service's IP is the pod's: %s", svc.Spec.ClusterIP)
	}
}

// TestExecutorOOMKilled: an executor whose memory overhead is too small for what its JVM uses
// outside the heap is killed by the kernel at its container's limit, and the application says so:
// the ExecutorFailed condition names the pod, OOMKilled, the limit and what to raise. The JVM
// touches its whole heap at start (-XX:+AlwaysPreTouch, with the entrypoint's -Xms equal to
// -Xmx), so the heap alone fills the limit that 16 MiB of overhead leaves.
func TestExecutorOOMKilled(t *testing.T) {
	requireRealNode(t)
	parallelOnRealNode(t)
	n := newNamespace(t, "executor-oom")
	n.applyEditedExample("spark-pi.yaml", func(spec map[string]any) {
		executor := spec["executor"].(map[string]any)
		executor["instances"] = 1
		executor["memoryOverhead"] = "16m"
		executor["javaOptions"] = "-XX:+AlwaysPreTouch"
	})
	// The driver deletes a failed executor's pod: look for the kernel's verdict while it exists.
	killed, message := "", ""
	n.waitFor(sparkApplications, "spark-pi", "an OOMKilled executor and the ExecutorFailed condition", appTimeout, func(app *unstructured.Unstructured) bool {
		pods, err := n.core.CoreV1().Pods(n.name).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=executor"})
		if err == nil {
			for _, p := range pods.Items {
				for _, c := range p.Status.ContainerStatuses {
					if c.State.Terminated != nil && c.State.Terminated.Reason == "OOMKilled" {
						killed = p.Name
					}
				}
			}
		}
		conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
		for _, c := range conditions {
			c := c.(map[string]any)
			if c["type"] == "ExecutorFailed" && c["status"] == "True" {
				if c["reason"] != "ExecutorOOMKilled" {
					t.Fatalf("ExecutorFailed: %v: %v, want ExecutorOOMKilled", c["reason"], c["message"])
				}
				message, _ = c["message"].(string)
				return killed != ""
			}
		}
		return false
	})
	for _, want := range []string{"OOMKilled, exit code 137", "its memory limit of 528Mi", "raise spec.executor.memoryOverhead"} {
		if !strings.Contains(message, want) {
			t.Errorf("the condition's message has no %q: %s", want, message)
		}
	}
	t.Logf("%s was OOMKilled: %s", killed, message)
	// What `kubectl get events` and `kubectl describe` show of it: a Warning from sparkhooks.
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := n.core.EventsV1().Events(n.name).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=spark-pi"})
		if err != nil {
			return false, nil
		}
		for _, e := range events.Items {
			if e.ReportingController == "sparkhooks" && e.Reason == "SparkExecutorFailed" && e.Type == "Warning" && strings.Contains(e.Note, "OOMKilled") {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no Warning SparkExecutorFailed Event naming OOMKilled within 30s of the condition")
	}
}
