package driver

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadJavaProperties reads a properties file following the rules java.util.Properties.load
// documents, independently of the writer under test:
//   - a natural line ends at \n, \r or \r\n; a logical line continues on the next natural line
//     when it ends with an odd number of backslashes, and the continuation's leading
//     whitespace is dropped;
//   - whitespace is space, \t and \f; leading whitespace is skipped; blank lines are ignored;
//   - a line whose first non-whitespace character is # or ! is a comment, and cannot be
//     continued;
//   - the key ends at the first unescaped =, : or whitespace; whitespace after it, then one
//     optional = or :, then whitespace again, are skipped; the rest is the value;
//   - escapes: \t \n \r \f, \uXXXX (exactly four hex digits, UTF-16 code units), and a
//     backslash before any other character stands for that character.
func loadJavaProperties(text string) (map[string]string, error) {
	props := map[string]string{}
	for _, line := range javaLogicalLines([]rune(text)) {
		key, value, err := splitJavaLine(line)
		if err != nil {
			return nil, err
		}
		props[key] = value
	}
	return props, nil
}

func isJavaWhite(c rune) bool { return c == ' ' || c == '\t' || c == '\f' }

func javaLogicalLines(src []rune) [][]rune {
	var out [][]rune
	i := 0
	for i < len(src) {
		for i < len(src) && isJavaWhite(src[i]) {
			i++
		}
		if i >= len(src) {
			break
		}
		if src[i] == '\n' || src[i] == '\r' {
			i++ // a blank line
			continue
		}
		if src[i] == '#' || src[i] == '!' {
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
			continue
		}
		var line []rune
		backslash := false
		for i < len(src) {
			c := src[i]
			if c == '\n' || c == '\r' {
				i++
				if !backslash {
					break
				}
				// Continuation: drop the escaping backslash, the \n of a \r\n, and the
				// next line's leading whitespace.
				line = line[:len(line)-1]
				backslash = false
				if c == '\r' && i < len(src) && src[i] == '\n' {
					i++
				}
				for i < len(src) && isJavaWhite(src[i]) {
					i++
				}
				continue
			}
			line = append(line, c)
			if c == '\\' {
				backslash = !backslash
			} else {
				backslash = false
			}
			i++
		}
		if backslash {
			line = line[:len(line)-1] // a lone backslash at the end of the input is dropped
		}
		out = append(out, line)
	}
	return out
}

func splitJavaLine(line []rune) (string, string, error) {
	keyLen, valueStart := 0, len(line)
	hasSep, backslash := false, false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !backslash {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if isJavaWhite(c) && !backslash {
			valueStart = keyLen + 1
			break
		}
		backslash = c == '\\' && !backslash
		keyLen++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isJavaWhite(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	key, err := javaUnescape(line[:keyLen])
	if err != nil {
		return "", "", err
	}
	value, err := javaUnescape(line[valueStart:])
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

func javaUnescape(s []rune) (string, error) {
	var units []uint16
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			units = utf16.AppendRune(units, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf("dangling backslash in %q", string(s))
		}
		switch s[i] {
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\uxxxx encoding in %q", string(s))
			}
			var v uint16
			for _, h := range s[i+1 : i+5] {
				var d rune
				switch {
				case h >= '0' && h <= '9':
					d = h - '0'
				case h >= 'a' && h <= 'f':
					d = h - 'a' + 10
				case h >= 'A' && h <= 'F':
					d = h - 'A' + 10
				default:
					return "", fmt.Errorf("malformed \\uxxxx encoding in %q", string(s))
				}
				v = v<<4 | uint16(d)
			}
			units = append(units, v)
			i += 4
		case 't':
			units = append(units, '\t')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 'f':
			units = append(units, '\f')
		default:
			units = utf16.AppendRune(units, s[i])
		}
	}
	return string(utf16.Decode(units)), nil
}

// The reader must itself follow Java: these are the examples of the Properties.load Javadoc.
func TestJavaPropertiesReaderFollowsJavadoc(t *testing.T) {
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
			got, err := loadJavaProperties(tt.text)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := loadJavaProperties(`k=\u12`)
	assert.Error(t, err, "a short \\u escape is malformed")
}

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
	got, err := loadJavaProperties(string(p.marshal("header")))
	require.NoError(t, err)
	assert.Equal(t, map[string]string(p), got)

	// And one at a time, so that a failure names its pair.
	for _, tt := range tests {
		one := properties{tt.key: tt.value}
		text := string(one.marshal(""))
		got, err := loadJavaProperties(text)
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
		got, err := loadJavaProperties(text)
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
