package goldentest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder records the failures CheckSettles reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Helper() {}

func TestCheckSettles(t *testing.T) {
	request := []byte(`{"parent":{"metadata":{"name":"a","generation":2},"status":{"state":"A"}},"children":{"Pod.v1":{"a-driver":{}}}}`)
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "a-driver"}}
	// steps answers state A -> B -> C, each from the state it is given.
	steps := func(resync float64, children ...any) SyncFunc {
		return func(b []byte) ([]byte, error) {
			var req struct {
				Parent struct {
					Status struct{ State string } `json:"status"`
				} `json:"parent"`
			}
			if err := json.Unmarshal(b, &req); err != nil {
				return nil, err
			}
			next := map[string]string{"A": "B", "B": "C", "C": "C"}[req.Parent.Status.State]
			return json.Marshal(map[string]any{"status": map[string]any{"state": next}, "children": children, "resyncAfterSeconds": resync})
		}
	}
	for _, tt := range []struct {
		name  string
		sync  SyncFunc
		fails bool
	}{
		{"a step that waits for its own status write", steps(0, pod), true},
		{"the same step asking for a resync", steps(1, pod), false},
		{"the same step creating a child", steps(0, pod, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "a-svc"}}), false},
		{"a step that settles", func([]byte) ([]byte, error) {
			return json.Marshal(map[string]any{"status": map[string]any{"state": "B", "observedGeneration": 2}, "children": []any{pod}})
		}, false},
		{"a refusal", func([]byte) ([]byte, error) { return nil, fmt.Errorf("refused") }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckSettles(r, tt.name, request, tt.sync)
			assert.Equal(t, tt.fails, len(r.errors) > 0, "%v", r.errors)
		})
	}
}

func TestSettlesFailsWhenNothingWasChecked(t *testing.T) {
	request := []byte(`{"parent":{"metadata":{"name":"a"},"status":{"state":"A"}},"children":{}}`)
	unchanged := func([]byte) ([]byte, error) {
		return json.Marshal(map[string]any{"status": map[string]any{"state": "A"}})
	}
	changed := func([]byte) ([]byte, error) {
		return json.Marshal(map[string]any{"status": map[string]any{"state": "B"}})
	}
	for _, tt := range []struct {
		name  string
		syncs []SyncFunc
		fails bool
	}{
		{"no answers", nil, true},
		{"only answers the check does not apply to", []SyncFunc{unchanged, unchanged}, true},
		{"one answer it applies to", []SyncFunc{unchanged, changed}, false},
	} {
		r := &recorder{}
		t.Run(tt.name, func(t *testing.T) {
			r.TB = t
			s := NewSettles(r)
			for _, sync := range tt.syncs {
				s.Check(tt.name, request, sync)
			}
		})
		assert.Equal(t, tt.fails, len(r.errors) > 0, "%s: %v", tt.name, r.errors)
	}
}
