package v1

import (
	"encoding/json"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The driver exposure lists, by their JSON names.
const (
	ListIngress   = "driverServiceIngressList"
	ListHTTPRoute = "driverHttpRouteList"
	ListGRPCRoute = "driverGrpcRouteList"
)

// Exposure is one entry of a driver exposure list with the list it came from: a Service and
// the Ingress, HTTPRoute or GRPCRoute in front of it.
// +kubebuilder:object:generate=false
type Exposure struct {
	List  string
	Index int
	*DriverExposure
}

// Exposures are the entries of the three lists, in the order Apache builds them.
func Exposures(spec *ApplicationSpec) []Exposure {
	var out []Exposure
	for _, l := range []struct {
		name    string
		entries []DriverExposure
	}{{ListIngress, spec.DriverServiceIngressList}, {ListHTTPRoute, spec.DriverHTTPRouteList}, {ListGRPCRoute, spec.DriverGRPCRouteList}} {
		for i := range l.entries {
			out = append(out, Exposure{List: l.name, Index: i, DriverExposure: &l.entries[i]})
		}
	}
	return out
}

// FrontMetadata is the metadata of the entry's Ingress or route.
func (e Exposure) FrontMetadata() *metav1.ObjectMeta {
	switch e.List {
	case ListIngress:
		return e.IngressMetadata
	case ListHTTPRoute:
		return e.HTTPRouteMetadata
	}
	return e.GRPCRouteMetadata
}

// FrontSpec is the entry's Ingress or route spec as written.
func (e Exposure) FrontSpec() []byte {
	var spec []byte
	switch e.List {
	case ListIngress:
		if e.IngressSpec != nil {
			spec = e.IngressSpec.Raw
		}
	case ListHTTPRoute:
		if e.HTTPRouteSpec != nil {
			spec = e.HTTPRouteSpec.Raw
		}
	default:
		if e.GRPCRouteSpec != nil {
			spec = e.GRPCRouteSpec.Raw
		}
	}
	return spec
}

// FrontField is the JSON name of the entry's Ingress or route part ("ingress", "httpRoute",
// "grpcRoute"), as its fields spell it.
func (e Exposure) FrontField() string {
	switch e.List {
	case ListIngress:
		return "ingress"
	case ListHTTPRoute:
		return "httpRoute"
	}
	return "grpcRoute"
}

// RouteSpec is the part of a route's spec sparkhooks reads: Apache requires parentRefs and
// fills in a rule when there is none.
// +kubebuilder:object:generate=false
type RouteSpec struct {
	ParentRefs []json.RawMessage `json:"parentRefs"`
	Rules      []json.RawMessage `json:"rules"`
}

// exposureErrors checks what the extra children of configMapSpecs and the exposure lists need
// to be built: names, which must not repeat within a kind, a Service port for the default
// rules to point at, and a route's parentRefs, which Apache requires too.
func exposureErrors(spec *ApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	names := map[string]*field.Path{}
	unique := func(kind, name string, at *field.Path) {
		if first, ok := names[kind+"/"+name]; ok {
			errs = append(errs, field.Duplicate(at, fmt.Sprintf("%s (also the %s at %s)", name, kind, first)))
			return
		}
		names[kind+"/"+name] = at
	}
	name := func(kind string, m *metav1.ObjectMeta, at *field.Path, check func(string) []string) {
		if m == nil || m.Name == "" {
			errs = append(errs, field.Required(at.Child("name"), "the "+kind+"'s name"))
			return
		}
		for _, msg := range check(m.Name) {
			errs = append(errs, field.Invalid(at.Child("name"), m.Name, msg))
		}
		errs = append(errs, objectMeta(at, m)...)
		unique(kind, m.Name, at.Child("name"))
	}
	for i, cm := range spec.ConfigMapSpecs {
		at := p.Child("configMapSpecs").Index(i)
		name("ConfigMap", &metav1.ObjectMeta{Name: cm.Name, Labels: cm.Labels}, at, validation.IsDNS1123Subdomain)
	}
	for _, e := range Exposures(spec) {
		at := p.Child(e.List).Index(e.Index)
		name("Service", e.ServiceMetadata, at.Child("serviceMetadata"), validation.IsDNS1035Label)
		if e.ServiceSpec == nil || len(e.ServiceSpec.Ports) == 0 {
			errs = append(errs, field.Required(at.Child("serviceSpec", "ports"), "at least one port: the default rule routes to the first"))
		} else {
			errs = append(errs, serviceSpec(at.Child("serviceSpec"), e.ServiceSpec)...)
		}
		front := e.FrontField()
		kind := map[string]string{ListIngress: "Ingress", ListHTTPRoute: "HTTPRoute", ListGRPCRoute: "GRPCRoute"}[e.List]
		name(kind, e.FrontMetadata(), at.Child(front+"Metadata"), validation.IsDNS1123Subdomain)
		raw := e.FrontSpec()
		specPath := at.Child(front + "Spec")
		if e.List == ListIngress {
			if len(raw) > 0 {
				var ing networkingv1.IngressSpec
				if err := json.Unmarshal(raw, &ing); err != nil {
					errs = append(errs, field.Invalid(specPath, string(raw), "not an Ingress spec: "+err.Error()))
				}
			}
			continue
		}
		var route RouteSpec
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &route); err != nil {
				errs = append(errs, field.Invalid(specPath, string(raw), "not a route spec: "+err.Error()))
				continue
			}
		}
		if len(route.ParentRefs) == 0 {
			errs = append(errs, field.Required(specPath.Child("parentRefs"), "the Gateway the route attaches to"))
		}
	}
	return errs
}
