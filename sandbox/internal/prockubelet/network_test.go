package prockubelet

import (
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

// A pod that ends on its own gives its address back, and again when it is removed; by then the
// address may be another pod's, which must keep it.
func TestReleasedAddressStaysWithItsNewHolder(t *testing.T) {
	n := &Network{Gateway: netip.MustParseAddr("10.9.8.1"), Subnet: netip.MustParsePrefix("10.9.8.0/24"), used: map[netip.Addr]string{}}
	first, err := n.allocate("skp-first")
	if err != nil {
		t.Fatal(err)
	}
	n.release(&PodNetwork{Name: "skp-first", IP: first})
	second, err := n.allocate("skp-second")
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Fatalf("the freed address %s was not reused: got %s", first, second)
	}
	n.release(&PodNetwork{Name: "skp-first", IP: first})
	third, err := n.allocate("skp-third")
	if err != nil {
		t.Fatal(err)
	}
	if third == second {
		t.Fatalf("%s given to a second live pod", third)
	}
}
