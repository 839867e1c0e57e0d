package mcstandin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/retry"
)

// updateStatus replaces .status with the hook's status plus observedGeneration, unless that is
// what is already there. Strict field validation makes a field the CRD does not declare an error.
//
// Like Metacontroller's AtomicStatusUpdate (pkg/dynamic/clientset), the status is compared with
// and written over a fresh read of the same object (same UID), not the cached parent the hook
// was given, and conflicts are retried; the status is the one the hook answered, with the
// generation the sync saw. So, as with Metacontroller, a sync that started from a stale cached
// parent writes its answer over a newer status, and a status write is never lost to a
// concurrent change of the parent (a label, a spec edit, the finalizer).
func (c *Controller) updateStatus(ctx context.Context, parent *unstructured.Unstructured, status map[string]any) error {
	if status == nil {
		status = map[string]any{}
	}
	status["observedGeneration"] = parent.GetGeneration()
	normalized, err := normalizeJSON(status)
	if err != nil {
		return fmt.Errorf("status is not JSON: %w", err)
	}
	client := c.parentClient(parent.GetNamespace())
	var stale *StaleWrite
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		current, err := client.Get(ctx, parent.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if current.GetUID() != parent.GetUID() {
			return apierrors.NewNotFound(c.parent.gvr.GroupResource(), parent.GetName())
		}
		if equality.Semantic.DeepEqual(current.Object["status"], normalized) {
			return errStatusUnchanged
		}
		stale = nil
		if current.GetResourceVersion() != parent.GetResourceVersion() && !equality.Semantic.DeepEqual(current.Object["status"], parent.Object["status"]) {
			stale = staleWrite(parent, current, normalized)
		}
		current.Object["status"] = normalized
		_, err = client.UpdateStatus(ctx, current, metav1.UpdateOptions{FieldValidation: "Strict"})
		return err
	})
	if errors.Is(err, errStatusUnchanged) {
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	key := parent.GetNamespace() + "/" + parent.GetName()
	if c.stats[key] == nil {
		c.stats[key] = &ParentStats{}
	}
	c.stats[key].StatusWrites++
	if stale != nil {
		c.stats[key].StaleWrites = append(c.stats[key].StaleWrites, *stale)
	}
	c.mu.Unlock()
	return nil
}

// staleWrite describes writing status over current when the sync read parent.
func staleWrite(parent, current *unstructured.Unstructured, status map[string]any) *StaleWrite {
	over, _ := current.Object["status"].(map[string]any)
	w := &StaleWrite{ReadVersion: parent.GetResourceVersion(), OverVersion: current.GetResourceVersion(), Over: over, Written: status}
	keys := map[string]bool{}
	for k := range over {
		keys[k] = true
	}
	for k := range status {
		keys[k] = true
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !equality.Semantic.DeepEqual(over[k], status[k]) {
			w.Fields = append(w.Fields, k)
			if diff, ok := conditionsDiff(over[k], status[k]); ok {
				parts = append(parts, k+" "+diff)
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s -> %s", k, truncate(CompactJSON(over[k]), 300), truncate(CompactJSON(status[k]), 300)))
		}
	}
	w.Description = fmt.Sprintf("status computed from resourceVersion %s written over resourceVersion %s: %s",
		w.ReadVersion, w.OverVersion, strings.Join(parts, "; "))
	return w
}

// conditionsDiff describes the change of a list of conditions (objects with a type) by type:
// added, removed, or changed status, reason or lastTransitionTime. ok is false for other values.
func conditionsDiff(before, after any) (diff string, ok bool) {
	byType := func(v any) (map[string]map[string]any, []string, bool) {
		list, isList := v.([]any)
		if v != nil && !isList {
			return nil, nil, false
		}
		out := map[string]map[string]any{}
		var order []string
		for _, item := range list {
			m, isMap := item.(map[string]any)
			typ, hasType := m["type"].(string)
			if !isMap || !hasType {
				return nil, nil, false
			}
			out[typ] = m
			order = append(order, typ)
		}
		return out, order, true
	}
	b, bOrder, okB := byType(before)
	a, aOrder, okA := byType(after)
	if !okB || !okA {
		return "", false
	}
	brief := func(m map[string]any) string {
		return fmt.Sprintf("%v/%v at %v", m["status"], m["reason"], m["lastTransitionTime"])
	}
	var parts []string
	for _, typ := range bOrder {
		if _, kept := a[typ]; !kept {
			parts = append(parts, fmt.Sprintf("-%s (%s)", typ, brief(b[typ])))
		}
	}
	for _, typ := range aOrder {
		old, existed := b[typ]
		switch {
		case !existed:
			parts = append(parts, fmt.Sprintf("+%s (%s)", typ, brief(a[typ])))
		case !equality.Semantic.DeepEqual(old, a[typ]):
			parts = append(parts, fmt.Sprintf("%s %s -> %s", typ, brief(old), brief(a[typ])))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]", true
}

// CompactJSON renders v for a failure message: one line of JSON, "<none>" for nil.
func CompactJSON(v any) string {
	if v == nil {
		return "<none>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// normalizeJSON round-trips v through JSON so it compares like an object read from the API
// (int64 and float64 numbers, no typed values).
func normalizeJSON(v map[string]any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := utiljson.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

var errStatusUnchanged = errors.New("status unchanged")
