package prockubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Network is the pod network of one kubelet: a Linux bridge with the node's address on it and a
// /24 of private addresses, one network namespace per pod joined to the bridge by a veth pair.
// The host reaches every pod address directly; pods reach each other and the node's address.
type Network struct {
	Bridge  string
	Subnet  netip.Prefix
	Gateway netip.Addr

	// Nameservers are the machine's resolvers that pods can reach (not loopback ones); empty
	// without egress. Pods ask them for names their hosts file does not have.
	Nameservers []netip.Addr

	mu sync.Mutex
	// used maps each address in use to the network namespace that holds it.
	used map[netip.Addr]string
	// last is the address given last; the next search starts after it.
	last netip.Addr
	// egress undoes what EnableEgress did; nil when it did nothing.
	egress func()
}

// NewNetwork creates a bridge with a random name on a random 10.x.y.0/24 that no route of the
// machine uses, so several kubelets (tests, a sandbox) can run on one machine side by side.
func NewNetwork(ctx context.Context, random *rand.Rand) (*Network, error) {
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("the process kubelet needs the ip command (Debian: apt-get install iproute2)")
	}
	routes, err := ipOutput(ctx, "-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	for range 50 {
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(64 + random.IntN(160)), byte(random.IntN(256)), 0}), 24)
		if strings.Contains(routes, subnet.String()) {
			continue
		}
		n := &Network{
			Bridge:  fmt.Sprintf("skb%06x", random.IntN(1<<24)),
			Subnet:  subnet,
			Gateway: subnet.Addr().Next(),
			used:    map[netip.Addr]string{},
		}
		// A bridge whose address was never set takes the lowest of its ports' addresses, so it
		// changed whenever a pod's veth came or went, and the other pods' ARP entries for the
		// node then named an address nobody answered: their connections to the API server
		// timed out until the entries were probed again (a driver's request failed after 10 s in
		// CI). An address set once stays, as container runtimes set theirs.
		mac := fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", random.IntN(256), random.IntN(256), random.IntN(256), random.IntN(256), random.IntN(256))
		steps := [][]string{
			{"link", "add", n.Bridge, "type", "bridge"},
			{"link", "set", n.Bridge, "address", mac},
			{"addr", "add", netip.PrefixFrom(n.Gateway, 24).String(), "dev", n.Bridge},
			{"link", "set", n.Bridge, "up"},
		}
		for _, step := range steps {
			if err := ip(ctx, step...); err != nil {
				_ = ip(context.Background(), "link", "del", n.Bridge)
				return nil, fmt.Errorf("creating the pod network (needs root): %w", err)
			}
		}
		return n, nil
	}
	return nil, errors.New("no free 10.x.y.0/24 for the pod network")
}

// Close deletes the bridge and the egress rules; the pods' namespaces must be gone already.
func (n *Network) Close() error {
	if n.egress != nil {
		n.egress()
	}
	return ip(context.Background(), "link", "del", n.Bridge)
}

// EnableEgress lets pods reach beyond the machine, as pods of a cluster with outbound access do
// (a Spark Connect server fetching a jar from Maven Central, say): their traffic is masqueraded
// out of the interface of the default route, with IPv4 forwarding on, and the machine's
// resolvers become theirs. It needs nft (Debian: apt-get install nftables); Close undoes it,
// forwarding included when it was off.
func (n *Network) EnableEgress(ctx context.Context, resolvConf string) error {
	if _, err := exec.LookPath("nft"); err != nil {
		return errors.New("pod egress needs the nft command (Debian: apt-get install nftables)")
	}
	route, err := ipOutput(ctx, "-4", "route", "show", "default")
	if err != nil {
		return err
	}
	fields := strings.Fields(route)
	dev := ""
	for i := 0; i+1 < len(fields); i++ {
		if fields[i] == "dev" {
			dev = fields[i+1]
		}
	}
	if dev == "" {
		return errors.New("pod egress: the machine has no default route")
	}
	const forwarding = "/proc/sys/net/ipv4/ip_forward"
	before, err := os.ReadFile(forwarding)
	if err != nil {
		return fmt.Errorf("pod egress: %w", err)
	}
	if err := os.WriteFile(forwarding, []byte("1\n"), 0o644); err != nil {
		return fmt.Errorf("pod egress: turning on IPv4 forwarding: %w", err)
	}
	table := n.Bridge
	rules := fmt.Sprintf("table ip %s {\n chain postrouting {\n  type nat hook postrouting priority srcnat; policy accept;\n  ip saddr %s oifname %q masquerade\n }\n}\n", table, n.Subnet, dev)
	cmd := exec.CommandContext(ctx, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.WriteFile(forwarding, before, 0o644)
		return fmt.Errorf("pod egress: nft: %v: %s", err, strings.TrimSpace(string(out)))
	}
	n.egress = func() {
		_ = exec.Command("nft", "delete", "table", "ip", table).Run()
		if strings.TrimSpace(string(before)) != "1" {
			_ = os.WriteFile(forwarding, before, 0o644)
		}
	}
	n.Nameservers = reachableNameservers(resolvConf)
	return nil
}

// reachableNameservers are the nameservers of a resolv.conf that a pod can reach through the
// node: loopback resolvers (systemd-resolved's 127.0.0.53) exist only in the machine's own
// network namespace.
func reachableNameservers(path string) []netip.Addr {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "nameserver" {
			continue
		}
		if addr, err := netip.ParseAddr(fields[1]); err == nil && addr.Is4() && !addr.IsLoopback() {
			out = append(out, addr)
		}
	}
	return out
}

