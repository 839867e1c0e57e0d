// Package compat compares what two operators made of the same SparkApplication on the same
// cluster: the driver and executor Pods, the Spark properties the driver ran with, the Services
// and ConfigMaps, the states the application went through and its final status. Each is
// normalised (names, uids, ids, addresses and times that differ from run to run become
// placeholders) and flattened into field paths, and the differences are checked against the
// table of docs/kubeflow-compat.md (table.go). The differential suite (sandbox/e2e/kubeflow)
// captures; this package only compares, so that it is tested without a cluster.
package compat

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Capture is what one operator made of one application.
type Capture struct {
	// States are the application's status.applicationState.state values in the order they
	// were seen, a repeat of the last one left out.
	States []string
	// Status is the final status.
	Status map[string]any
	// Driver and Executor are the driver Pod and the first executor Pod, as the API server
	// returned them; Executor is nil when none was seen.
	Driver, Executor map[string]any
	// Properties are the driver's spark.properties.
	Properties map[string]string
	// Services and ConfigMaps are those the application's run created.
	Services, ConfigMaps []map[string]any
}

// Difference is one field that differs between the two operators' captures.
type Difference struct {
	// Object is what the field belongs to: "driver pod", "executor pod", "properties",
	// "states", "status", "service <name>" or "configmap <name>" (names normalised).
	Object string
	// Field is the flattened path within it (Flatten).
	Field string
	// Kubeflow and Sparkhooks are the two values, Absent where a side lacks the field.
	Kubeflow, Sparkhooks string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: %s: Kubeflow %s, sparkhooks %s", d.Object, d.Field, d.Kubeflow, d.Sparkhooks)
}

// Absent is the value of a field one side does not have.
const Absent = "(absent)"

// Compare lists the differences between Kubeflow's capture and sparkhooks', sorted. Of the
// status, only the fields Kubeflow fills count: the conditions and other fields sparkhooks adds
// are its extensions. An object only one side made is one difference, its Field empty.
func Compare(kubeflow, sparkhooks Capture) ([]Difference, error) {
	var diffs []Difference
	add := func(object string, k, s map[string]string, kubeflowOnly bool) {
		for _, field := range unionKeys(k, s) {
			kv, kok := k[field]
			sv, sok := s[field]
			if kubeflowOnly && !kok {
				continue
			}
			if !kok {
				kv = Absent
			}
			if !sok {
				sv = Absent
			}
			if kv != sv {
				diffs = append(diffs, Difference{Object: object, Field: field, Kubeflow: kv, Sparkhooks: sv})
			}
		}
	}
	pods := []struct {
		object string
		k, s   map[string]any
	}{{"driver pod", kubeflow.Driver, sparkhooks.Driver}, {"executor pod", kubeflow.Executor, sparkhooks.Executor}}
	for _, p := range pods {
		k, err := flattenObject(p.k, false)
		if err != nil {
			return nil, err
		}
		s, err := flattenObject(p.s, false)
		if err != nil {
			return nil, err
		}
		add(p.object, k, s, false)
	}
	add("properties", normalizeStrings(kubeflow.Properties), normalizeStrings(sparkhooks.Properties), false)
	add("states", map[string]string{"sequence": strings.Join(kubeflow.States, " ")}, map[string]string{"sequence": strings.Join(sparkhooks.States, " ")}, false)
	k, err := flattenStatus(kubeflow.Status)
	if err != nil {
		return nil, err
	}
	s, err := flattenStatus(sparkhooks.Status)
	if err != nil {
		return nil, err
	}
	add("status", k, s, true)
	for _, kind := range []struct {
		object string
		k, s   []map[string]any
		data   bool
		key    func(string) string
	}{{"service", kubeflow.Services, sparkhooks.Services, false, serviceKey}, {"configmap", kubeflow.ConfigMaps, sparkhooks.ConfigMaps, true, nil}} {
		k, err := byName(kind.k, kind.data, kind.key)
		if err != nil {
			return nil, err
		}
		s, err := byName(kind.s, kind.data, kind.key)
		if err != nil {
			return nil, err
		}
		for _, name := range unionKeys(k, s) {
			object := kind.object + " " + name
			switch {
			case k[name] == nil:
				diffs = append(diffs, Difference{Object: object, Kubeflow: Absent, Sparkhooks: "present"})
			case s[name] == nil:
				diffs = append(diffs, Difference{Object: object, Kubeflow: "present", Sparkhooks: Absent})
			default:
				add(object, k[name], s[name], false)
			}
		}
	}
	sort.SliceStable(diffs, func(i, j int) bool {
		if diffs[i].Object != diffs[j].Object {
			return diffs[i].Object < diffs[j].Object
		}
		return diffs[i].Field < diffs[j].Field
	})
	return diffs, nil
}

// DriverService is the name under which Compare compares the two operators' headless driver
// Services, named <random prefix>-driver-svc by Spark and <app>-<attempt id>-driver-svc by sparkhooks: their
// names then differ in metadata.name only.
const DriverService = "<driver-svc>"

func serviceKey(name string) string {
	if strings.HasSuffix(name, "-driver-svc") {
		return DriverService
	}
	return name
}

