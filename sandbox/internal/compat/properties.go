package compat

import (
	"bufio"
	"strconv"
	"strings"
)

// ParseProperties reads a Java properties file as java.util.Properties writes one (spark-submit's
// and sparkhooks' spark.properties): comments, key=value or key:value lines, backslash escapes
// and \uXXXX. Continuation lines, which neither writes, are not joined.
func ParseProperties(text string) map[string]string {
	props := map[string]string{}
	scanner := bufio.NewScanner(strings.NewReader(text))
	scanner.Buffer(make([]byte, 64*1024), 1<<20)
	for scanner.Scan() {
		line := strings.TrimLeft(scanner.Text(), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		end := len(line)
		for i := 0; i < len(line); i++ {
			if line[i] == '\\' {
				i++
				continue
			}
			if line[i] == '=' || line[i] == ':' {
				end = i
				break
			}
		}
		key := unescape(strings.TrimRight(line[:end], " \t"))
		value := ""
		if end < len(line) {
			value = unescape(strings.TrimLeft(line[end+1:], " \t"))
		}
		props[key] = value
	}
	return props
}

func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
