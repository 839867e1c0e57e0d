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

// The reader must itself follow Java: these are the examples of the Properties.load Javadoc.
func TestParseFollowsJavadoc(t *testing.T) {
	tests := []struct {
		name string
		text string
		want map[string]string
	}{
		{"equals", "Truth = Beauty\n", map[string]string{"Truth": "Beauty"}},
		{"colon with leading space", "  Truth:Beauty\n", map[string]string{"Truth": "Beauty"}},
		{"whitespace then colon", "Truth                    :Beauty", map[string]string{"Truth": "Beauty"}},
		{"whitespace separator", "Truth Beauty", map[string]string{"Truth": "Beauty"}},
		{
			"continuations",
			"fruits                           apple, banana, pear, \\\n" +
				"                                  cantaloupe, watermelon, \\\r\n" +
				"                                  kiwi, mango\n",
			map[string]string{"fruits": "apple, banana, pear, cantaloupe, watermelon, kiwi, mango"},
		},
		{"key alone", "cheeses\n", map[string]string{"cheeses": ""}},
		{"escaped separators in key", `\:\= = x`, map[string]string{":=": "x"}},
		{"second separator is value", "a==b", map[string]string{"a": "=b"}},
		{"comments and blank lines", "# c1\n  ! c2\n\n\r\na=1\r\n#b=2\n", map[string]string{"a": "1"}},
		{"comment cannot be continued", "# c \\\na=1", map[string]string{"a": "1"}},
		{"escapes", `k=\t\n\r\f\u00fc\u65E5\q\\`, map[string]string{"k": "\t\n\r\fü日q\\"}},
		{"surrogate pair", `k=\ud83d\ude00`, map[string]string{"k": "😀"}},
		{"trailing whitespace kept", "k=v  ", map[string]string{"k": "v  "}},
		{"even backslashes do not continue", "a=x\\\\\nb=y", map[string]string{"a": `x\`, "b": "y"}},
		{"later wins", "a=1\na=2", map[string]string{"a": "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.text)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := Parse(`k=\u12`)
	assert.Error(t, err, "a short \\u escape is malformed")
}
