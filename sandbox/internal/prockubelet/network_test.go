package prockubelet

import (
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
