//go:build e2e

package realnode

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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// testImage is a Spark image: it has a shell and Python, and is on the node.
const testImage = "apache/spark:3.5.3"

// newNamespace creates a namespace for one test and deletes it at the end, printing its pods'
// states and logs if the test failed.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	_, err := shared.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Admission refuses pods until the namespace has its default ServiceAccount.
	waitUntil(t, time.Minute, "the default ServiceAccount of "+name, func() error {
		_, err := shared.client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(dumpNamespace(name))
		}
		_ = shared.client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func dumpNamespace(ns string) string {
	ctx := context.Background()
	var b strings.Builder
	pods, err := shared.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s %s\n", p.Name, p.Status.Phase, p.Status.Message)
		for _, c := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "  %s: %+v\n", c.Name, c.State)
			fmt.Fprintf(&b, "  log: %s\n", podLog(ns, p.Name))
		}
	}
	events, err := shared.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "event %s %s %s: %s\n", e.Type, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	return b.String()
}

func podLog(ns, name string) string {
	data, err := shared.client.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return err.Error()
	}
	return string(data)
}

func waitUntil(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %s for %s: %v", timeout, what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// pythonPod is a pod of the test image that runs a Python program.
func pythonPod(name, program string, resources corev1.ResourceRequirements) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: testImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"python3", "-c", program}, Resources: resources,
			}},
		},
	}
}

func createPod(t *testing.T, ns string, pod *corev1.Pod) {
	t.Helper()
	if _, err := shared.client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitForPod waits until the pod is in one of the phases and returns it.
func waitForPod(t *testing.T, ns, name string, timeout time.Duration, phases ...corev1.PodPhase) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	waitUntil(t, timeout, fmt.Sprintf("pod %s/%s to be %v", ns, name, phases), func() error {
		var err error
		if pod, err = shared.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		for _, p := range phases {
			if pod.Status.Phase == p {
				return nil
			}
		}
		return fmt.Errorf("phase %s", pod.Status.Phase)
	})
	return pod
}

// containerCgroup is the directory of a running container's cgroup in one v1 hierarchy, where the
// kubelet and runc put it: under the node's cgroup root, the pod's QoS class and the pod.
func containerCgroup(t *testing.T, pod *corev1.Pod, hierarchy string) string {
	t.Helper()
	if len(pod.Status.ContainerStatuses) == 0 {
		t.Fatalf("pod %s has no container status", pod.Name)
	}
	_, id, ok := strings.Cut(pod.Status.ContainerStatuses[0].ContainerID, "://")
	if !ok {
		t.Fatalf("container ID %q", pod.Status.ContainerStatuses[0].ContainerID)
	}
	qos := ""
	switch pod.Status.QOSClass {
	case corev1.PodQOSBurstable:
		qos = "burstable"
	case corev1.PodQOSBestEffort:
		qos = "besteffort"
	}
	return filepath.Join("/sys/fs/cgroup", hierarchy, shared.stack.Node.CgroupRoot, "kubepods", qos, "pod"+string(pod.UID), id)
}

func readCgroupInt(t *testing.T, dir, file string) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		t.Fatalf("%s/%s: %v", dir, file, err)
	}
	return n
}

// TestLimitsAreEnforced: the container's cgroup holds the limits of its pod, and the kernel kills
// a container that allocates past its memory limit, which the pod's status tells as OOMKilled.
func TestLimitsAreEnforced(t *testing.T) {
	ns := newNamespace(t, "limits")
	limited := pythonPod("limited", "import time; print('up', flush=True); time.sleep(3600)", corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("50Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
	})
	createPod(t, ns, limited)
	hog := pythonPod("hog", "b = bytearray(512 << 20); print('allocated', len(b))", corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	})
	createPod(t, ns, hog)

	pod := waitForPod(t, ns, "limited", 2*time.Minute, corev1.PodRunning)
	for _, c := range []struct {
		hierarchy, file string
		want            int64
	}{
		{"memory", "memory.limit_in_bytes", 100 << 20},
		// 300m of a 100 ms period; the kubelet's CPU shares: 1024 per core requested.
		{"cpu", "cpu.cfs_quota_us", 30000},
		{"cpu", "cpu.shares", 51},
	} {
		if got := readCgroupInt(t, containerCgroup(t, pod, c.hierarchy), c.file); got != c.want {
			t.Errorf("%s of the container: %d, want %d", c.file, got, c.want)
		}
	}

	pod = waitForPod(t, ns, "hog", 2*time.Minute, corev1.PodFailed, corev1.PodSucceeded)
	if pod.Status.Phase != corev1.PodFailed || len(pod.Status.ContainerStatuses) == 0 {
		t.Fatalf("the pod that allocates 512 MiB under a 64 MiB limit: %s; log: %s", pod.Status.Phase, podLog(ns, "hog"))
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
	ns := newNamespace(t, "dns")
	ctx := context.Background()
	createPod(t, ns, pythonPod("web", "import http.server, functools\n"+
		"h = functools.partial(http.server.SimpleHTTPRequestHandler, directory='/opt/spark')\n"+
		"http.server.ThreadingHTTPServer(('', 8080), h).serve_forever()", corev1.ResourceRequirements{}))
	web := waitForPod(t, ns, "web", 2*time.Minute, corev1.PodRunning)
	svc, err := shared.client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createPod(t, ns, pythonPod("client", `
import socket, ssl, time, urllib.request
for name in ["web", "web.dns.svc.cluster.local", "kubernetes.default"]:
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
	client := waitForPod(t, ns, "client", 3*time.Minute, corev1.PodSucceeded, corev1.PodFailed)
	log := podLog(ns, "client")
	if client.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("the client pod %s: %s", client.Status.Phase, log)
	}
	for _, want := range []string{
		"resolved web " + svc.Spec.ClusterIP,
		"resolved web.dns.svc.cluster.local " + svc.Spec.ClusterIP,
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
