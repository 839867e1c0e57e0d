package metacontroller

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The request's objects are read by walking their bytes rather than by encoding/json, which
// validates and copies what it is given each time: a thousand executor Pods would be scanned
// five times and copied twice per sync. A sync request is checked as JSON by the walk that reads
// it (validValue); the walks of its objects afterwards (EachField, skipValue) trust that check,
// and still fail, rather than misread, where the structure is not what they expect.

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

// skipString returns the index just after the string that starts at data[i] (a quote). It
// jumps from quote to quote (bytes.IndexByte is vectorised: the strings are most of a request's
// bytes); a quote after an odd run of backslashes is escaped and the string goes on.
func skipString(data []byte, i int) (int, error) {
	start := i + 1
	for from := start; ; {
		q := bytes.IndexByte(data[from:], '"')
		if q < 0 {
			return 0, errNotJSON
		}
		q += from
		backslashes := 0
		for b := q - 1; b >= start && data[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1, nil
		}
		from = q + 1
	}
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
	it := newFields(obj)
	for key, value, ok := it.next(); ok; key, value, ok = it.next() {
		if err := f(key, value); err != nil {
			return err
		}
	}
	return it.err
}

// fields steps through the members of a JSON object without a callback, for the walks that
// run once per object: a closure capturing their state would cost an allocation each.
type fields struct {
	obj  []byte
	i    int
	done bool
	err  error
}

func newFields(obj []byte) fields {
	i := skipSpace(obj, 0)
	switch {
	case IsNull(obj):
		return fields{done: true}
	case i >= len(obj) || obj[i] != '{':
		return fields{done: true, err: fmt.Errorf("%w: want an object", errNotJSON)}
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return fields{done: true}
	}
	return fields{obj: obj, i: i}
}

// next returns the next member; ok is false at the end of the object or at an error (err).
func (f *fields) next() (key, value []byte, ok bool) {
	if f.done {
		return nil, nil, false
	}
	fail := func() ([]byte, []byte, bool) {
		f.done, f.err = true, errNotJSON
		return nil, nil, false
	}
	obj, i := f.obj, f.i
	if i >= len(obj) || obj[i] != '"' {
		return fail()
	}
	keyEnd, err := skipString(obj, i)
	if err != nil {
		return fail()
	}
	key = obj[i:keyEnd]
	i = skipSpace(obj, keyEnd)
	if i >= len(obj) || obj[i] != ':' {
		return fail()
	}
	i = skipSpace(obj, i+1)
	end, err := skipValue(obj, i)
	if err != nil {
		return fail()
	}
	value = obj[i:end]
	i = skipSpace(obj, end)
	switch {
	case i < len(obj) && obj[i] == '}':
		f.done = true
	case i < len(obj) && obj[i] == ',':
		f.i = skipSpace(obj, i+1)
		if f.i >= len(obj) {
			return fail()
		}
	default:
		return fail()
	}
	return key, value, true
}

