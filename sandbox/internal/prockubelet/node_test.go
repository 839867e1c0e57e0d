package prockubelet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestRegisterNode(t *testing.T) {
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name     string
		existing *corev1.Node
		labels   map[string]string
		taints   []corev1.Taint
	}{
		{name: "a new node"},
		{
			name: "a node registered before: labels brought up to date, others and the taints kept",
			existing: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{corev1.LabelHostname: "old", "team": "spark"}},
				Spec:       corev1.NodeSpec{Taints: []corev1.Taint{notReady}},
				Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}},
			},
			labels: map[string]string{"team": "spark"},
			taints: []corev1.Taint{notReady},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.existing != nil {
				client = fake.NewClientset(tc.existing)
			}
			n := testNode(t, client)
			if _, err := n.registerNode(t.Context(), 12345); err != nil {
				t.Fatal(err)
			}
			if _, err := n.updateNodeStatus(t.Context(), 12345); err != nil {
				t.Fatal(err)
			}
			node, err := client.CoreV1().Nodes().Get(t.Context(), "node-a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantLabels := map[string]string{
				"kubernetes.io/hostname": "node-a", "kubernetes.io/os": "linux", "kubernetes.io/arch": runtime.GOARCH,
				"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": runtime.GOARCH,
			}
			for key, value := range tc.labels {
				wantLabels[key] = value
			}
			if fmt.Sprint(node.Labels) != fmt.Sprint(wantLabels) {
				t.Errorf("labels %v, want %v", node.Labels, wantLabels)
			}
			if fmt.Sprint(node.Spec.Taints) != fmt.Sprint(tc.taints) {
				t.Errorf("taints %v, want %v", node.Spec.Taints, tc.taints)
			}
			status := node.Status
			if got := fmt.Sprint(status.Addresses); got != "[{InternalIP 10.9.8.1} {Hostname node-a}]" {
				t.Errorf("addresses %s", got)
			}
			if status.DaemonEndpoints.KubeletEndpoint.Port != 12345 {
				t.Errorf("kubelet port %d, want 12345", status.DaemonEndpoints.KubeletEndpoint.Port)
			}
			info := status.NodeInfo
			if info.KubeletVersion != "v1.36.3" || info.OperatingSystem != "linux" || info.Architecture != runtime.GOARCH ||
				!strings.HasPrefix(info.ContainerRuntimeVersion, "prockubelet://") || info.KernelVersion == "" {
				t.Errorf("node info %+v", info)
			}
			if cpu := status.Capacity[corev1.ResourceCPU]; cpu.Value() != int64(runtime.NumCPU()) {
				t.Errorf("cpu capacity %s, want %d", cpu.String(), runtime.NumCPU())
			}
			if pods := status.Allocatable[corev1.ResourcePods]; pods.Value() != 110 {
				t.Errorf("allocatable pods %s, want 110", pods.String())
			}
			for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
				capacity, allocatable := status.Capacity[name], status.Allocatable[name]
				if capacity.Sign() <= 0 || allocatable.Cmp(capacity) >= 0 || allocatable.Sign() <= 0 {
					t.Errorf("%s: capacity %s, allocatable %s", name, capacity.String(), allocatable.String())
				}
			}
			conditions := map[corev1.NodeConditionType]corev1.NodeCondition{}
			for _, c := range status.Conditions {
				conditions[c.Type] = c
			}
			for conditionType, want := range map[corev1.NodeConditionType]corev1.ConditionStatus{
				corev1.NodeReady: corev1.ConditionTrue, corev1.NodeMemoryPressure: corev1.ConditionFalse,
				corev1.NodeDiskPressure: corev1.ConditionFalse, corev1.NodePIDPressure: corev1.ConditionFalse,
			} {
				if c := conditions[conditionType]; c.Status != want || c.LastHeartbeatTime.IsZero() {
					t.Errorf("condition %s: %+v, want %s with a heartbeat", conditionType, c, want)
				}
			}
			if reason := conditions[corev1.NodeReady].Reason; reason != "KubeletReady" {
				t.Errorf("Ready's reason %q", reason)
			}
		})
	}
}

