package javaprops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cases follow the examples of java.util.Properties.load's documentation.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"separators", "a=1\nb:2\nc 3\nd\t=\t4\n", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}},
		{"comments and blanks", "# x=1\n! y=2\n\n   \nz=3", map[string]string{"z": "3"}},
		{"escaped separators in key", `k\:e\=y\ x=v`, map[string]string{"k:e=y x": "v"}},
		{"value keeps inner separators", "url=k8s://https://h:443", map[string]string{"url": "k8s://https://h:443"}},
		{"escapes", `v=\t\n\r\f\\\u00e9\q`, map[string]string{"v": "\t\n\r\f\\éq"}},
		{"leading value space escaped", `v=\  x`, map[string]string{"v": "  x"}},
		{"continuation", "fruits = apple, \\\n    banana\n", map[string]string{"fruits": "apple, banana"}},
		{"even backslashes do not continue", "a=x\\\\\nb=y", map[string]string{"a": `x\`, "b": "y"}},
		{"empty value", "cheeses\n", map[string]string{"cheeses": ""}},
		{"last wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"utf-8", "name=日本", map[string]string{"name": "日本"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseRejectsBadUnicodeEscapes(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uzzzz`} {
		_, err := Parse(in)
		assert.Error(t, err, in)
	}
}
