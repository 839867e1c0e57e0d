package mutate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// patchOp is one RFC 6902 operation. Values are encoded when the operation is recorded, because the
// typed pod keeps changing afterwards and must not leak later edits into earlier operations.
type patchOp struct {
	Op    string
	Path  string
	Value json.RawMessage // nil for "remove"
}

// patch collects operations and the mutation kinds they belong to.
type patch struct {
	ops   []patchOp
	kinds []string
	err   error
	// discard drops every operation: the caller only wants the edited pod.
	discard bool
}

// add records an "add" operation. On an existing object member "add" replaces the value, so the
// same operation serves for setting a field whether or not the pod has it.
func (p *patch) add(kind, path string, value any) {
	if p.discard {
		return
	}
	raw, err := json.Marshal(value)
	if err != nil {
		if p.err == nil {
			p.err = fmt.Errorf("encode patch value for %s: %w", path, err)
		}
		return
	}
	p.ops = append(p.ops, patchOp{Op: "add", Path: path, Value: raw})
	p.noteKind(kind)
}

func (p *patch) remove(kind, path string) {
	if p.discard {
		return
	}
	p.ops = append(p.ops, patchOp{Op: "remove", Path: path})
	p.noteKind(kind)
}

func (p *patch) noteKind(kind string) {
	for _, k := range p.kinds {
		if k == kind {
			return
		}
	}
	p.kinds = append(p.kinds, kind)
}

// encode writes the operations as a JSON array. The values are already encoded, so they are
// copied rather than passed through json.Marshal again, which would re-validate every one.
func (p *patch) encode() ([]byte, error) {
	if p.err != nil {
		return nil, p.err
	}
	if len(p.ops) == 0 {
		return nil, nil
	}
	size := 2
	for _, op := range p.ops {
		size += len(op.Path) + len(op.Value) + 40
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '[')
	for i, op := range p.ops {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"op":"`...)
		buf = append(buf, op.Op...)
		buf = append(buf, `","path":`...)
		var err error
		if buf, err = appendJSONString(buf, op.Path); err != nil {
			return nil, fmt.Errorf("encode patch path: %w", err)
		}
		if op.Value != nil {
			buf = append(buf, `,"value":`...)
			buf = append(buf, op.Value...)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']'), nil
}

// appendJSONString appends s as a JSON string. Paths are almost always plain ASCII and are copied
// as they are; anything else goes through encoding/json.
func appendJSONString(buf []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, err := json.Marshal(s)
			return append(buf, quoted...), err
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), nil
}

// pointerEscaper escapes a map key for use as one JSON-pointer token (RFC 6901): label and
// annotation keys routinely contain "/".
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func pointerToken(key string) string {
	return pointerEscaper.Replace(key)
}

// appendItem appends item to the list at path. An empty list is written whole, because the pod
// JSON the API server patches omits empty lists and "/-" needs an existing array.
func appendItem[T any](p *patch, kind string, list *[]T, path string, item T) {
	if len(*list) == 0 {
		p.add(kind, path, []T{item})
	} else {
		p.add(kind, path+"/-", item)
	}
	*list = append(*list, item)
}

// setKey sets key in the string map at path. An empty map is written whole for the same reason as
// in appendItem.
func setKey(p *patch, kind string, m *map[string]string, path, key, value string) {
	if len(*m) == 0 {
		p.add(kind, path, map[string]string{key: value})
		*m = map[string]string{key: value}
		return
	}
	if cur, ok := (*m)[key]; ok && cur == value {
		return
	}
	p.add(kind, path+"/"+pointerToken(key), value)
	(*m)[key] = value
}
