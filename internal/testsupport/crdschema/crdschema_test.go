package crdschema

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

func widget(spec string) map[string]any {
	var obj map[string]any
	doc := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n" + spec
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		panic(err)
	}
	return obj
}

func TestValidate(t *testing.T) {
	v, err := Load("testdata/widgets.yaml")
	require.NoError(t, err)

	tests := []struct {
		name string
		obj  map[string]any
		// "<type> <field>", in order. "FieldValueInvalid <nil>" is the API server's note that
		// CEL rules were skipped because of the other errors.
		want []string
	}{
		{
			name: "valid",
			obj:  widget("  size: small\n  replicas: 3\n  port: http\n  ports: [{name: a, number: 1}, {name: b}]\n  extra: {anything: [1, 2]}\n"),
		},
		{
			name: "int-or-string takes an integer",
			obj:  widget("  size: large\n  port: 8080\n"),
		},
		{
			name: "missing required field",
			obj:  widget("  replicas: 3\n"),
			want: []string{"FieldValueInvalid <nil>", "FieldValueRequired spec.size"},
		},
		{
			name: "enum and minimum",
			obj:  widget("  size: medium\n  replicas: 0\n"),
			want: []string{"FieldValueInvalid <nil>", "FieldValueInvalid spec.replicas", "FieldValueNotSupported spec.size"},
		},
		{
			name: "wrong type",
			obj:  widget("  size: small\n  replicas: three\n"),
			want: []string{"FieldValueInvalid <nil>", "FieldValueTypeInvalid spec.replicas"},
		},
		{
			name: "unknown field, also inside a list",
			obj:  widget("  size: small\n  colour: red\n  ports: [{name: a, nmber: 1}]\n"),
			want: []string{"FieldValueForbidden spec.colour", "FieldValueForbidden spec.ports[0].nmber"},
		},
		{
			name: "duplicate list-map key",
			obj:  widget("  size: small\n  ports: [{name: a}, {name: a}]\n"),
			want: []string{"FieldValueDuplicate spec.ports[1]"},
		},
		{
			name: "CEL rule sees the schema default",
			obj:  widget("  size: small\n  replicas: 20\n"),
			want: []string{"FieldValueInvalid spec"},
		},
		{
			name: "CEL rule satisfied with an explicit value",
			obj:  widget("  size: small\n  replicas: 20\n  mode: slow\n"),
		},
		{
			name: "metadata rules",
			obj: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "Not_A_Name", "labels": map[string]any{"a": "b c"}},
				"spec":     map[string]any{"size": "small"},
			},
			want: []string{"FieldValueInvalid metadata.labels", "FieldValueInvalid metadata.name"},
		},
		{
			name: "generateName",
			obj: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"generateName": "w-"},
				"spec":     map[string]any{"size": "small"},
			},
		},
		{
			name: "wrong kind",
			obj:  map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget"},
			want: []string{"FieldValueInvalid kind"},
		},
		{
			name: "wrong group",
			obj:  map[string]any{"apiVersion": "other.com/v1", "kind": "Widget"},
			want: []string{"FieldValueInvalid apiVersion"},
		},
		{
			name: "unserved version",
			obj:  map[string]any{"apiVersion": "example.com/v2", "kind": "Widget"},
			want: []string{"FieldValueNotSupported apiVersion"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := yaml.Marshal(tt.obj)
			require.NoError(t, err)
			errs := v.Validate(tt.obj)
			assert.Equal(t, tt.want, describe(errs), "errors: %v", errs)
			after, err := yaml.Marshal(tt.obj)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "the object is not modified")
		})
	}
}

func TestWithoutCELSkipped(t *testing.T) {
	v, err := Load("testdata/widgets.yaml")
	require.NoError(t, err)
	errs := v.Validate(widget("  size: medium\n  replicas: 0\n"))
	require.Equal(t, []string{"FieldValueInvalid <nil>", "FieldValueInvalid spec.replicas", "FieldValueNotSupported spec.size"}, describe(errs))
	assert.Equal(t, []string{"FieldValueInvalid spec.replicas", "FieldValueNotSupported spec.size"}, describe(WithoutCELSkipped(errs)))
}

