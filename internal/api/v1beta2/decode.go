package v1beta2

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DecodeSparkApplication reads a SparkApplication as the API server stores it. The CRD keeps pod
// templates without a schema, as Kubeflow's does, so a stored spec can hold JSON that fits no Go
// field (`containers: "x"`, a quantity that does not parse). That is a fault of the spec, not of
// the object: it comes back as field errors, next to the object with its metadata, its status and
// as much of the spec as decoded, so that the hooks can report it in the status and the webhook
// can refuse it. The error is for an object that cannot be read at all.
func DecodeSparkApplication(raw []byte) (*SparkApplication, field.ErrorList, error) {
	// The common case, a spec that decodes, in one pass.
	if app := new(SparkApplication); json.Unmarshal(raw, app) == nil {
		return app, nil, nil
	}
	var stored struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              json.RawMessage        `json:"spec"`
		Status            SparkApplicationStatus `json:"status,omitempty"`
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, nil, err
	}
	app := &SparkApplication{TypeMeta: stored.TypeMeta, ObjectMeta: stored.ObjectMeta, Status: stored.Status}
	return app, DecodeSpec(stored.Spec, &app.Spec), nil
}

// DecodeScheduledSparkApplication is DecodeSparkApplication for a ScheduledSparkApplication,
// whose spec holds a SparkApplication template.
func DecodeScheduledSparkApplication(raw []byte) (*ScheduledSparkApplication, field.ErrorList, error) {
	if ssa := new(ScheduledSparkApplication); json.Unmarshal(raw, ssa) == nil {
		return ssa, nil, nil
	}
	var stored struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              json.RawMessage                 `json:"spec"`
		Status            ScheduledSparkApplicationStatus `json:"status,omitempty"`
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, nil, err
	}
	ssa := &ScheduledSparkApplication{TypeMeta: stored.TypeMeta, ObjectMeta: stored.ObjectMeta, Status: stored.Status}
	return ssa, DecodeSpec(stored.Spec, &ssa.Spec), nil
}

// DecodeSpec decodes a stored spec into into, reporting what does not decode as field errors
// under spec. encoding/json goes on past a value of the wrong JSON type and names it; an error
// from a field's own decoder (a quantity) stops it where it was.
func DecodeSpec(raw json.RawMessage, into any) field.ErrorList {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	err := json.Unmarshal(raw, into)
	if err == nil {
		return nil
	}
	spec := field.NewPath("spec")
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return field.ErrorList{field.TypeInvalid(jsonPath(spec, typeErr.Field), field.OmitValueType{},
			fmt.Sprintf("must be %s, not %s", jsonKind(typeErr.Type), article(typeErr.Value)))}
	}
	return field.ErrorList{field.Invalid(spec, field.OmitValueType{}, fmt.Sprintf("does not decode: %v", err))}
}

// jsonPath turns encoding/json's dotted field path into a field path. The path names the
// embedded Go structs too (driver.SparkPodSpec.template); the API's JSON names are lower camel
// case, so a capitalised segment is one of those and is skipped.
func jsonPath(root *field.Path, dotted string) *field.Path {
	p := root
	for _, name := range strings.Split(dotted, ".") {
		if name == "" || unicode.IsUpper(rune(name[0])) {
			continue
		}
		p = p.Child(name)
	}
	return p
}

func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.String()
}

// article names a JSON value kind as encoding/json reports it ("string", "array", "number 1.5").
func article(value string) string {
	if value == "" {
		return "that"
	}
	switch value[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + value
	}
	return "a " + value
}