func TestNodeStatusKeepsTransitionTimes(t *testing.T) {
	n := testNode(t, fake.NewClientset())
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	n.cfg.Now = func() time.Time { return now }
	status := n.nodeStatus(corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: then},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, LastTransitionTime: then},
	}}, 10250)
	for _, c := range status.Conditions {
		want := now
		if c.Type == corev1.NodeReady {
			want = then.Time
		}
		if !c.LastTransitionTime.Time.Equal(want) || !c.LastHeartbeatTime.Time.Equal(now) {
			t.Errorf("%s: transition %s heartbeat %s, want transition %s", c.Type, c.LastTransitionTime, c.LastHeartbeatTime, want)
		}
	}
}

func TestRenewLease(t *testing.T) {
	client := fake.NewClientset()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-uid"}}
	for range 2 {
		if err := RenewNodeLease(t.Context(), client, node, now); err != nil {
			t.Fatal(err)
		}
		lease, err := client.CoordinationV1().Leases("kube-node-lease").Get(t.Context(), "node-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *lease.Spec.HolderIdentity != "node-a" || *lease.Spec.LeaseDurationSeconds != 40 || !lease.Spec.RenewTime.Time.Equal(now) {
			t.Errorf("lease spec %+v, want held by node-a for 40 s, renewed at %s", lease.Spec, now)
		}
		if owners := lease.OwnerReferences; len(owners) != 1 || owners[0].Kind != "Node" || owners[0].UID != "node-uid" {
			t.Errorf("lease owners %+v, want the Node", owners)
		}
		now = now.Add(nodeStatusInterval)
	}
}

func TestReadNodeFacts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides corev1.ResourceList
		cpu       string
		memory    string // allocatable
	}{
		{name: "the machine", cpu: strconv.Itoa(runtime.NumCPU())},
		{name: "overridden", overrides: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi")}, cpu: "64", memory: "262044Mi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			facts, err := readNodeFacts(t.TempDir(), tc.overrides, "prockubelet")
			if err != nil {
				t.Fatal(err)
			}
			if cpu := facts.allocatable[corev1.ResourceCPU]; cpu.String() != tc.cpu {
				t.Errorf("allocatable cpu %s, want %s", cpu.String(), tc.cpu)
			}
			if memory := facts.allocatable[corev1.ResourceMemory]; tc.memory != "" && memory.String() != tc.memory {
				t.Errorf("allocatable memory %s, want %s", memory.String(), tc.memory)
			}
			storage, allocatable := facts.capacity[corev1.ResourceEphemeralStorage], facts.allocatable[corev1.ResourceEphemeralStorage]
			if want := storage.Value() - storage.Value()/10; allocatable.Value() != want {
				t.Errorf("allocatable ephemeral storage %d of %d, want %d", allocatable.Value(), storage.Value(), want)
			}
		})
	}
}

func TestMachineFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	memory, err := memTotal(write("meminfo", "MemFree:  100 kB\nMemTotal:       24523452 kB\n"))
	if err != nil || memory != 24523452*1024 {
		t.Errorf("memTotal = %d, %v", memory, err)
	}
	if _, err := memTotal(write("bad-meminfo", "MemFree: 100 kB\n")); err == nil {
		t.Error("memTotal without MemTotal: no error")
	}
	for content, want := range map[string]string{
		"NAME=Debian\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n": "Debian GNU/Linux 12 (bookworm)",
		"PRETTY_NAME=Unquoted\n": "Unquoted",
		"NAME=Nameless\n":        "",
	} {
		if got := osImage(write("os-release", content)); got != want {
			t.Errorf("osImage of %q = %q, want %q", content, got, want)
		}
	}
}

