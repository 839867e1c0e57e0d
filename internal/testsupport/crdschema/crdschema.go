// Package crdschema checks CustomResourceDefinitions, and objects against them, with the API
// server's own code (k8s.io/apiextensions-apiserver), so that a test passing here means the API
// server accepts the same CRD or object.
//
// For an object, Validate does what the API server does on create: unknown fields (which the
// API server prunes, and rejects under kubectl's default strict field validation), schema
// defaults, metadata rules, the OpenAPI schema, list-type rules (x-kubernetes-list-type) and
// CEL rules (x-kubernetes-validations). Errors come sorted by field path, unknown fields first.
package crdschema

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// Validator validates objects against one CRD, for every version the CRD serves.
type Validator struct {
	crd      *apiextensionsv1.CustomResourceDefinition
	versions map[string]*versionSchema
}

type versionSchema struct {
	structural *structuralschema.Structural
	schema     schemavalidation.SchemaValidator
	cel        *cel.Validator
}

// Load reads a CRD from a YAML or JSON file, checks it as the API server would (see
// ValidateCRD) and returns a Validator for its objects.
func Load(path string) (*Validator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading CRD: %w", err)
	}
	v, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// Parse is Load for a CRD already in memory.
func Parse(data []byte) (*Validator, error) {
	crd, err := DecodeCRD(data)
	if err != nil {
		return nil, err
	}
	if errs := ValidateCRD(crd); len(errs) > 0 {
		return nil, fmt.Errorf("CustomResourceDefinition %s is invalid: %w", crd.Name, errs.ToAggregate())
	}
	v := &Validator{crd: crd, versions: map[string]*versionSchema{}}
	for _, version := range crd.Spec.Versions {
		if !version.Served {
			continue
		}
		vs, err := newVersionSchema(version)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s, version %s: %w", crd.Name, version.Name, err)
		}
		v.versions[version.Name] = vs
	}
	return v, nil
}

func newVersionSchema(version apiextensionsv1.CustomResourceDefinitionVersion) (*versionSchema, error) {
	if version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("no openAPIV3Schema")
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(version.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema: %w", err)
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("building the structural schema: %w", err)
	}
	validator, _, err := schemavalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, fmt.Errorf("building the schema validator: %w", err)
	}
	return &versionSchema{
		structural: structural,
		schema:     validator,
		// nil when the schema has no x-kubernetes-validations.
		cel: cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}, nil
}

// DecodeCRD decodes an apiextensions.k8s.io/v1 CustomResourceDefinition strictly: unknown and
// duplicate fields are errors.
func DecodeCRD(data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, fmt.Errorf("decoding CustomResourceDefinition: %w", err)
	}
	want := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	if got := crd.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("decoding CustomResourceDefinition: got apiVersion %q kind %q, want %q %q",
			crd.APIVersion, crd.Kind, want.GroupVersion().String(), want.Kind)
	}
	return &crd, nil
}

// ValidateCRD runs the API server's validation of a new CRD: it applies the v1 defaults,
// converts the CRD to the internal type and calls the apiextensions validation package, which
// among other things requires a structural schema.
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	defaulted := crd.DeepCopy()
	scheme.Default(defaulted)
	var internal apiextensions.CustomResourceDefinition
	if err := scheme.Convert(defaulted, &internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("converting to the internal type: %w", err))}
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal)
}

// CRD returns the CRD the validator was built from. It must not be modified.
func (v *Validator) CRD() *apiextensionsv1.CustomResourceDefinition { return v.crd }

// Validate checks obj, a decoded JSON or YAML object (as from json.Unmarshal or sigs.k8s.io/yaml
// into a map) with apiVersion and kind, the way the API server checks it on create. obj is not
// modified. A missing metadata.namespace counts as "default", since the API server takes it
// from the request.
//
// To check a status a hook returns, put it into the parent object of the request and
// validate that: the API server validates the whole object on a status update too.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	return v.validate(obj, nil)
}

// ValidateUpdate is Validate for an update from old to obj: the CEL rules that read oldSelf (the
// transition rules, which Validate skips) run too. old is taken as stored, so it is checked for
// nothing itself.
func (v *Validator) ValidateUpdate(obj, old map[string]any) field.ErrorList {
	o, err := normalize(old)
	if err != nil {
		return field.ErrorList{field.Invalid(nil, old, err.Error())}
	}
	return v.validate(obj, o)
}

