package children

import (
	"slices"
	"strconv"
	"strings"
)

// properties are Spark properties. Setting a key again replaces its value, as a later --conf
// does on the spark-submit command line.
type properties map[string]string

func (p properties) set(key, value string) { p[key] = value }

// setIfAbsent sets a key the user may already have chosen.
func (p properties) setIfAbsent(key, value string) {
	if _, ok := p[key]; !ok {
		p[key] = value
	}
}

func (p properties) setInt(key string, v *int32) {
	if v != nil {
		p[key] = strconv.Itoa(int(*v))
	}
}

func (p properties) setString(key string, v *string) {
	if v != nil {
		p[key] = *v
	}
}

// setMap sets prefix+k=v for every entry, in key order (which only matters for readability).
func (p properties) setMap(prefix string, m map[string]string) {
	for k, v := range m {
		p[prefix+k] = v
	}
}

// get returns a property, "" when absent.
func (p properties) get(key string) string { return p[key] }

// marshal writes the properties as a Java properties file that java.util.Properties.load reads
// back exactly: keys sorted, one per line, no date comment (so the content, and the ConfigMap
// name derived from it, depend only on the properties).
func (p properties) marshal(header string) []byte {
	keys := make([]string, 0, len(p))
	size := len(header) + 3
	for k, v := range p {
		keys = append(keys, k)
		size += len(k) + len(v) + 2
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(size + size/16)
	if header != "" {
		b.WriteString("# ")
		b.WriteString(header)
		b.WriteByte('\n')
	}
	for _, k := range keys {
		escapeProperty(&b, k, true)
		b.WriteByte('=')
		escapeProperty(&b, p[k], false)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// escapeProperty escapes s as Properties.store does: backslashes, the separators = and :, the
// comment starters # and !, line breaks and other control characters; spaces everywhere in a key
// and at the start of a value. Other characters, non-ASCII included, are written as UTF-8, which
// is how Spark reads the file.
func escapeProperty(b *strings.Builder, s string, key bool) {
	// Every character that needs escaping is ASCII, so the string is scanned byte by byte and
	// the runs in between are copied whole; multi-byte UTF-8 sequences pass through untouched.
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch {
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c == '\f':
			esc = `\f`
		case c == '=' || c == ':' || c == '#' || c == '!':
			esc = "\\" + string(c)
		case c == ' ' && (key || i == 0):
			esc = `\ `
		case c < 0x20 || c == 0x7f:
			esc = `\u00` + hexDigits[c>>4:c>>4+1] + hexDigits[c&0xf:c&0xf+1]
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(esc)
		start = i + 1
	}
	b.WriteString(s[start:])
}

const hexDigits = "0123456789abcdef"
