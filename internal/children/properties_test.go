package children

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/testsupport/javaprops"
)

func TestPropertiesRoundTrip(t *testing.T) {
	tests := []struct{ key, value string }{
		{"spark.plain", "value"},
		{"spark.empty", ""},
		{"key with spaces", "value with spaces"},
		{" leading.space.key", "  leading spaces in value"},
		{"trailing.space.key ", "trailing spaces  "},
		{"a=b", "c=d"},
		{"a:b", "c:d"},
		{"#not.a.comment", "#value"},
		{"!not.a.comment", "!value"},
		{"=", "="},
		{":", ":"},
		{`back\slash`, `C:\Program Files\spark\`},
		{`\`, `\\`},
		{`\u0041`, `\u0041 stays literal`},
		{"new\nline", "line1\nline2\n"},
		{"cr\rkey", "a\r\nb"},
		{"tab\tkey", "\tleading tab"},
		{"form\ffeed", "\fx"},
		{"spark.unicode", "über 日本 😀"},
		{"ü.日本", "key is not ASCII"},
		{"ctrl\x01key", "bell\x07nul\x00esc\x1bdel\x7f"},
		{"spark.driver.extraJavaOptions", `-Dx="a b" -Dy='c' -javaagent:/jmx.jar=8090:/etc/metrics/conf/prometheus.yaml`},
		{"spark.kubernetes.executor.annotation.sparkoperator.k8s.io/pod-customization", `{"v":1,"memoryLimit":"4Gi"}`},
		{"", "empty key"},
		{"only.whitespace", " \t\f "},
		{"end.with.backslash.space", `a\ `},
		{"continuation.lookalike", "a\\\nb"},
	}
	p := properties{}
	for _, tt := range tests {
		p.set(tt.key, tt.value)
	}
	got, err := javaprops.Parse(string(p.marshal("header")))
	require.NoError(t, err)
	assert.Equal(t, map[string]string(p), got)

	// And one at a time, so that a failure names its pair.
	for _, tt := range tests {
		one := properties{tt.key: tt.value}
		text := string(one.marshal(""))
		got, err := javaprops.Parse(text)
		require.NoError(t, err, "%q", text)
		assert.Equal(t, map[string]string{tt.key: tt.value}, got, "written as %q", text)
		assert.Equal(t, 1, strings.Count(text, "\n"), "one property is one line: %q", text)
	}
}

// Random strings over the characters that matter, with a fixed seed.
func TestPropertiesRoundTripRandom(t *testing.T) {
	alphabet := []rune("ab =:#!\\\t\n\r\f\x00\x01\x1f\x7fü日😀u0-.")
	rng := rand.New(rand.NewSource(1))
	random := func() string {
		n := rng.Intn(12)
		r := make([]rune, n)
		for i := range r {
			r[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return string(r)
	}
	for i := 0; i < 300; i++ {
		p := properties{}
		for j := 0; j < 5; j++ {
			p.set(random(), random())
		}
		text := string(p.marshal("h"))
		got, err := javaprops.Parse(text)
		require.NoError(t, err, "%q", text)
		require.Equal(t, map[string]string(p), got, "written as %q", text)
	}
}

func TestPropertiesEscaping(t *testing.T) {
	tests := []struct {
		name       string
		key, value string
		want       string
	}{
		{"plain", "spark.app.name", "pi", "spark.app.name=pi\n"},
		{"space in key, inner space in value", "a b", "c d", `a\ b=c d` + "\n"},
		{"leading space in value", "k", " v", `k=\ v` + "\n"},
		{"separators and comment starters", "k=:#!", "=:#!", `k\=\:\#\!=\=\:\#\!` + "\n"},
		{"line breaks", "k", "a\nb\rc", `k=a\nb\rc` + "\n"},
		{"control characters", "k", "\x01\x7f", `k=\u0001\u007f` + "\n"},
		{"non-ASCII as UTF-8", "k", "ü日", "k=ü日\n"},
		{"backslash", "k", `a\b`, `k=a\\b` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(properties{tt.key: tt.value}.marshal("")))
		})
	}
}

func TestPropertiesSortedDeterministicNoDate(t *testing.T) {
	keys := []string{"spark.b", "spark.a", "spark.executor.memory", "a", "spark.driver.memory", "Z", "spark.a.b"}
	p1, p2 := properties{}, properties{}
	for i, k := range keys {
		p1.set(k, fmt.Sprint(i))
	}
	for i := len(keys) - 1; i >= 0; i-- {
		p2.set(keys[i], fmt.Sprint(i))
	}
	out := p1.marshal("Spark properties of test")
	for i := 0; i < 20; i++ {
		require.Equal(t, out, p1.marshal("Spark properties of test"))
		require.Equal(t, out, p2.marshal("Spark properties of test"))
	}

	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(keys)+1)
	assert.Equal(t, "# Spark properties of test", lines[0], "the header is the only comment")
	var written []string
	for _, l := range lines[1:] {
		assert.False(t, strings.HasPrefix(l, "#"), "no other comment (such as store()'s date): %q", l)
		k, _, ok := strings.Cut(l, "=")
		require.True(t, ok)
		written = append(written, k)
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	assert.Equal(t, sorted, written)

	assert.Equal(t, "a=1\n", string(properties{"a": "1"}.marshal("")), "no header, no comment line")
	assert.Empty(t, properties{}.marshal(""))
}

// The spark.properties Build writes reads back as the properties the builder holds.
func TestBuiltPropertiesFile(t *testing.T) {
	app := newApp(withConf(
		"spark.user.odd", " lead=ing:#!\\ \ntrail ",
		"spark.user.unicode", "Grüße 日本",
	))
	objs := build(t, app, Options{})
	text := objs.ConfigMap.Data[propertiesFile]
	props := sparkProps(t, objs)
	assert.Equal(t, " lead=ing:#!\\ \ntrail ", props["spark.user.odd"])
	assert.Equal(t, "Grüße 日本", props["spark.user.unicode"])
	assert.Equal(t, 1, strings.Count(text, "\n#")+boolInt(strings.HasPrefix(text, "#")), "one comment line")
	assert.True(t, strings.HasPrefix(text, "# Spark properties of SparkApplication team-a/pi, attempt 1 ("+testSub.SubmissionID+")"), text[:80])
	assert.NotRegexp(t, `(?m)^#.*(Mon|Tue|Wed|Thu|Fri|Sat|Sun) `, text, "no date comment")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