func TestNew(t *testing.T) {
	gateway := netip.MustParseAddr("10.9.8.1")
	ca := newTestCA(t, "ca")
	serving := ca.issue(t, "node-a", x509.ExtKeyUsageServerAuth)
	valid := func() Config {
		return Config{
			Client: fake.NewClientset(), NodeName: "node-a", Network: &Network{Gateway: gateway}, StateDir: t.TempDir(),
			ServingCert: serving, ClientCAs: ca.pool, InitBinary: "/bin/true",
		}
	}
	free := 0
	for _, tc := range []struct {
		name   string
		change func(*Config)
		port   int
		nodeIP string
		err    string
	}{
		{name: "defaults", change: func(*Config) {}, port: 10250, nodeIP: "10.9.8.1"},
		{name: "a free port and another address", change: func(c *Config) { c.Port, c.NodeIP = &free, netip.MustParseAddr("10.0.0.5") }, port: 0, nodeIP: "10.0.0.5"},
		{name: "no serving certificate", change: func(c *Config) { c.ServingCert = tls.Certificate{} }, err: "ServingCert"},
		{name: "no client CAs", change: func(c *Config) { c.ClientCAs = nil }, err: "ClientCAs"},
		{name: "state under a directory containers see", change: func(c *Config) { c.StateDir = "/var/lib/prockubelet" }, err: "which containers see"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid()
			tc.change(&cfg)
			k, err := New(cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *k.cfg.Port != tc.port || k.cfg.NodeIP.String() != tc.nodeIP || k.cfg.KubeletVersion != DefaultKubeletVersion {
				t.Errorf("port %d, node IP %s, version %s; want %d, %s, %s", *k.cfg.Port, k.cfg.NodeIP, k.cfg.KubeletVersion, tc.port, tc.nodeIP, DefaultKubeletVersion)
			}
		})
	}
}

// TestRunRegistersAndServes runs the kubelet against a fake API server: it registers a Ready
// Node whose daemonEndpoints name the port it picked, where the kubelet API answers, and holds
// its Lease. It needs root for the API server relay at the node address's port 443.
func TestRunRegistersAndServes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the kubelet relays the API server at port 443 of the node address, which needs root")
	}
	// A loopback address of its own, so that the relay's port is free.
	nodeIP := netip.AddrFrom4([4]byte{127, byte(1 + rand.IntN(250)), byte(rand.IntN(256)), byte(1 + rand.IntN(250))})
	servingCA, clientCA := newTestCA(t, "serving"), newTestCA(t, "clients")
	client := fake.NewClientset()
	free := 0
	k, err := New(Config{
		Client: client, NodeName: "node-a", Network: &Network{Gateway: nodeIP}, StateDir: t.TempDir(), APIServer: "127.0.0.1:1",
		Port: &free, ServingCert: servingCA.issue(t, "node-a", x509.ExtKeyUsageServerAuth, nodeIP.AsSlice()), ClientCAs: clientCA.pool,
		InitBinary: "/bin/true", Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- k.Run(ctx) }()

	var node *corev1.Node
	for deadline := time.Now().Add(10 * time.Second); node == nil || len(node.Status.Conditions) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no Node with a status after 10 s")
		}
		time.Sleep(50 * time.Millisecond)
		node, _ = client.CoreV1().Nodes().Get(t.Context(), "node-a", metav1.GetOptions{})
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		t.Fatal("the Node reports no kubelet port")
	}
	apiserver := clientCA.issue(t, "kube-apiserver-kubelet-client", x509.ExtKeyUsageClientAuth)
	https := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: servingCA.pool, Certificates: []tls.Certificate{apiserver}, MinVersion: tls.VersionTLS12,
	}}}
	resp, err := https.Get("https://" + net.JoinHostPort(nodeIP.String(), strconv.Itoa(int(port))) + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("healthz: %s", resp.Status)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := client.CoordinationV1().Leases("kube-node-lease").Get(t.Context(), "node-a", metav1.GetOptions{}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no Lease after 10 s: %v", err)
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Errorf("Run: %v", err)
	}
}
