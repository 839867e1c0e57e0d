package event

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "abc", 10, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdefghij", 6, "abc…"},
		{"multibyte boundary", "ééééé", 7, "éé…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bound(tc.in, tc.n)
			assert.Equal(t, tc.want, got)
			assert.LessOrEqual(t, len(got), tc.n)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

func TestNewBoundsTheNote(t *testing.T) {
	e := New(Warning, "R", "A", strings.Repeat("x", 5000))
	assert.Len(t, e.Message, MaxNote)
}

func TestRegardingLeavesOutTheResourceVersion(t *testing.T) {
	ref := Regarding(metav1.TypeMeta{APIVersion: "v1", Kind: "K"},
		&metav1.ObjectMeta{Name: "n", Namespace: "ns", UID: "u", ResourceVersion: "42"})
	assert.Empty(t, ref.ResourceVersion)
	assert.Equal(t, "n", ref.Name)
	assert.Equal(t, "ns", ref.Namespace)
	assert.Equal(t, "u", string(ref.UID))
}
