package prockubelet

import (
	"fmt"
	"net/netip"
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