// byName flattens objects by their normalised names, or the key key gives a name.
func byName(objects []map[string]any, data bool, key func(string) string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, o := range objects {
		normal, err := Normalize(o)
		if err != nil {
			return nil, err
		}
		name, _ := nested(normal, "metadata", "name").(string)
		if key != nil {
			name = key(name)
		}
		flat, err := flattenObject(o, data)
		if err != nil {
			return nil, err
		}
		out[name] = flat
	}
	return out, nil
}

// flattenObject flattens an object's metadata (name, labels, annotations, owners) and spec;
// withData: its data too, but for spark.properties, which Compare reads as properties.
func flattenObject(obj map[string]any, withData bool) (map[string]string, error) {
	if obj == nil {
		return map[string]string{}, nil
	}
	normal, err := Normalize(obj)
	if err != nil {
		return nil, err
	}
	kept := map[string]any{}
	if meta, ok := normal["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for _, key := range []string{"name", "labels", "annotations", "ownerReferences"} {
			if v, ok := meta[key]; ok {
				m[key] = v
			}
		}
		for _, owner := range asSlice(m["ownerReferences"]) {
			if o, ok := owner.(map[string]any); ok {
				delete(o, "uid")
			}
		}
		kept["metadata"] = m
	}
	if spec, ok := normal["spec"]; ok {
		kept["spec"] = spec
	}
	if data, ok := normal["data"].(map[string]any); ok && withData {
		d := map[string]any{}
		for key, v := range data {
			if key != "spark.properties" {
				d[key] = v
			} else {
				d[key] = "(compared as properties)"
			}
		}
		kept["data"] = d
	}
	return Flatten(kept), nil
}

// flattenStatus flattens a status, normalised.
func flattenStatus(status map[string]any) (map[string]string, error) {
	if status == nil {
		return map[string]string{}, nil
	}
	normal, err := Normalize(status)
	if err != nil {
		return nil, err
	}
	return Flatten(normal), nil
}

func normalizeStrings(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[normalizeText(k)] = normalizeText(v)
	}
	return out
}

// placeholders replace what differs from one run of the same application to the next, in this
// order: times, Spark application ids, uuids (submission ids), the hex part of the names Spark
// (16 digits, random) and sparkhooks (8 to 10, from the attempt or the content) give
// resources, the suffix of the service-account token volume, addresses, epoch milliseconds.
var placeholders = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`), "<time>"},
	{regexp.MustCompile(`spark-[0-9a-f]{32}`), "spark-<app-id>"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uuid>"},
	{regexp.MustCompile(`-[0-9a-f]{8,16}(-|$|")`), "-<hash>$1"},
	{regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`), "kube-api-access-<random>"},
	{regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`), "<ip>"},
	{regexp.MustCompile(`\b1\d{12}\b`), "<epoch-ms>"},
}

func normalizeText(s string) string {
	for _, p := range placeholders {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}

// Normalize returns obj with the placeholders in every key and value and without the fields
// the API server sets on every object (uid, resourceVersion, creationTimestamp, managedFields,
// generation).
func Normalize(obj map[string]any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(normalizeText(string(data))), &out); err != nil {
		return nil, fmt.Errorf("normalising: %w", err)
	}
	if meta, ok := out["metadata"].(map[string]any); ok {
		for _, key := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"} {
			delete(meta, key)
		}
	}
	return out, nil
}

// Flatten turns a JSON value into field paths and their values: maps by key (`.key`, or
// `[key]` when the key has a dot or a slash, as labels do), lists whose items all have a name
// by name (`containers[spark-kubernetes-driver]`), other lists of objects by index, lists of
// scalars as one JSON value. Empty maps and lists are left out, as absent.
func Flatten(v any) map[string]string {
	out := map[string]string{}
	flatten(out, "", v)
	return out
}

func flatten(out map[string]string, path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for key, item := range v {
			flatten(out, joinKey(path, key), item)
		}
	case []any:
		if len(v) == 0 {
			return
		}
		if names, ok := itemNames(v); ok {
			for i, item := range v {
				flatten(out, path+"["+names[i]+"]", item)
			}
			return
		}
		if scalars(v) {
			data, _ := json.Marshal(v)
			out[path] = string(data)
			return
		}
		for i, item := range v {
			flatten(out, fmt.Sprintf("%s[%d]", path, i), item)
		}
	case string:
		out[path] = v
	case nil:
		out[path] = "null"
	default:
		data, _ := json.Marshal(v)
		out[path] = string(data)
	}
}

func joinKey(path, key string) string {
	if strings.ContainsAny(key, "./") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// itemNames are the names of a list's items when every item is an object with a distinct name.
func itemNames(items []any) ([]string, bool) {
	var names []string
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		name, ok := m["name"].(string)
		if !ok || slices.Contains(names, name) {
			return nil, false
		}
		names = append(names, name)
	}
	return names, true
}

func scalars(items []any) bool {
	for _, item := range items {
		switch item.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

func unionKeys[V any](a, b map[string]V) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func nested(obj map[string]any, fields ...string) any {
	var v any = obj
	for _, f := range fields {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[f]
	}
	return v
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
