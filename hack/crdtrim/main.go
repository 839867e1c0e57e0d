// Command crdtrim removes, from CRDs written by controller-gen, the descriptions inside fields
// whose types come from other packages than the API's own (core/v1 Volume, Container, Affinity,
// networking/v1 IngressTLS, ...), keeping the description of the field itself.
//
// Those descriptions are most of each CRD (about 450 KB of JSON before, 120 KB after) and repeat
// `kubectl explain pod.spec`. Above 256 KB, a client-side `kubectl apply -f crds/` fails,
// because kubectl copies the whole object into the kubectl.kubernetes.io/last-applied-configuration
// annotation, and annotations are capped at 256 KB.
//
// Usage: crdtrim DIR... rewrites every *.yaml file in each DIR in place. The output keeps
// controller-gen's format, so running crdtrim twice changes nothing.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "crdtrim:", err)
		os.Exit(1)
	}
}

func run(dirs []string) error {
	if len(dirs) == 0 {
		return errors.New("usage: crdtrim DIR...")
	}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		for _, file := range files {
			if err := trimFile(file); err != nil {
				return err
			}
		}
	}
	return nil
}

func trimFile(file string) error {
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := trimCRD(in, apiType)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out, 0o644)
}

// apiType is the Go type a CRD of this API was generated from.
func apiType(kind string) (reflect.Type, bool) {
	switch kind {
	case v1beta2.KindSparkApplication:
		return reflect.TypeFor[v1beta2.SparkApplication](), true
	case v1beta2.KindScheduledSparkApplication:
		return reflect.TypeFor[v1beta2.ScheduledSparkApplication](), true
	}
	return nil, false
}

// trimCRD trims one CRD document. typeOf maps the CRD's kind to its Go type; the package of
// that type is "ours", every other package is foreign.
func trimCRD(data []byte, typeOf func(kind string) (reflect.Type, bool)) ([]byte, error) {
	crd, err := decode(data)
	if err != nil {
		return nil, err
	}
	spec, _ := crd["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	kind, _ := names["kind"].(string)
	root, ok := typeOf(kind)
	if !ok {
		return nil, fmt.Errorf("no Go type known for kind %q; add it to apiType", kind)
	}
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		version, _ := v.(map[string]any)
		schema, _ := version["schema"].(map[string]any)
		if props, ok := schema["openAPIV3Schema"].(map[string]any); ok {
			walkType(props, root, root.PkgPath())
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	return append([]byte("---\n"), out...), nil
}

// decode reads YAML the way controller-gen's writer does, keeping integers exact, so that
// marshalling it again reproduces controller-gen's output.
func decode(data []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(bytes.TrimPrefix(data, []byte("---\n")))
	if err != nil {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	return obj, nil
}

// walkType follows the schema node of a value of type t and trims the foreign fields below it.
func walkType(node map[string]any, t reflect.Type, ours string) {
	t = deref(t)
	switch t.Kind() {
	case reflect.Struct:
		walkFields(node, t, ours)
	case reflect.Slice, reflect.Array:
		if items, ok := node["items"].(map[string]any); ok {
			walkType(items, t.Elem(), ours)
		}
	case reflect.Map:
		if values, ok := node["additionalProperties"].(map[string]any); ok {
			walkType(values, t.Elem(), ours)
		}
	}
}

func walkFields(node map[string]any, t reflect.Type, ours string) {
	props, _ := node["properties"].(map[string]any)
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, inline := jsonName(f)
		if name == "-" {
			continue
		}
		if inline {
			// Embedded fields, foreign ones such as TypeMeta included, add their fields to
			// this node; only the fields themselves decide.
			walkFields(node, deref(f.Type), ours)
			continue
		}
		child, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		if isForeign(f.Type, ours) {
			stripBelow(child)
		} else {
			walkType(child, f.Type, ours)
		}
	}
}

func jsonName(f reflect.StructField) (name string, inline bool) {
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		return f.Name, f.Anonymous
	}
	name, opts, _ := strings.Cut(tag, ",")
	inline = slices.Contains(strings.Split(opts, ","), "inline") || (name == "" && f.Anonymous)
	if name == "" {
		name = f.Name
	}
	return name, inline
}

// isForeign reports whether the struct a field holds (through pointers, slices and maps) is
// declared outside our package.
func isForeign(t reflect.Type, ours string) bool {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
			continue
		case reflect.Struct:
			return t.PkgPath() != ours
		}
		return false
	}
}

// stripBelow removes the descriptions of every schema under node, but not node's own.
func stripBelow(node map[string]any) {
	if props, ok := node["properties"].(map[string]any); ok {
		for _, p := range props {
			stripAll(p)
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		stripAll(node[key])
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := node[key].([]any); ok {
			for _, s := range list {
				stripAll(s)
			}
		}
	}
}

func stripAll(v any) {
	node, ok := v.(map[string]any)
	if !ok {
		return
	}
	delete(node, "description")
	stripBelow(node)
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
