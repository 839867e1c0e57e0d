package goldentest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// SyncFunc answers a sync request body with the response body, or an error (a refusal or a
// bad request: nothing is written, so nothing is left pending).
type SyncFunc func(request []byte) ([]byte, error)

// Sync is a core's sync as a SyncFunc: it decodes the body, runs sync and encodes its answer.
func Sync(sync func(*metacontroller.SyncRequest) (*metacontroller.SyncResponse, error)) SyncFunc {
	return func(b []byte) ([]byte, error) {
		var req metacontroller.SyncRequest
		if err := json.Unmarshal(b, &req); err != nil {
			return nil, err
		}
		resp, err := sync(&req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}
}

// CheckSettles checks that an answer which changes the parent's status and leaves the set of
// children alone does not count on its own status write to be called again. With
// ignoreStatusChanges, Metacontroller syncs a parent on a spec, label, annotation or deletion
// change, on a child's change, or when the hook asked with resyncAfterSeconds; the status write
// alone brings nothing. So either the answer asks for a resync, or the same request with the
// new status (as the next sync would see it) answers that very status: nothing is left for a
// sync that will not come. label names the case in messages. It reports whether the answer was
// one the check applies to (a changed status, the same children, no resync asked for).
func CheckSettles(t testing.TB, label string, request []byte, sync SyncFunc) (checked bool) {
	t.Helper()
	first, err := sync(request)
	if err != nil {
		return false
	}
	var req map[string]any
	mustUnmarshal(t, label, request, &req)
	var resp struct {
		Status             map[string]any   `json:"status"`
		Children           []map[string]any `json:"children"`
		ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
	}
	mustUnmarshal(t, label, first, &resp)
	if resp.ResyncAfterSeconds > 0 {
		return false
	}
	parent, _ := req["parent"].(map[string]any)
	if parent == nil {
		return false
	}
	generation := asMap(parent["metadata"])["generation"]
	if sameStatus(asMap(parent["status"]), resp.Status, generation) {
		return false
	}
	if !reflect.DeepEqual(observedNames(req), answeredNames(resp.Children)) {
		return false // children are created or deleted: their events bring the next sync
	}
	parent["status"] = resp.Status
	next, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	second, err := sync(next)
	if err != nil {
		t.Errorf("%s: the answer changes the status and leaves the children alone without resyncAfterSeconds, and the sync that would follow its status write fails: %v", label, err)
		return true
	}
	var again struct {
		Status   map[string]any   `json:"status"`
		Children []map[string]any `json:"children"`
	}
	mustUnmarshal(t, label, second, &again)
	if !sameStatus(resp.Status, again.Status, generation) {
		a, _ := json.Marshal(resp.Status)
		b, _ := json.Marshal(again.Status)
		t.Errorf("%s: the answer changes the status and leaves the children alone, but the next sync would change it again: with ignoreStatusChanges that sync never comes; answer resyncAfterSeconds.\nfirst:  %s\nsecond: %s", label, a, b)
	}
	if first, next := answeredNames(resp.Children), answeredNames(again.Children); !reflect.DeepEqual(first, next) {
		t.Errorf("%s: the answer changes the status and leaves the children alone, but the next sync would change the children (%v, then %v): with ignoreStatusChanges that sync never comes; answer resyncAfterSeconds", label, first, next)
	}
	return true
}

// Settles runs CheckSettles over a test's golden answers and, when the test ends, fails it if
// not one answer was of the kind the check applies to: a run that checked nothing proves nothing.
type Settles struct {
	t       testing.TB
	checked int
}

// NewSettles starts counting for t.
func NewSettles(t testing.TB) *Settles {
	s := &Settles{t: t}
	t.Cleanup(func() {
		if s.checked == 0 {
			t.Errorf("the settle check applied to none of the answers: it checked nothing")
			return
		}
		t.Logf("answers the settle check applied to: %d", s.checked)
	})
	return s
}

// Check is CheckSettles, counted.
func (s *Settles) Check(label string, request []byte, sync SyncFunc) {
	s.t.Helper()
	if CheckSettles(s.t, label, request, sync) {
		s.checked++
	}
}

// sameStatus compares statuses as Metacontroller does before it writes one: with
// observedGeneration set to the parent's generation.
func sameStatus(a, b map[string]any, generation any) bool {
	norm := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		if generation != nil {
			out["observedGeneration"] = generation
		}
		var round map[string]any
		b, _ := json.Marshal(out)
		_ = json.Unmarshal(b, &round)
		return round
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func observedNames(req map[string]any) []string {
	var names []string
	for key, objs := range asMap(req["children"]) {
		for name, obj := range asMap(objs) {
			if obj != nil {
				names = append(names, key+"/"+name)
			}
		}
	}
	sort.Strings(names)
	return names
}

func answeredNames(children []map[string]any) []string {
	var names []string
	for _, c := range children {
		md := asMap(c["metadata"])
		name := fmt.Sprint(md["name"])
		names = append(names, fmt.Sprintf("%s.%s/%s", c["kind"], c["apiVersion"], name))
	}
	sort.Strings(names)
	return names
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func mustUnmarshal(t testing.TB, label string, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
}
