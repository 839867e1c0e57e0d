package metacontroller

// validValue returns the index just after the JSON value at data[i] (white space before it
// skipped), or -1 where the bytes are not JSON as json.Valid reads it. It is stricter than it
// needs to be, never laxer: a body it refuses goes to json.Unmarshal, which decides. It runs
// once over a request in place of json.Valid, whose scanner calls a function for every byte.
func validValue(data []byte, i, depth int) int {
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		return validString(data, i)
	case c == '{':
		if depth >= maxDepth {
			return -1
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return -1
			}
			if i = validString(data, i); i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i >= len(data) || data[i] != ':' {
				return -1
			}
			if i = validValue(data, i+1, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case '}':
				return i + 1
			case ',':
				i = skipSpace(data, i+1)
			default:
				return -1
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return -1
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1
		}
		for {
			if i = validValue(data, i, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case ']':
				return i + 1
			case ',':
				i++
			default:
				return -1
			}
		}
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	case c == '-' || ('0' <= c && c <= '9'):
		return validNumber(data, i)
	}
	return -1
}

// maxDepth is well below encoding/json's limit of nesting (10000): deeper bodies are left to it.
const maxDepth = 1000

func literal(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// validString checks the string at data[i] (a quote): no control characters, escapes JSON
// knows. Other bytes are taken as they come, as json.Valid takes them.
func validString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		c := data[i]
		if plainInString[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-i <= 4 {
					return -1
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// plainInString marks the bytes a JSON string holds as they are: all but the quote, the
// backslash and control characters. One lookup per byte of the strings, most of a request.
var plainInString = func() (plain [256]bool) {
	for c := 0x20; c < len(plain); c++ {
		plain[c] = c != '"' && c != '\\'
	}
	return plain
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at data[i].
func validNumber(data []byte, i int) int {
	digits := func(i int) (int, bool) {
		start := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return -1
	}
	if data[i] == '0' {
		i++
	} else if end, ok := digits(i); ok {
		i = end
	} else {
		return -1
	}
	if i < len(data) && data[i] == '.' {
		end, ok := digits(i + 1)
		if !ok {
			return -1
		}
		i = end
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		end, ok := digits(i)
		if !ok {
			return -1
		}
		i = end
	}
	return i
}
