package main

import (
	"os"
	"path/filepath"
	"reflect"
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

func widgetType(kind string) (reflect.Type, bool) {
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
	affinity := func(withDescriptions bool) map[string]any {
		d := func(s string) string {
			if withDescriptions {
				return s
			}
			return ""
		}
		node := props("type", "object", "properties", props(
			"nodeAffinity", props("type", "object", "properties", props(
				"preferred", props("type", "array", "items", props("type", "object", "properties", props(
					"weight", props("type", "integer"))))))))
		nodeAffinity := node["properties"].(map[string]any)["nodeAffinity"].(map[string]any)
		if withDescriptions {
			nodeAffinity["description"] = d("Node affinity is a group of node affinity scheduling rules.")
			nodeAffinity["properties"].(map[string]any)["preferred"].(map[string]any)["items"].(map[string]any)["description"] = d("An empty preferred scheduling term.")
		}
		return node
	}
	input := func(foreignDocs bool) map[string]any {
		var (
			affinityNode    = affinity(foreignDocs)
			tolerationItems = props("type", "object", "properties", props("key", props("type", "string")))
			sourceNode      = props("type", "object", "properties", props(
				"description", props("type", "string"), // a field named description
				"fieldRef", props("type", "object", "properties", props("fieldPath", props("type", "string")))))
		)
		if foreignDocs {
			tolerationItems["description"] = "The pod this Toleration is attached to tolerates any taint that matches."
			tolerationItems["properties"].(map[string]any)["key"].(map[string]any)["description"] = "Key is the taint key."
			sourceNode["properties"].(map[string]any)["fieldRef"].(map[string]any)["description"] = "Selects a field of the pod."
			sourceNode["properties"].(map[string]any)["description"].(map[string]any)["description"] = "A field called description."
		}
		affinityNode["description"] = "Affinity of the widget."
		sourceNode["description"] = "Source of the part."
		return prop("Widget is a test kind.", "type", "object", "properties", props(
			"apiVersion", prop("APIVersion defines the versioned schema.", "type", "string"),
			"kind", prop("Kind is a string value.", "type", "string"),
			"metadata", props("type", "object"),
			"spec", prop("Spec of the widget.", "type", "object", "properties", props(
				"size", prop("Size of the widget.", "type", "string"),
				"labels", prop("Labels of the widget.", "type", "object", "additionalProperties",
					prop("A label.", "type", "object", "properties", props("value", prop("The value.", "type", "string")))),
				"affinity", affinityNode,
				"tolerations", prop("Tolerations of the widget.", "type", "array", "items", tolerationItems),
				"parts", prop("Parts of the widget.", "type", "array", "items", prop("A part.", "type", "object", "properties", props(
					"name", prop("Name of the part.", "type", "string"),
					"source", sourceNode,
				))),
			)),
		))
	}

	got, err := trimCRD(crdYAML(t, input(true)), widgetType)
	require.NoError(t, err)
	assert.Equal(t, string(crdYAML(t, input(false))), string(got),
		"our descriptions stay, those inside foreign types go, the field named description stays")

	again, err := trimCRD(got, widgetType)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(again), "trimming twice changes nothing")
}

func TestTrimCRDUnknownKind(t *testing.T) {
	_, err := trimCRD(crdYAML(t, props("type", "object")), func(string) (reflect.Type, bool) { return nil, false })
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
	for _, kind := range []string{"SparkApplication", "ScheduledSparkApplication"} {
		typ, ok := apiType(kind)
		require.True(t, ok, kind)
		assert.Equal(t, kind, typ.Name())
	}
}