// foldsTo tells whether encoding/json could file the member key under the field name want
// although the key is not want itself: it matches keys ignoring case. It errs on the side of
// yes for keys it cannot compare cheaply (escaped or not ASCII).
func foldsTo(key []byte, want string) bool {
	if len(key) < 2 || bytes.IndexByte(key, '\\') >= 0 {
		return true
	}
	k := key[1 : len(key)-1]
	if len(k) != len(want) {
		for _, c := range k {
			if c >= 0x80 {
				return true
			}
		}
		return false
	}
	for i := range k {
		a, b := k[i], want[i]
		if a >= 0x80 {
			return true
		}
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
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

// UnmarshalJSON reads the groups of observed objects, checking them as JSON as it goes: it is the
// one pass over them. Each object's bytes are those of data, not a copy: the request's body
// backs the objects for as long as they are used, and must not change meanwhile (the hooks read
// a body into a buffer of its own and never write it).
func (m *ChildMap) UnmarshalJSON(data []byte) error {
	if IsNull(data) {
		return nil
	}
	groups, end := readChildMap(data, skipSpace(data, 0))
	if end < 0 || skipSpace(data, end) != len(data) {
		return fmt.Errorf("decode observed objects: %w", errNotJSON)
	}
	*m = groups
	return nil
}

// readChildMap reads the groups of observed objects at data[i], checking them as JSON, and
// returns them with the index just after them, -1 where they are not JSON or not a ChildMap.
func readChildMap(data []byte, i int) (ChildMap, int) {
	groups := ChildMap{}
	end := validObject(data, i, func(key []byte, at int) int {
		k, err := String(key)
		if err != nil {
			return -1
		}
		if literal(data, at, "null") > 0 {
			groups[k] = nil
			return at + len("null")
		}
		group := map[string]json.RawMessage{}
		groups[k] = group
		return validObject(data, at, func(name []byte, at int) int {
			n, err := String(name)
			if err != nil {
				return -1
			}
			end := validValue(data, at, 3)
			if end >= 0 {
				group[n] = data[at:end]
			}
			return end
		})
	})
	return groups, end
}

// validObject walks the object at data[i] (white space before it skipped), checking its keys and
// structure as JSON, and calls member with each key (quoted) and the index of its value;
// member reads the value and returns the index just after it, -1 when it is not valid. It
// returns the index just after the object, -1 where it is not a valid object.
func validObject(data []byte, i int, member func(key []byte, at int) int) int {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '{' {
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
		keyEnd := validString(data, i)
		if keyEnd < 0 {
			return -1
		}
		key := data[i:keyEnd]
		i = skipSpace(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return -1
		}
		if i = member(key, skipSpace(data, i+1)); i < 0 {
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
}

// syncRequestFields are the members of a sync request, as its JSON tags name them.
var syncRequestFields = []string{"controller", "parent", "children", "related", "finalizing"}

// DecodeSyncRequest reads a sync or finalize request body into req as json.Unmarshal would, in
// one pass that checks the JSON as it walks it (validValue; json.Unmarshal would check the body,
// then scan it again to decode it, then copy every object): the parent and the observed objects
// are slices of data, which must not change while req is used. A body the walk does not expect
// (not JSON, a member of another type, a name matching a field only ignoring case) is left to
// json.Unmarshal, whose answer, and error, it then is.
func DecodeSyncRequest(data []byte, req *SyncRequest) error {
	if walkSyncRequest(data, req) != nil {
		*req = SyncRequest{}
		return json.Unmarshal(data, req)
	}
	return nil
}

func walkSyncRequest(data []byte, req *SyncRequest) error {
	end := validObject(data, 0, func(key []byte, at int) int {
		switch {
		case Is(key, "children"), Is(key, "related"):
			if literal(data, at, "null") > 0 {
				return at + len("null") // as ChildMap.UnmarshalJSON: no change
			}
			m, end := readChildMap(data, at)
			if Is(key, "children") {
				req.Children = m
			} else {
				req.Related = m
			}
			return end
		}
		end := validValue(data, at, 1)
		if end < 0 {
			return -1
		}
		value := data[at:end]
		switch {
		case Is(key, "controller"):
			req.Controller = json.RawMessage(value)
		case Is(key, "parent"):
			req.Parent = json.RawMessage(value)
		case Is(key, "finalizing"):
			switch string(value) {
			case "true":
				req.Finalizing = true
			case "false":
				req.Finalizing = false
			case "null":
			default:
				return -1
			}
		default:
			for _, f := range syncRequestFields {
				if foldsTo(key, f) {
					return -1
				}
			}
		}
		return end
	})
	if end < 0 || skipSpace(data, end) != len(data) {
		return errNotJSON
	}
	return nil
}

// metadataName is the raw metadata.name of an object, found by walking it; ok is false where the
// walk cannot tell as encoding/json would (no such member, a key that matches only ignoring case,
// a structure it does not expect), for the caller to decode the object instead.
func metadataName(raw []byte) (name []byte, ok bool) {
	md, ok := member(raw, "metadata")
	if !ok {
		return nil, false
	}
	return member(md, "name")
}

// member is the raw value of the member key of the object obj (the last one, as encoding/json
// keeps); ok is false when there is none or the walk cannot tell.
func member(obj []byte, key string) (value []byte, ok bool) {
	it := newFields(obj)
	for k, v, more := it.next(); more; k, v, more = it.next() {
		switch {
		case Is(k, key):
			value = v
		case foldsTo(k, key):
			return nil, false
		}
	}
	return value, it.err == nil && value != nil
}