func TestValidateObject(t *testing.T) {
	v, err := Load("testdata/widgets.yaml")
	require.NoError(t, err)
	type spec struct {
		Size     string `json:"size"`
		Replicas int32  `json:"replicas"`
	}
	type widgetType struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Spec       spec              `json:"spec"`
	}
	obj := widgetType{APIVersion: "example.com/v1", Kind: "Widget", Metadata: map[string]string{"name": "w"}, Spec: spec{Size: "small", Replicas: 2}}
	errs, err := v.ValidateObject(obj)
	require.NoError(t, err)
	assert.Empty(t, errs)

	obj.Spec.Size = "huge"
	errs, err = v.ValidateObject(&obj)
	require.NoError(t, err)
	// The API server skips CEL rules on an object with such errors, and says so at the root.
	assert.Equal(t, []string{"FieldValueInvalid <nil>", "FieldValueNotSupported spec.size"}, describe(errs))

	_, err = v.ValidateObject([]int{1})
	assert.Error(t, err)
}

func TestParseRejectsInvalidCRDs(t *testing.T) {
	valid, err := os.ReadFile("testdata/widgets.yaml")
	require.NoError(t, err)
	tests := []struct {
		name    string
		edit    func(map[string]any)
		wantErr string
	}{
		{
			name:    "unknown field in the CRD",
			edit:    func(crd map[string]any) { crd["spec"].(map[string]any)["scopee"] = "Namespaced" },
			wantErr: `unknown field "scopee"`,
		},
		{
			name:    "not a CRD",
			edit:    func(crd map[string]any) { crd["kind"] = "ConfigMap" },
			wantErr: `kind "ConfigMap"`,
		},
		{
			name: "non-structural schema",
			edit: func(crd map[string]any) {
				spec := schemaOf(crd)["properties"].(map[string]any)["spec"].(map[string]any)
				delete(spec, "type")
			},
			wantErr: "openAPIV3Schema.properties[spec].type: Required value",
		},
		{
			name:    "name not plural.group",
			edit:    func(crd map[string]any) { crd["metadata"].(map[string]any)["name"] = "widget.example.com" },
			wantErr: `must be spec.names.plural+"."+spec.group`,
		},
		{
			name:    "protected group without API approval",
			edit:    func(crd map[string]any) { setGroup(crd, "example.k8s.io") },
			wantErr: "api-approved.kubernetes.io",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var crd map[string]any
			require.NoError(t, yaml.Unmarshal(valid, &crd))
			tt.edit(crd)
			data, err := yaml.Marshal(crd)
			require.NoError(t, err)
			_, err = Parse(data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.yaml"))
	assert.ErrorContains(t, err, "reading CRD")
}

func schemaOf(crd map[string]any) map[string]any {
	version := crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
	return version["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
}

func setGroup(crd map[string]any, group string) {
	crd["spec"].(map[string]any)["group"] = group
	crd["metadata"].(map[string]any)["name"] = "widgets." + group
}

func describe(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

// TestValidateUpdate runs the transition rules, which read oldSelf and which a create skips,
// with the old object as stored.
func TestValidateUpdate(t *testing.T) {
	v, err := Load("testdata/widgets.yaml")
	require.NoError(t, err)
	old := widget("  size: small\n")
	assert.Empty(t, v.Validate(widget("  size: large\n")), "a create has no old object")
	assert.Empty(t, v.ValidateUpdate(widget("  size: small\n  replicas: 3\n"), old))
	errs := v.ValidateUpdate(widget("  size: large\n"), old)
	require.Len(t, errs, 1, "%v", errs)
	assert.Equal(t, "spec.size", errs[0].Field)
	assert.Contains(t, errs[0].Detail, "size is immutable")
}
