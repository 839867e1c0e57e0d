package prockubelet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
)

func TestLeftoverPodIDs(t *testing.T) {
	for _, tc := range []struct {
		name, links string
		want        []string
	}{
		{"none", "", nil},
		{"two pods", "7: skv0123456789@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master skb00aa11 state UP\n" +
			"9: skvabcdefabcd@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master skb00aa11 state UP\n", []string{"0123456789", "abcdefabcd"}},
		{"another kind of link on the bridge", "4: eth1: <BROADCAST> mtu 1500 master skb00aa11\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := leftoverPodIDs(tc.links); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A freed address is given again only once the others have been: the host may still route it
// to the pod that had it. The last address is followed by the first.
func TestFreedAddressReusedLast(t *testing.T) {
	n := &Network{Gateway: netip.MustParseAddr("10.9.8.1"), Subnet: netip.MustParsePrefix("10.9.8.0/24"), used: map[netip.Addr]string{}}
	first, err := n.allocate("skp-first")
	if err != nil {
		t.Fatal(err)
	}
	n.release(&PodNetwork{Name: "skp-first", IP: first})
	var got []netip.Addr
	for i := range 253 {
		addr, err := n.allocate(fmt.Sprintf("skp-%d", i))
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		got = append(got, addr)
	}
	if want := netip.MustParseAddr("10.9.8.3"); got[0] != want {
		t.Errorf("after %s was freed: got %s, want %s", first, got[0], want)
	}
	if last := got[len(got)-1]; last != first {
		t.Errorf("the freed %s was not the last given: the last was %s", first, last)
	}
	if addr, err := n.allocate("skp-full"); err == nil {
		t.Errorf("a full network gave %s", addr)
	}
}

// A pod that ends on its own gives its address back, and again when it is removed; by then the
// address may be another pod's, which must keep it.
func TestReleasedAddressStaysWithItsNewHolder(t *testing.T) {
	// Two addresses (10.9.8.2 and .3): the freed one is given again at the second allocation.
	n := &Network{Gateway: netip.MustParseAddr("10.9.8.1"), Subnet: netip.MustParsePrefix("10.9.8.0/30"), used: map[netip.Addr]string{}}
	first, err := n.allocate("skp-first")
	if err != nil {
		t.Fatal(err)
	}
	n.release(&PodNetwork{Name: "skp-first", IP: first})
	if _, err := n.allocate("skp-other"); err != nil {
		t.Fatal(err)
	}
	second, err := n.allocate("skp-second")
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Fatalf("the freed address %s was not reused: got %s", first, second)
	}
	n.release(&PodNetwork{Name: "skp-first", IP: first})
	if third, err := n.allocate("skp-third"); err == nil {
		t.Fatalf("%s given to a second live pod", third)
	}
}

// The node's bridge keeps its address while pods come and go: the pods' ARP entries for the
// node's address (their gateway, and the API server's) stay right. A bridge whose address is
// never set takes its lowest port's, and changes with the first pod.
func TestBridgeAddressStaysAsPodsComeAndGo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a pod network needs root")
	}
	ctx := context.Background()
	// Seeded by the process, so that two runs on one machine make bridges of other names.
	n, err := NewNetwork(ctx, rand.New(rand.NewPCG(uint64(os.Getpid()), 2)))
	if err != nil {
		t.Fatal(err)
	}
	var pods []*PodNetwork
	defer func() {
		for _, pod := range pods {
			n.RemovePod(pod) // a second removal changes nothing
		}
		_ = n.Close()
	}()
	address := func() string {
		t.Helper()
		iface, err := net.InterfaceByName(n.Bridge)
		if err != nil {
			t.Fatal(err)
		}
		return iface.HardwareAddr.String()
	}
	want := address()
	for i := range 4 {
		pod, err := n.AddPod(ctx, fmt.Sprintf("pod-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod)
		if got := address(); got != want {
			t.Fatalf("the bridge's address went from %s to %s when pod %d joined", want, got, i)
		}
	}
	for i, pod := range pods {
		n.RemovePod(pod)
		if got := address(); got != want {
			t.Fatalf("the bridge's address went from %s to %s when pod %d left", want, got, i)
		}
	}
}
