package realnode

import (
	"encoding/json"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
)

func TestFreeSubnet(t *testing.T) {
	random := rand.New(rand.NewPCG(1, 2))
	taken, err := freeSubnet("", random)
	if err != nil {
		t.Fatal(err)
	}
	if taken.Bits() != 24 || taken.Addr().As4()[0] != 10 || taken.Addr().As4()[1] < 224 {
		t.Errorf("freeSubnet = %s, want a 10.224-254.x.0/24", taken)
	}
	// Every candidate in use: the same sequence of picks finds nothing.
	var routes strings.Builder
	replay := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		p, _ := freeSubnet("", replay)
		routes.WriteString(p.String() + " dev x\n")
	}
	if p, err := freeSubnet(routes.String(), rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Errorf("freeSubnet with every pick routed = %s, want an error", p)
	}
}

func TestUnescapeMountPath(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/plain`:         "/tmp/plain",
		`/tmp/with\040space`: "/tmp/with space",
		`/tmp/tab\011x`:      "/tmp/tab\tx",
		`/tmp/trailing\`:     `/tmp/trailing\`,
	} {
		if got := unescapeMountPath(in); got != want {
			t.Errorf("unescapeMountPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCNIConfig(t *testing.T) {
	data, err := cniConfig(netip.MustParsePrefix("10.230.4.0/24"), 1400, "/state/ipam")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			Type   string `json:"type"`
			IPMasq bool   `json:"ipMasq"`
			MTU    int    `json:"mtu"`
			IPAM   struct {
				Ranges  [][]map[string]string `json:"ranges"`
				DataDir string                `json:"dataDir"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatal(err)
	}
	p := conf.Plugins[0]
	if p.Type != "bridge" || !p.IPMasq || p.MTU != 1400 || p.IPAM.Ranges[0][0]["subnet"] != "10.230.4.0/24" || p.IPAM.DataDir != "/state/ipam" {
		t.Errorf("CNI configuration %s", data)
	}
}

func TestKubeletConfig(t *testing.T) {
	c := Config{NodeIP: netip.MustParsePrefix("10.70.1.2/24"), ClusterDNS: netip.MustParseAddr("10.0.0.10"), CAFile: "/pki/ca.crt"}
	got := kubeletConfig(c, "/state/kubelet", "/state/containerd.sock", "/sparkhooks-abc")
	for key, want := range map[string]any{
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"cgroupRoot":               "/sparkhooks-abc",
		"containerRuntimeEndpoint": "unix:///state/containerd.sock",
		"address":                  "10.70.1.2",
		"clusterDomain":            "cluster.local",
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	if dns := got["clusterDNS"].([]string); len(dns) != 1 || dns[0] != "10.0.0.10" {
		t.Errorf("clusterDNS = %v", dns)
	}
}
