// Package javaprops reads Java properties files by the rules of java.util.Properties.load, the
// way a Spark driver reads spark.properties. The builder writes that file; tests read it back
// with this independent reader to check that Spark sees what was meant.
package javaprops

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse returns the key-value pairs of a properties file. A repeated key keeps its last value,
// as in Java.
func Parse(data string) (map[string]string, error) {
	out := map[string]string{}
	for _, line := range logicalLines(data) {
		key, value, err := splitEntry(line)
		if err != nil {
			return nil, err
		}
		out[key] = value
	}
	return out, nil
}

// logicalLines joins continuation lines (an odd number of trailing backslashes) and drops blank
// and comment lines. Leading whitespace of every natural line is skipped.
func logicalLines(data string) []string {
	var out []string
	var cur strings.Builder
	continuing := false
	for _, natural := range strings.FieldsFunc(data, func(r rune) bool { return r == '\n' || r == '\r' }) {
		line := strings.TrimLeft(natural, " \t\f")
		if !continuing && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		trailing := len(line) - len(strings.TrimRight(line, `\`))
		if trailing%2 == 1 {
			cur.WriteString(line[:len(line)-1])
			continuing = true
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
		continuing = false
	}
	if continuing {
		out = append(out, cur.String())
	}
	return out
}

// splitEntry cuts a logical line at the first unescaped '=', ':' or whitespace, skipping
// whitespace and one separator after the key, and unescapes both parts.
func splitEntry(line string) (string, string, error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	rest := line[end:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	key, err := unescape(line[:end])
	if err != nil {
		return "", "", fmt.Errorf("key %q: %w", line[:end], err)
	}
	value, err := unescape(rest)
	if err != nil {
		return "", "", fmt.Errorf("value of %q: %w", key, err)
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("truncated \\u escape")
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape %q", s[i+1:i+5])
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
