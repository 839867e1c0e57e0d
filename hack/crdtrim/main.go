// Command crdtrim makes the CRDs written by controller-gen smaller without changing what they
// accept, keep or default:
//
//   - Descriptions stay only where our API declares them: on the fields of our types and on our
//     types themselves. The documentation of Kubernetes types (core/v1 Volume, Container,
//     Affinity, networking/v1 IngressTLS, metav1.TypeMeta's apiVersion and kind, ...) goes; it
//     repeats `kubectl explain pod.spec`.
//   - `x-kubernetes-list-type: atomic` goes: it is what the API server assumes for an array
//     without a list type, so it changes neither validation nor server-side apply.
//   - The schema is written compactly: every schema node with no description below it takes one
//     line, in YAML flow style, so a field of ours reads on one line and the Kubernetes type
//     below it does not cost a line (and its indentation) per property.
//
// The first two shrink what the API server holds and serves in its OpenAPI documents, which
// kubectl reads for every object it validates, but only by a few percent: most of a schema is
// structure that decides what the API server accepts and keeps. The third shrinks only the files,
// by most of their size. sandbox/hack/crdbench measures what the CRDs cost kubectl.
//
// Usage: crdtrim DIR... rewrites every *.yaml file in each DIR in place. Running crdtrim twice
// changes nothing.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	sparkapachev1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
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
		return errors.New("usage: crdtrim DIR [DIR...]")
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

// apiType is the Go type a CRD of this API was generated from. The group tells the two
// SparkApplication kinds apart.
func apiType(group, kind string) (reflect.Type, bool) {
	if group == sparkapachev1.GroupName {
		switch kind {
		case sparkapachev1.KindSparkCluster:
			return reflect.TypeFor[sparkapachev1.SparkCluster](), true
		case sparkapachev1.KindSparkApplication:
			return reflect.TypeFor[sparkapachev1.SparkApplication](), true
		}
		return nil, false
	}
	switch kind {
	case v1beta2.KindSparkApplication:
		return reflect.TypeFor[v1beta2.SparkApplication](), true
	case v1beta2.KindScheduledSparkApplication:
		return reflect.TypeFor[v1beta2.ScheduledSparkApplication](), true
	case v1alpha1.KindSparkConnect:
		return reflect.TypeFor[v1alpha1.SparkConnect](), true
	}
	return nil, false
}

// trimCRD trims one CRD document. typeOf maps the CRD's group and kind to its Go type; the package of
// that type's parent directory (our API packages) is "ours", every other package is foreign.
func trimCRD(data []byte, typeOf func(group, kind string) (reflect.Type, bool)) ([]byte, error) {
	crd, err := decode(data)
	if err != nil {
		return nil, err
	}
	spec, _ := crd["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	kind, _ := names["kind"].(string)
	group, _ := spec["group"].(string)
	root, ok := typeOf(group, kind)
	if !ok {
		return nil, fmt.Errorf("no Go type known for kind %q of group %q; add it to apiType", kind, group)
	}
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		version, _ := v.(map[string]any)
		schema, _ := version["schema"].(map[string]any)
		if props, ok := schema["openAPIV3Schema"].(map[string]any); ok {
			// Every API package beside the kind's is ours: SparkConnect reuses v1beta2 types.
			walkType(props, root, path.Dir(root.PkgPath())+"/")
			dropAtomicListTypes(props)
		}
	}
	return encode(crd)
}

// decode reads YAML keeping numbers as written (json.Number), so that encode writes them back
// unchanged.
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
	declaredByUs := strings.HasPrefix(t.PkgPath(), ours)
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
		switch {
		case !declaredByUs:
			// A field of an embedded foreign type, such as TypeMeta's apiVersion.
			stripAll(child)
		case isForeign(f.Type, ours):
			stripBelow(child)
		default:
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
			return !strings.HasPrefix(t.PkgPath(), ours)
		}
		return false
	}
}

// dropAtomicListTypes removes every `x-kubernetes-list-type: atomic` under node, node's own
// included. The API server treats an array without a list type as atomic, in validation
// (no uniqueness rule), in CEL and in server-side apply alike.
func dropAtomicListTypes(v any) {
	switch v := v.(type) {
	case map[string]any:
		if v["x-kubernetes-list-type"] == "atomic" {
			delete(v, "x-kubernetes-list-type")
		}
		for _, child := range v {
			dropAtomicListTypes(child)
		}
	case []any:
		for _, child := range v {
			dropAtomicListTypes(child)
		}
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

// encode writes a CRD as YAML with sorted keys, in block style except for the schema nodes with
// no description below them, which are written in flow style on one line.
func encode(crd map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yamlv3.NewEncoder(&buf)
	enc.SetIndent(2)
	// "- " counts as indentation, as in controller-gen's output.
	enc.CompactSeqIndent()
	if err := enc.Encode(toNode(crd, false, false)); err != nil {
		return nil, fmt.Errorf("writing YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// toNode converts a decoded value to a YAML node. inSchema is true below openAPIV3Schema,
// where nodes may be written in flow style; flow is true inside a node already in flow style.
func toNode(v any, inSchema, flow bool) *yamlv3.Node {
	switch v := v.(type) {
	case map[string]any:
		node := &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
		flow = flow || (inSchema && !describedBelow(v))
		if flow {
			node.Style = yamlv3.FlowStyle
		}
		for _, key := range slices.Sorted(maps.Keys(v)) {
			node.Content = append(node.Content,
				&yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: key},
				toNode(v[key], inSchema || key == "openAPIV3Schema", flow))
		}
		return node
	case []any:
		node := &yamlv3.Node{Kind: yamlv3.SequenceNode, Tag: "!!seq"}
		flow = flow || (inSchema && !describedBelow(v))
		if flow {
			node.Style = yamlv3.FlowStyle
		}
		for _, item := range v {
			node.Content = append(node.Content, toNode(item, inSchema, flow))
		}
		return node
	case string:
		node := &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: v}
		if !flow && strings.Contains(v, "\n") {
			node.Style = yamlv3.LiteralStyle
		}
		return node
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(v.String(), ".eE") {
			tag = "!!float"
		}
		return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: tag, Value: v.String()}
	case bool:
		return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	case nil:
		return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!null", Value: "null"}
	}
	panic(fmt.Sprintf("crdtrim: unexpected %T in decoded YAML", v))
}

// describedBelow reports whether a schema node below v (not v itself) has a description. A
// property called "description" is a schema, not a description, so only strings count.
func describedBelow(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, child := range v {
			if hasDescription(child) || describedBelow(child) {
				return true
			}
		}
	case []any:
		for _, child := range v {
			if hasDescription(child) || describedBelow(child) {
				return true
			}
		}
	}
	return false
}

func hasDescription(v any) bool {
	node, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = node["description"].(string)
	return ok
}
