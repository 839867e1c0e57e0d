package prockubelet

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// apiFixture is a kubelet API served over TLS, with a client kube-apiserver would be.
type apiFixture struct {
	k        *Kubelet
	server   *httptest.Server
	clientCA *testCA
	// client presents a certificate the kubelet's client CA signed.
	client *http.Client
	// rest is the same client's configuration, for client-go.
	rest *rest.Config
	// untrusted builds a client presenting cert instead.
	untrusted func(cert *tls.Certificate) *http.Client
}

func newAPIFixture(t *testing.T) *apiFixture {
	t.Helper()
	servingCA, clientCA := newTestCA(t, "kubelet-serving-ca"), newTestCA(t, "kubelet-client-ca")
	k := testKubelet(t, nil, clientCA.pool)
	k.cfg.ServingCert = servingCA.issue(t, "node-a", x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	server := httptest.NewUnstartedServer(k.api().handler())
	server.TLS = k.api().tlsConfig()
	server.StartTLS()
	t.Cleanup(server.Close)
	clientFor := func(cert *tls.Certificate) *http.Client {
		config := &tls.Config{RootCAs: servingCA.pool, MinVersion: tls.VersionTLS12}
		if cert != nil {
			config.Certificates = []tls.Certificate{*cert}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: config}, Timeout: 10 * time.Second}
	}
	apiserver := clientCA.issue(t, "kube-apiserver-kubelet-client", x509.ExtKeyUsageClientAuth)
	certPEM, keyPEM := keyPairPEM(t, apiserver)
	return &apiFixture{
		k: k, server: server, clientCA: clientCA, client: clientFor(&apiserver), untrusted: clientFor,
		rest: &rest.Config{Host: server.URL, TLSClientConfig: rest.TLSClientConfig{CAData: servingCA.certPEM(), CertData: certPEM, KeyData: keyPEM}},
	}
}

func (f *apiFixture) get(t *testing.T, client *http.Client, path string) (int, string) {
	t.Helper()
	resp, err := client.Get(f.server.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// addPod makes the kubelet run pod, as far as its API sees: a runner with the pod's statuses.
func (f *apiFixture) addPod(pod *corev1.Pod) *podRunner {
	r := newPodRunner(f.k, pod)
	f.k.runners[pod.UID] = r
	return r
}

// writeLog writes a container run's log as the runtime would, one line per entry ("stdout:" or
// "stderr:" first), a second apart from start.
func writeLog(t *testing.T, r *podRunner, container string, run int32, start time.Time, lines ...string) {
	t.Helper()
	path := r.logPath(container, run)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	now := start
	log := &runLog{f: f, now: func() time.Time { defer func() { now = now.Add(time.Second) }(); return now }}
	streams := map[string]*logStream{"stdout": {log: log, name: "stdout"}, "stderr": {log: log, name: "stderr"}}
	for _, line := range lines {
		stream, text, _ := strings.Cut(line, ":")
		if _, err := streams[stream].Write([]byte(text + "\n")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestContainerLogsAPI(t *testing.T) {
	f := newAPIFixture(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "driver", Namespace: "jobs", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}, {Name: "sidecar"}}},
	}
	r := f.addPod(pod)
	r.status.main[0].RestartCount = 1
	r.status.main[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	r.status.main[1].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writeLog(t, r, "main", 0, start.Add(-time.Hour), "stdout:previous run")
	writeLog(t, r, "main", 1, start, "stdout:line 1", "stderr:oops", "stdout:line 3")

	for _, tc := range []struct {
		name   string
		path   string
		status int
		body   string
	}{
		{"the current run", "/containerLogs/jobs/driver/main", 200, "line 1\noops\nline 3\n"},
		{"tailLines", "/containerLogs/jobs/driver/main?tailLines=2", 200, "oops\nline 3\n"},
		{"tail, the older name", "/containerLogs/jobs/driver/main?tail=1", 200, "line 3\n"},
		{"tail=all", "/containerLogs/jobs/driver/main?tail=all", 200, "line 1\noops\nline 3\n"},
		{"limitBytes", "/containerLogs/jobs/driver/main?limitBytes=8", 200, "line 1\no"},
		{"timestamps", "/containerLogs/jobs/driver/main?timestamps=true&tailLines=1", 200, "2026-01-02T03:04:07.000000000Z line 3\n"},
		{"sinceTime", "/containerLogs/jobs/driver/main?sinceTime=" + url.QueryEscape(start.Add(time.Second).Format(time.RFC3339)), 200, "oops\nline 3\n"},
		{"sinceSeconds, all older", "/containerLogs/jobs/driver/main?sinceSeconds=60", 200, ""},
		{"one stream", "/containerLogs/jobs/driver/main?stream=Stdout", 200, "line 1\nline 3\n"},
		{"previous", "/containerLogs/jobs/driver/main?previous=true", 200, "previous run\n"},
		{"follow a container that is not running: what is there", "/containerLogs/jobs/driver/main?follow=true&previous=true", 200, "previous run\n"},
		{"unknown pod", "/containerLogs/jobs/nope/main", 404, `pod "nope" does not exist`},
		{"pod of another namespace", "/containerLogs/other/driver/main", 404, `pod "driver" does not exist`},
		{"unknown container", "/containerLogs/jobs/driver/other", 404, `container "other" not found in pod "driver"`},
		{"waiting container", "/containerLogs/jobs/driver/sidecar", 400, `container "sidecar" in pod "driver" is waiting to start: ErrImagePull`},
		{"no previous run", "/containerLogs/jobs/driver/sidecar?previous=true", 400, `previous terminated container "sidecar" in pod "driver" not found`},
		{"undecodable query", "/containerLogs/jobs/driver/main?tailLines=many", 400, `{"message": "Unable to decode query."}`},
		{"invalid query", "/containerLogs/jobs/driver/main?sinceSeconds=5&sinceTime=2026-01-02T03:04:05Z", 422, `{"message": "Invalid request."}`},
		{"healthz", "/healthz", 200, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.get(t, f.client, tc.path)
			if status != tc.status || body != tc.body {
				t.Errorf("GET %s: %d %q, want %d %q", tc.path, status, body, tc.status, tc.body)
			}
		})
	}
}

func TestKubeletAPIRefusesClientsWithoutTheClientCA(t *testing.T) {
	f := newAPIFixture(t)
	f.addPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "driver", Namespace: "jobs", UID: "uid-1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}})
	otherCA := newTestCA(t, "another-ca")
	foreign := otherCA.issue(t, "kube-apiserver-kubelet-client", x509.ExtKeyUsageClientAuth)
	// Signed by the right CA, but for serving, not for clients.
	serving := f.clientCA.issue(t, "kube-apiserver-kubelet-client", x509.ExtKeyUsageServerAuth)
	for _, tc := range []struct {
		name string
		cert *tls.Certificate
	}{
		{"no certificate", nil},
		{"a certificate of another CA", &foreign},
		{"a certificate not for client authentication", &serving},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/containerLogs/jobs/driver/main", "/portForward/jobs/driver", "/healthz"} {
				if status, body := f.get(t, f.untrusted(tc.cert), path); status != http.StatusUnauthorized {
					t.Errorf("GET %s: %d %q, want 401", path, status, body)
				}
			}
		})
	}
}

