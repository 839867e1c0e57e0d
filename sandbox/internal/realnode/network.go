package realnode

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// network is the node's own network namespace, as if the node were a machine of its own: a veth
// pair joins it to the host's bridge (the node's eth0, at the node's address), its containerd
// puts the pods on a bridge of their own inside it, and kube-proxy's rules live only there. The
// host routes the pod network, and the Service network where no other node has claimed it, to
// the node's address, as a cluster's machines route to each other. Deleting the namespace takes
// the bridge, the pods' veths, every iptables rule and the host's end of the pair with it.
type network struct {
	name     string // the namespace, under /run/netns
	path     string
	nodeIP   netip.Addr
	podCIDR  netip.Prefix
	hostVeth string
	routes   []string // host routes to remove
	mtu      int
}

// networkConfig is where the node joins the host.
type networkConfig struct {
	bridge  string       // the host's bridge
	nodeIP  netip.Prefix // the node's address on it
	gateway netip.Addr   // the host's address on it
	service netip.Prefix
}

func newNetwork(ctx context.Context, c networkConfig, random *rand.Rand, logf func(string, ...any)) (_ *network, err error) {
	routes, err := ipOutput(ctx, "-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	podCIDR, err := freeSubnet(routes, random)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%06x", random.IntN(1<<24))
	n := &network{
		name: "skn-" + id, nodeIP: c.nodeIP.Addr(), podCIDR: podCIDR, hostVeth: "sknh" + id,
		mtu: defaultRouteMTU(ctx),
	}
	n.path = filepath.Join("/run/netns", n.name)
	defer func() {
		if err != nil {
			n.close()
		}
	}()
	nodeVeth := "sknn" + id
	mtu := fmt.Sprint(n.mtu)
	for _, step := range [][]string{
		{"netns", "add", n.name},
		{"link", "add", n.hostVeth, "mtu", mtu, "type", "veth", "peer", "name", nodeVeth, "mtu", mtu},
		{"link", "set", nodeVeth, "netns", n.name},
		{"link", "set", n.hostVeth, "master", c.bridge, "up"},
		{"-n", n.name, "link", "set", nodeVeth, "name", "eth0"},
		{"-n", n.name, "addr", "add", c.nodeIP.String(), "dev", "eth0"},
		{"-n", n.name, "link", "set", "eth0", "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
		{"-n", n.name, "route", "add", "default", "via", c.gateway.String()},
	} {
		if _, err := ipOutput(ctx, step...); err != nil {
			return nil, fmt.Errorf("the node's network (needs root): %w", err)
		}
	}
	// A node forwards between its pods and the rest of the cluster, and its bridge's traffic goes
	// through iptables, where kube-proxy's rules are.
	for _, sysctl := range []string{"net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1"} {
		if out, err := n.command(ctx, "sysctl", "-q", "-w", sysctl).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sysctl %s in the node's namespace: %v: %s", sysctl, err, strings.TrimSpace(string(out)))
		}
	}
	if err := n.route(ctx, podCIDR); err != nil {
		return nil, err
	}
	// The Service network is one for every node of this machine; a second node keeps its
	// Services to itself (its pods still reach them).
	if err := n.route(ctx, c.service); err != nil {
		logf("realnode: the host does not route %s to this node: %v", c.service, err)
	}
	return n, nil
}

func (n *network) route(ctx context.Context, to netip.Prefix) error {
	if _, err := ipOutput(ctx, "route", "add", to.String(), "via", n.nodeIP.String()); err != nil {
		return err
	}
	n.routes = append(n.routes, to.String())
	return nil
}

// command runs a program in the node's network namespace (and the host's everything else, as a
// node's daemons share its mounts).
func (n *network) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + n.path, "--", name}, args...)...)
}

// close removes the host's routes and the namespace, with everything in it.
func (n *network) close() {
	ctx := context.Background()
	for _, r := range n.routes {
		_, _ = ipOutput(ctx, "route", "del", r, "via", n.nodeIP.String())
	}
	_, _ = ipOutput(ctx, "link", "del", n.hostVeth)
	_, _ = ipOutput(ctx, "netns", "del", n.name)
}

// freeSubnet picks a 10.x.y.0/24 that no route of the machine uses, from the range the process
// kubelet leaves alone (10.224-10.254), for the node's pods.
func freeSubnet(routes string, random *rand.Rand) (netip.Prefix, error) {
	for range 50 {
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(224 + random.IntN(31)), byte(random.IntN(256)), 0}), 24)
		if !strings.Contains(routes, subnet.String()) {
			return subnet, nil
		}
	}
	return netip.Prefix{}, errors.New("no free 10.x.y.0/24 for the pod network")
}

// defaultRouteMTU is the MTU of the machine's way out, which every link of the node keeps to, so
// that a pod's full-sized packet is not dropped on the way (a VM's eth0 is often below 1500).
func defaultRouteMTU(ctx context.Context) int {
	route, err := ipOutput(ctx, "-4", "route", "show", "default")
	if err != nil {
		return 1500
	}
	fields := strings.Fields(route)
	for i := 0; i+1 < len(fields); i++ {
		if fields[i] == "dev" {
			data, err := os.ReadFile(filepath.Join("/sys/class/net", fields[i+1], "mtu"))
			var mtu int
			if err == nil {
				if _, err := fmt.Sscan(string(data), &mtu); err == nil && mtu >= 576 {
					return mtu
				}
			}
		}
	}
	return 1500
}

func ipOutput(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
