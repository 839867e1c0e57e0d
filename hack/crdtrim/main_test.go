package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The types below stand for an API package: they are "ours", corev1 and metav1 are foreign.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec `json:"spec"`
}

type widgetSpec struct {
	common      `json:",inline"`
	Size        string              `json:"size"`
	Affinity    *corev1.Affinity    `json:"affinity,omitempty"`
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	Parts       []part              `json:"parts,omitempty"`
	Ignored     string              `json:"-"`
}

type common struct {
	Labels map[string]label `json:"labels,omitempty"`
}

type label struct {
	Value string `json:"value"`
}

type part struct {
	Name string `json:"name"`
	// A foreign struct whose schema declares a field called "description".
	Source *corev1.EnvVarSource `json:"source,omitempty"`
}

func widgetType(_, kind string) (reflect.Type, bool) {
	if kind == "Widget" {
		return reflect.TypeFor[widget](), true
	}
	return nil, false
}

// prop is a schema node with a description and optional extra keys.
func prop(desc string, kv ...any) map[string]any {
	m := map[string]any{"description": desc}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func props(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func crdYAML(t *testing.T, schema map[string]any) []byte {
	t.Helper()
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schema},
			}},
		},
	}
	out, err := yaml.Marshal(crd)
	require.NoError(t, err)
	return append([]byte("---\n"), out...)
}

func TestTrimCRD(t *testing.T) {
	// widgetSchema is the schema of widgetType as controller-gen writes it (generated) or as
	// crdtrim should leave it.
	widgetSchema := func(generated bool) map[string]any {
		// foreign is a description or list type only controller-gen's output has.
		foreign := func(key string, value any) []any {
			if generated {
				return []any{key, value}
			}
			return nil
		}
		return prop("Widget is a test kind.", "type", "object", "properties", props(
			"apiVersion", props(append([]any{"type", "string"}, foreign("description", "APIVersion defines the versioned schema.")...)...),
			"kind", props(append([]any{"type", "string"}, foreign("description", "Kind is a string value.")...)...),
			"metadata", props("type", "object"),
			"spec", prop("Spec of the widget.", "type", "object", "properties", props(
				"size", prop("Size of the widget.", "type", "string"),
				"labels", prop("Labels of the widget.", "type", "object", "additionalProperties",
					prop("A label.", "type", "object", "properties", props("value", prop("The value.", "type", "string")))),
				"affinity", prop("Affinity of the widget.", "type", "object", "properties", props(
					"nodeAffinity", props(append([]any{"type", "object", "properties", props(
						"preferred", props(append([]any{"type", "array", "items", props(append([]any{"type", "object", "properties", props(
							"weight", props("type", "integer"))},
							foreign("description", "An empty preferred scheduling term.")...)...)},
							foreign("x-kubernetes-list-type", "atomic")...)...))},
						foreign("description", "Node affinity is a group of node affinity scheduling rules.")...)...))),
				"tolerations", prop("Tolerations of the widget.", append([]any{"type", "array",
					"items", props(append([]any{"type", "object", "properties", props(
						"key", props(append([]any{"type", "string"}, foreign("description", "Key is the taint key.")...)...))},
						foreign("description", "The pod this Toleration is attached to tolerates any taint that matches.")...)...)},
					foreign("x-kubernetes-list-type", "atomic")...)...),
				"parts", prop("Parts of the widget.", "type", "array", "x-kubernetes-list-type", "map", "x-kubernetes-list-map-keys", []any{"name"},
					"items", prop("A part.", "type", "object", "required", []any{"name"}, "properties", props(
						"name", prop("Name of the part.", "type", "string"),
						"source", prop("Source of the part.", "type", "object", "properties", props(
							"description", props(append([]any{"type", "string"}, foreign("description", "A field called description.")...)...),
							"fieldRef", props(append([]any{"type", "object", "properties", props("fieldPath", props("type", "string"))},
								foreign("description", "Selects a field of the pod.")...)...),
						)),
					))),
			)),
		))
	}

	got, err := trimCRD(crdYAML(t, widgetSchema(true)), widgetType)
	require.NoError(t, err)
	gotCRD, err := decode(got)
	require.NoError(t, err)
	wantCRD, err := decode(crdYAML(t, widgetSchema(false)))
	require.NoError(t, err)
	assert.Equal(t, wantCRD, gotCRD, "our descriptions stay, those of foreign types and fields go, "+
		"the field named description stays, atomic list types go, the map list type stays")

	again, err := trimCRD(got, widgetType)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(again), "trimming twice changes nothing")
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name   string
		schema map[string]any
		want   string
	}{
		{
			name:   "a schema with no description below it takes one line",
			schema: props("type", "object", "properties", props("n", props("type", "integer", "format", "int32", "maximum", 1000, "multipleOf", 0.5))),
			want: `      openAPIV3Schema: {properties: {n: {format: int32, maximum: 1000, multipleOf: 0.5, type: integer}}, type: object}
`,
		},
		{
			name: "a node with described fields stays in block style, each field on one line",
			schema: prop("Widget is\na test kind.", "type", "object", "properties", props(
				"on", prop("On says yes.", "type", "boolean", "default", true),
				"mode", prop("Mode: \"a\" or \"b\".", "type", "string", "enum", []any{"a", "true", ""}),
				"description", props("type", "string"),
			)),
			want: `      openAPIV3Schema:
        description: |-
          Widget is
          a test kind.
        properties:
          description: {type: string}
          mode: {description: 'Mode: "a" or "b".', enum: [a, "true", ""], type: string}
          on: {default: true, description: On says yes., type: boolean}
        type: object
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd, err := decode(crdYAML(t, tt.schema))
			require.NoError(t, err)
			got, err := encode(crd)
			require.NoError(t, err)
			const head = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  versions:
  - name: v1
    schema:
`
			const tail = `    served: true
    storage: true
`
			assert.Equal(t, head+tt.want+tail, string(got))
		})
	}
}

func TestTrimCRDUnknownKind(t *testing.T) {
	_, err := trimCRD(crdYAML(t, props("type", "object")), func(string, string) (reflect.Type, bool) { return nil, false })
	assert.ErrorContains(t, err, `no Go type known for kind "Widget"`)
}

func TestRun(t *testing.T) {
	assert.Error(t, run(nil), "no directory")

	dir := t.TempDir()
	file := filepath.Join(dir, "widgets.yaml")
	require.NoError(t, os.WriteFile(file, []byte("---\nkind: [unclosed\n"), 0o644))
	assert.ErrorContains(t, run([]string{dir}), "widgets.yaml")
}

func TestAPITypesKnown(t *testing.T) {
	for _, gk := range []struct{ group, kind, pkg string }{
		{"sparkoperator.k8s.io", "SparkApplication", "v1beta2"},
		{"sparkoperator.k8s.io", "ScheduledSparkApplication", "v1beta2"},
		{"spark.apache.org", "SparkApplication", "sparkapache/v1"},
		{"spark.apache.org", "SparkCluster", "sparkapache/v1"},
	} {
		typ, ok := apiType(gk.group, gk.kind)
		require.True(t, ok, gk.kind)
		assert.Equal(t, gk.kind, typ.Name())
		assert.True(t, strings.HasSuffix(typ.PkgPath(), "/"+gk.pkg), "%s/%s is %s", gk.group, gk.kind, typ.PkgPath())
	}
}