func TestFollowedLogsEndWithTheContainer(t *testing.T) {
	f := newAPIFixture(t)
	r := f.addPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "driver", Namespace: "jobs", UID: "uid-1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}})
	proc := &process{done: make(chan struct{})}
	r.procs["main"] = proc
	r.status.main[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	start := time.Now()
	writeLog(t, r, "main", 0, start, "stdout:first")

	resp, err := f.client.Get(f.server.URL + "/containerLogs/jobs/driver/main?follow=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	if line, err := lines.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	// The container writes on, and ends: the answer has what it wrote and ends too.
	writeLog(t, r, "main", 0, start.Add(time.Minute), "stderr:second")
	if line, err := lines.ReadString('\n'); err != nil || line != "second\n" {
		t.Fatalf("second line %q, %v", line, err)
	}
	close(proc.done)
	if rest, err := io.ReadAll(lines); err != nil || len(rest) != 0 {
		t.Fatalf("after the container ended: %q, %v", rest, err)
	}
}

func TestPortForwardAPI(t *testing.T) {
	f := newAPIFixture(t)
	r := f.addPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "driver", Namespace: "jobs", UID: "uid-1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}})
	// The pod's address is the machine's loopback, where a TCP echo server stands for it.
	r.net = &PodNetwork{IP: netip.MustParseAddr("127.0.0.1")}
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			conn, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_, _ = io.Copy(conn, conn)
			}()
		}
	}()
	podPort := strconv.Itoa(echo.Addr().(*net.TCPAddr).Port)

	for _, tc := range []struct {
		name string
		path string
	}{
		{"by name", "/portForward/jobs/driver"},
		{"by name and uid", "/portForward/jobs/driver/uid-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transport, upgrader, err := spdy.RoundTripperFor(f.rest)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(f.server.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
			stop, ready := make(chan struct{}), make(chan struct{})
			forwarder, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + podPort}, stop, ready, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			forwarded := make(chan error, 1)
			go func() { forwarded <- forwarder.ForwardPorts() }()
			select {
			case <-ready:
			case err := <-forwarded:
				t.Fatalf("port forwarding ended before it was ready: %v", err)
			}
			ports, err := forwarder.GetPorts()
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local))))
				if err != nil {
					t.Fatal(err)
				}
				message := "hello " + strconv.Itoa(i) + "\n"
				if _, err := io.WriteString(conn, message); err != nil {
					t.Fatal(err)
				}
				_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				if got, err := bufio.NewReader(conn).ReadString('\n'); err != nil || got != message {
					t.Errorf("echo through the forwarded port: %q, %v; want %q", got, err, message)
				}
				conn.Close()
			}
			close(stop)
			if err := <-forwarded; err != nil {
				t.Errorf("ForwardPorts: %v", err)
			}
		})
	}

	for _, tc := range []struct {
		name, path, body string
	}{
		{"unknown pod", "/portForward/jobs/nope", "pod does not exist"},
		{"another pod of the name", "/portForward/jobs/driver/uid-2", "pod not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, body := f.get(t, f.client, tc.path); status != http.StatusNotFound || body != tc.body {
				t.Errorf("GET %s: %d %q, want 404 %q", tc.path, status, body, tc.body)
			}
		})
	}
}

func TestPortForwardToNothing(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := int32(closed.Addr().(*net.TCPAddr).Port)
	closed.Close()
	for _, tc := range []struct {
		name string
		net  *PodNetwork
		err  string
	}{
		{"a pod without its network", nil, "not running"},
		{"a port nothing listens on", &PodNetwork{IP: netip.MustParseAddr("127.0.0.1")}, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &podRunner{net: tc.net}
			client, stream := net.Pipe()
			defer client.Close()
			err := podPorts{r}.PortForward(t.Context(), "driver", "uid-1", port, stream)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("PortForward: %v, want an error with %q", err, tc.err)
			}
		})
	}
}
