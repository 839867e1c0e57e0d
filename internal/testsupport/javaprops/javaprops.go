// Package javaprops reads Java properties files by the rules of java.util.Properties.load, the
// way a Spark driver reads spark.properties. The driver builder writes that file; tests read it
// back with this independent reader to check that Spark sees what was meant.
package javaprops

import (
	"fmt"
	"unicode/utf16"
)

// Parse reads a properties file following the rules java.util.Properties.load documents:
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
func Parse(text string) (map[string]string, error) {
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
