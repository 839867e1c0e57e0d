package mcstandin

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// lastAppliedAnnotation is where Metacontroller keeps the desired object it last applied, for its
// kubectl-apply-like three-way merge.
const lastAppliedAnnotation = "metacontroller.k8s.io/last-applied-configuration"

// listMapKeys are the field names Metacontroller's apply guesses as merge keys when every item
// of a list is an object carrying one of them, in this order of precedence.
var listMapKeys = []string{"containerPort", "port", "mountPath", "name", "uid", "ip", "path"}

// readOnlyMetadata are the system-populated metadata fields an apply must never appear to change.
var readOnlyMetadata = []string{
	"selfLink", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// applyUpdate computes the object Metacontroller would write when desired is applied over
// observed: fields that were in the last applied configuration and are no longer desired are
// removed, desired fields are set (maps merged, list maps merged by their guessed key, other
// lists replaced), system metadata and status stay as observed, and the annotation records
// desired as the new last applied configuration.
func applyUpdate(observed, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	lastApplied, err := getLastApplied(observed)
	if err != nil {
		return nil, err
	}
	want := desired.DeepCopy()
	// As Metacontroller does (nullifyLastAppliedAnnotation): the annotation is removed only when
	// the desired object carries it, and what remains is kept even when it is an empty map, which
	// then becomes part of the new last applied configuration.
	if annotations := want.GetAnnotations(); annotations != nil {
		if _, ok := annotations[lastAppliedAnnotation]; ok {
			delete(annotations, lastAppliedAnnotation)
			want.SetAnnotations(annotations)
		}
	}

	merged, err := mergeValue("", runtime.DeepCopyJSON(observed.Object), lastApplied, want.Object)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: merged.(map[string]any)}
	for _, name := range readOnlyMetadata {
		if err := revertField(out, observed, "metadata", name); err != nil {
			return nil, err
		}
	}
	if err := revertField(out, observed, "status"); err != nil {
		return nil, err
	}
	if err := setLastApplied(out, want.Object); err != nil {
		return nil, err
	}
	return out, nil
}

func setLastApplied(obj *unstructured.Unstructured, applied map[string]any) error {
	data, err := json.Marshal(applied)
	if err != nil {
		return fmt.Errorf("encoding the last applied configuration: %w", err)
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[lastAppliedAnnotation] = string(data)
	obj.SetAnnotations(annotations)
	return nil
}

func getLastApplied(obj *unstructured.Unstructured) (map[string]any, error) {
	data := obj.GetAnnotations()[lastAppliedAnnotation]
	if data == "" {
		return nil, nil
	}
	var applied map[string]any
	if err := utiljson.Unmarshal([]byte(data), &applied); err != nil {
		return nil, fmt.Errorf("decoding annotation %s of %s: %w", lastAppliedAnnotation, obj.GetName(), err)
	}
	return applied, nil
}

func mergeValue(path string, dst, last, desired any) (any, error) {
	switch d := dst.(type) {
	case map[string]any:
		lastMap, ok := last.(map[string]any)
		if !ok && last != nil {
			return nil, fmt.Errorf("last applied %s: want an object, got %T", path, last)
		}
		desiredMap, ok := desired.(map[string]any)
		if !ok {
			// The type changed: the desired value wins.
			return desired, nil
		}
		return mergeObject(path, d, lastMap, desiredMap)
	case []any:
		lastList, _ := last.([]any)
		desiredList, ok := desired.([]any)
		if !ok {
			return desired, nil
		}
		if key := listMapKey(d, lastList, desiredList); key != "" {
			return mergeListMap(path, key, d, lastList, desiredList)
		}
		return desired, nil
	default:
		return desired, nil
	}
}

func mergeObject(path string, dst, last, desired map[string]any) (map[string]any, error) {
	for key := range last {
		if _, ok := desired[key]; !ok {
			delete(dst, key)
		}
	}
	for key, value := range desired {
		merged, err := mergeValue(path+"."+key, dst[key], last[key], value)
		if err != nil {
			return nil, err
		}
		dst[key] = merged
	}
	return dst, nil
}

func mergeListMap(path, key string, dst, last, desired []any) ([]any, error) {
	dstMap, lastMap, desiredMap := listToMap(key, dst), listToMap(key, last), listToMap(key, desired)
	if _, err := mergeObject(path, dstMap, lastMap, desiredMap); err != nil {
		return nil, err
	}
	// Keep the observed order, then append what is new, in desired order.
	out := make([]any, 0, len(dstMap))
	seen := map[string]bool{}
	for _, list := range [][]any{dst, desired} {
		for _, item := range list {
			k := fmt.Sprint(item.(map[string]any)[key])
			if merged, ok := dstMap[k]; ok && !seen[k] {
				out = append(out, merged)
				seen[k] = true
			}
		}
	}
	return out, nil
}

func listToMap(key string, list []any) map[string]any {
	out := make(map[string]any, len(list))
	for _, item := range list {
		out[fmt.Sprint(item.(map[string]any)[key])] = item
	}
	return out
}

// listMapKey returns the merge key shared by every item of the lists, or "" when the lists are
// not lists of objects with a conventional key in common.
func listMapKey(lists ...[]any) string {
	var common map[string]bool
	for _, list := range lists {
		for _, item := range list {
			obj, ok := item.(map[string]any)
			if !ok {
				return ""
			}
			if common == nil {
				common = map[string]bool{}
				for k := range obj {
					common[k] = true
				}
				continue
			}
			for k := range common {
				if _, ok := obj[k]; !ok {
					delete(common, k)
				}
			}
		}
	}
	for _, key := range listMapKeys {
		if common[key] {
			return key
		}
	}
	return ""
}

func revertField(dst, orig *unstructured.Unstructured, path ...string) error {
	value, found, err := unstructured.NestedFieldCopy(orig.Object, path...)
	if err != nil {
		return fmt.Errorf("reading %v: %w", path, err)
	}
	if !found {
		unstructured.RemoveNestedField(dst.Object, path...)
		return nil
	}
	return unstructured.SetNestedField(dst.Object, value, path...)
}