// PodNetwork is one pod's network namespace and address.
type PodNetwork struct {
	Name string // the namespace's name, under /run/netns
	Path string
	IP   netip.Addr
}

// AddPod creates the network namespace of the pod with uid, with loopback, an eth0 on the bridge
// and a default route to the node.
func (n *Network) AddPod(ctx context.Context, uid string) (*PodNetwork, error) {
	sum := sha256.Sum256([]byte(n.Bridge + uid))
	id := hex.EncodeToString(sum[:])[:10]
	addr, err := n.allocate(podNetNSPrefix + id)
	if err != nil {
		return nil, err
	}
	pn := &PodNetwork{Name: podNetNSPrefix + id, Path: "/run/netns/" + podNetNSPrefix + id, IP: addr}
	hostVeth := hostVethPrefix + id
	steps := [][]string{
		{"netns", "add", pn.Name},
		{"link", "add", hostVeth, "type", "veth", "peer", "name", "eth0", "netns", pn.Name},
		{"link", "set", hostVeth, "master", n.Bridge, "up"},
		{"-n", pn.Name, "link", "set", "lo", "up"},
		{"-n", pn.Name, "addr", "add", netip.PrefixFrom(addr, 24).String(), "dev", "eth0"},
		{"-n", pn.Name, "link", "set", "eth0", "up"},
		{"-n", pn.Name, "route", "add", "default", "via", n.Gateway.String()},
	}
	for _, step := range steps {
		if err := ip(ctx, step...); err != nil {
			n.RemovePod(pn)
			return nil, fmt.Errorf("setting up the pod's network: %w", err)
		}
	}
	return pn, nil
}

// A pod's network namespace and the host end of its veth share an id, so that what a dead
// kubelet left can be found from its bridge (RemoveLeftovers).
const (
	podNetNSPrefix = "skp-"
	hostVethPrefix = "skv"
)

// RemoveLeftovers deletes what the Network on bridge left when its process died before Close
// could run: its pods' network namespaces (found from their veths on the bridge), its egress
// table and the bridge. A bridge that is not there is nothing to do.
func RemoveLeftovers(ctx context.Context, bridge string) error {
	if _, err := net.InterfaceByName(bridge); err != nil {
		return nil
	}
	links, err := ipOutput(ctx, "-o", "link", "show", "master", bridge)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range leftoverPodIDs(links) {
		if err := ip(ctx, "netns", "del", podNetNSPrefix+id); err != nil {
			errs = append(errs, err)
		}
	}
	// Only there if EnableEgress made it.
	_ = exec.CommandContext(ctx, "nft", "delete", "table", "ip", bridge).Run()
	if err := ip(ctx, "link", "del", bridge); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// leftoverPodIDs reads the pod ids from `ip -o link show master <bridge>`, whose lines name the
// host ends of the pods' veths: "7: skv0123456789@if2: <BROADCAST,...> ...".
func leftoverPodIDs(links string) []string {
	var ids []string
	for _, line := range strings.Split(links, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
		if id, ok := strings.CutPrefix(name, hostVethPrefix); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// RemovePod deletes the pod's namespace (and with it the veth pair) and frees its address. A
// second call for the same pod changes nothing: its address may be another pod's by then.
func (n *Network) RemovePod(pn *PodNetwork) {
	_ = ip(context.Background(), "netns", "del", pn.Name)
	n.release(pn)
}

// allocate gives the first free address after the one given last, wrapping around, as the
// host-local IPAM plugin does: a pod replaced by a rollout does not get the address its
// predecessor had a moment ago, which the host may still route to the gone pod.
func (n *Network) allocate(holder string) (netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	first := n.Gateway.Next()
	start := first
	if n.last.IsValid() && n.assignable(n.last.Next()) {
		start = n.last.Next()
	}
	addr := start
	for {
		if _, taken := n.used[addr]; !taken {
			n.used[addr] = holder
			n.last = addr
			return addr, nil
		}
		if addr = addr.Next(); !n.assignable(addr) {
			addr = first
		}
		if addr == start {
			return netip.Addr{}, fmt.Errorf("the pod network %s is full", n.Subnet)
		}
	}
}

// assignable tells whether addr is a pod address of the subnet: not past it, nor its broadcast.
func (n *Network) assignable(addr netip.Addr) bool {
	return n.Subnet.Contains(addr) && addr.As4()[3] != 255
}

// release frees pn's address if pn still holds it.
func (n *Network) release(pn *PodNetwork) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.used[pn.IP] == pn.Name {
		delete(n.used, pn.IP)
	}
}

// Forward accepts TCP connections on the node's address at port and relays them to target, until
// ctx ends. It stands in for a Service's cluster IP (the API server's, for pods).
func (n *Network) Forward(ctx context.Context, port int, target string) error {
	listener, err := net.Listen("tcp", net.JoinHostPort(n.Gateway.String(), fmt.Sprint(port)))
	if err != nil {
		return fmt.Errorf("listening on the node address for %s: %w", target, err)
	}
	go func() {
		<-ctx.Done()
		listener.Close()
	}()
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go relay(conn, target)
		}
	}()
	return nil
}

func relay(in net.Conn, target string) {
	defer in.Close()
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

func ip(ctx context.Context, args ...string) error {
	_, err := ipOutput(ctx, args...)
	return err
}

func ipOutput(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