func (v *Validator) validate(obj, old map[string]any) field.ErrorList {
	u, err := normalize(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(nil, obj, err.Error())}
	}
	vs, errs := v.versionOf(u)
	if vs == nil {
		return errs
	}
	if old != nil {
		// Stored objects are pruned and defaulted already.
		pruning.PruneWithOptions(old, vs.structural, true, structuralschema.UnknownFieldPathOptions{})
		defaulting.Default(old, vs.structural)
	}

	unknown := pruning.PruneWithOptions(u, vs.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, path := range unknown {
		errs = append(errs, field.Forbidden(field.NewPath(path), "field not declared in the schema: check its spelling and indentation"))
	}
	defaulting.Default(u, vs.structural)

	// The order of the API server's customResourceStrategy.Validate.
	var checks field.ErrorList
	checks = append(checks, v.validateMetadata(u)...)
	checks = append(checks, schemavalidation.ValidateCustomResource(nil, u, vs.schema)...)
	checks = append(checks, objectmeta.Validate(nil, u, vs.structural, false)...)
	checks = append(checks, listtype.ValidateListSetsAndMaps(nil, vs.structural, u)...)
	if vs.cel != nil {
		if blocked := celBlocker(checks); blocked != nil {
			checks = append(checks, blocked)
		} else {
			var oldObj any
			if old != nil {
				oldObj = old
			}
			celErrs, _ := vs.cel.Validate(context.Background(), nil, vs.structural, u, oldObj, celconfig.RuntimeCELCostBudget)
			checks = append(checks, celErrs...)
		}
	}
	// The schema validator walks properties in map order; sort for stable messages.
	slices.SortStableFunc(checks, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return append(errs, checks...)
}

// celSkipped is the API server's note that it did not run the CEL rules.
const celSkipped = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// celBlocker mirrors the API server, which skips CEL rules when the object already has errors
// that CEL expressions could trip over, and says so.
func celBlocker(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, celSkipped)
		}
	}
	return nil
}

// WithoutCELSkipped returns errs without the note that CEL rules were skipped, for callers that
// count the mistakes in an object: the note is not one, and appears only when the CRD has rules.
func WithoutCELSkipped(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, err := range errs {
		if err.Field != "<nil>" || err.Detail != celSkipped {
			out = append(out, err)
		}
	}
	return out
}

// ValidateObject is Validate for any value that marshals to a JSON object, such as a typed
// API object. The error is for values that do not marshal to one.
func (v *Validator) ValidateObject(obj any) (field.ErrorList, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("marshalling the object: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the object is not a JSON object: %w", err)
	}
	return v.Validate(m), nil
}

// versionOf finds the schema for the object's apiVersion and kind.
func (v *Validator) versionOf(u map[string]any) (*versionSchema, field.ErrorList) {
	apiVersion, _ := u["apiVersion"].(string)
	kind, _ := u["kind"].(string)
	if kind != v.crd.Spec.Names.Kind {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), kind, fmt.Sprintf("this CRD defines kind %q", v.crd.Spec.Names.Kind))}
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Group != v.crd.Spec.Group {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), apiVersion, fmt.Sprintf("must be %s/<version>", v.crd.Spec.Group))}
	}
	vs, ok := v.versions[gv.Version]
	if !ok {
		served := make([]string, 0, len(v.versions))
		for name := range v.versions {
			served = append(served, v.crd.Spec.Group+"/"+name)
		}
		return nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), apiVersion, served)}
	}
	return vs, nil
}

// validateMetadata applies the generic ObjectMeta rules the API server applies to every
// object (name syntax, label and annotation syntax, ...).
func (v *Validator) validateMetadata(u map[string]any) field.ErrorList {
	path := field.NewPath("metadata")
	raw, ok := u["metadata"].(map[string]any)
	if !ok {
		return field.ErrorList{field.Required(path, "")}
	}
	var meta metav1.ObjectMeta
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &meta); err != nil {
		return field.ErrorList{field.Invalid(path, raw, err.Error())}
	}
	namespaced := v.crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	if namespaced && meta.Namespace == "" {
		meta.Namespace = metav1.NamespaceDefault
	}
	if meta.Name == "" && meta.GenerateName != "" {
		// The API server generates the name before it validates.
		meta.Name = meta.GenerateName + "x"
	}
	return apivalidation.ValidateObjectMeta(&meta, namespaced, apivalidation.NameIsDNSSubdomain, path)
}

// normalize deep-copies obj the way the API server decodes a request body: whole numbers become
// int64, as the schema validator expects.
func normalize(obj map[string]any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var u map[string]any
	if err := utiljson.Unmarshal(data, &u); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	return u, nil
}
