package metacontroller

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The request's objects are read by walking their bytes rather than by encoding/json, which
// validates and copies what it is given each time: a thousand executor Pods would be scanned
// five times and copied twice per sync. The walk trusts that its input is valid JSON, which
// the request's decoding has checked once (json.Unmarshal validates the whole body before any
// UnmarshalJSON runs); it still fails, rather than misreads, where the structure is not what
// it expects.

var errNotJSON = errors.New("not a JSON value")

// skipSpace returns the index of the first byte at or after i that is not white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just after the string that starts at data[i] (a quote).
func skipString(data []byte, i int) (int, error) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errNotJSON
}

// skipValue returns the index just after the value that starts at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errNotJSON
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, err := skipString(data, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errNotJSON
	}
	// A number, true, false or null: up to the next delimiter.
	start := i
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if i == start {
				return 0, errNotJSON
			}
			return i, nil
		}
		i++
	}
	return i, nil
}

// EachField calls f with the key (still quoted) and the raw value of every member of the JSON
// object obj, in order. A null obj has no members; any other value than an object is an error.
func EachField(obj []byte, f func(key, value []byte) error) error {
	i := skipSpace(obj, 0)
	if IsNull(obj) {
		return nil
	}
	if i >= len(obj) || obj[i] != '{' {
		return fmt.Errorf("%w: want an object", errNotJSON)
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return errNotJSON
		}
		keyEnd, err := skipString(obj, i)
		if err != nil {
			return err
		}
		key := obj[i:keyEnd]
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return errNotJSON
		}
		i = skipSpace(obj, i+1)
		end, err := skipValue(obj, i)
		if err != nil {
			return err
		}
		if err := f(key, obj[i:end]); err != nil {
			return err
		}
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == '}' {
			return nil
		}
		if i >= len(obj) || obj[i] != ',' {
			return errNotJSON
		}
		i = skipSpace(obj, i+1)
	}
	return errNotJSON
}

// EachElement calls f with every element of the JSON array arr. A null arr has none.
func EachElement(arr []byte, f func(value []byte) error) error {
	i := skipSpace(arr, 0)
	if IsNull(arr) {
		return nil
	}
	if i >= len(arr) || arr[i] != '[' {
		return fmt.Errorf("%w: want an array", errNotJSON)
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for i < len(arr) {
		end, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if err := f(arr[i:end]); err != nil {
			return err
		}
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ']' {
			return nil
		}
		if i >= len(arr) || arr[i] != ',' {
			return errNotJSON
		}
		i = skipSpace(arr, i+1)
	}
	return errNotJSON
}

// IsNull tells whether raw is the JSON null.
func IsNull(raw []byte) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// String is the Go string of the JSON string raw, "" for null.
func String(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	if IsNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// Is tells whether the JSON string raw is s, without allocating for an unescaped one.
func Is(raw []byte, s string) bool {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == s
	}
	got, err := String(raw)
	return err == nil && got == s
}

// UnmarshalJSON reads the groups of observed objects. Each object's bytes are those of data, not
// a copy: the request's body backs the objects for as long as they are used, and must not
// change meanwhile (the hooks read a body into a buffer of its own and never write it).
func (m *ChildMap) UnmarshalJSON(data []byte) error {
	if IsNull(data) {
		return nil
	}
	groups := ChildMap{}
	err := EachField(data, func(key, value []byte) error {
		k, err := String(key)
		if err != nil {
			return err
		}
		if IsNull(value) {
			groups[k] = nil
			return nil
		}
		group := map[string]json.RawMessage{}
		groups[k] = group
		return EachField(value, func(name, obj []byte) error {
			n, err := String(name)
			if err != nil {
				return err
			}
			group[n] = obj
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("decode observed objects: %w", err)
	}
	*m = groups
	return nil
}

// syncRequestFields are the members of a sync request, as its JSON tags name them.
var syncRequestFields = []string{"controller", "parent", "children", "related", "finalizing"}

// DecodeSyncRequest reads a sync or finalize request body into req as json.Unmarshal would,
// checking the JSON once and walking it once: the parent and the observed objects are slices of
// data, which must not change while req is used. A body the walk does not expect (not JSON, a
// member of another type, a name that matches a field only ignoring case) is left to
// json.Unmarshal, whose answer, and error, it then is.
func DecodeSyncRequest(data []byte, req *SyncRequest) error {
	if !json.Valid(data) || walkSyncRequest(data, req) != nil {
		*req = SyncRequest{}
		return json.Unmarshal(data, req)
	}
	return nil
}

func walkSyncRequest(data []byte, req *SyncRequest) error {
	return EachField(data, func(key, value []byte) error {
		switch {
		case Is(key, "controller"):
			req.Controller = json.RawMessage(value)
		case Is(key, "parent"):
			req.Parent = json.RawMessage(value)
		case Is(key, "children"):
			req.Children = nil
			return req.Children.UnmarshalJSON(value)
		case Is(key, "related"):
			req.Related = nil
			return req.Related.UnmarshalJSON(value)
		case Is(key, "finalizing"):
			switch string(value) {
			case "true":
				req.Finalizing = true
			case "false":
				req.Finalizing = false
			case "null":
			default:
				return errNotJSON
			}
		default:
			k, err := String(key)
			if err != nil {
				return err
			}
			for _, f := range syncRequestFields {
				if strings.EqualFold(k, f) {
					return errNotJSON
				}
			}
		}
		return nil
	})
}

// metadataName is the raw metadata.name of an object, found by walking it; ok is false where the
// walk cannot tell as encoding/json would (no such member, a key that matches only ignoring case,
// a structure it does not expect), for the caller to decode the object instead.
func metadataName(raw []byte) (name []byte, ok bool) {
	ok = true
	member := func(obj []byte, want string, found func(value []byte) error) error {
		return EachField(obj, func(key, value []byte) error {
			if Is(key, want) {
				return found(value)
			}
			if k, err := String(key); err != nil || strings.EqualFold(k, want) {
				ok = false
			}
			return nil
		})
	}
	err := member(raw, "metadata", func(md []byte) error {
		return member(md, "name", func(value []byte) error {
			name = value
			return nil
		})
	})
	return name, ok && err == nil && name != nil
}
