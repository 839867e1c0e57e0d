package children

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// The Gateway API objects the hooks build, as gateway.networking.k8s.io/v1 spells them. Only the
// fields the hooks set are declared: importing sigs.k8s.io/gateway-api would raise half the
// module's Kubernetes dependencies for a handful of structs, and the contract e2e checks these
// against the real CRDs on a real API server.
const (
	GatewayAPIVersion = "gateway.networking.k8s.io/v1"
	gatewayGroup      = "gateway.networking.k8s.io"
	// DefaultHTTPRoutePathPrefix is the path of a UI HTTPRoute that neither the spec nor the
	// operator sets: one path per application, so that many share a Gateway's hostname.
	DefaultHTTPRoutePathPrefix = "/{{$appNamespace}}/{{$appName}}"
)

// HTTPRoute is a gateway.networking.k8s.io/v1 HTTPRoute, without status.
type HTTPRoute struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            HTTPRouteSpec     `json:"spec"`
}

// HTTPRouteSpec is the part of an HTTPRoute's spec the hooks set.
type HTTPRouteSpec struct {
	ParentRefs []ParentReference `json:"parentRefs"`
	Hostnames  []string          `json:"hostnames,omitempty"`
	Rules      []HTTPRouteRule   `json:"rules"`
}

// HTTPRouteRule routes the requests under one path prefix to one backend.
type HTTPRouteRule struct {
	Matches     []HTTPRouteMatch  `json:"matches"`
	Filters     []HTTPRouteFilter `json:"filters,omitempty"`
	BackendRefs []BackendRef      `json:"backendRefs"`
}

// HTTPRouteMatch matches a path.
type HTTPRouteMatch struct {
	Path HTTPPathMatch `json:"path"`
}

// HTTPPathMatch is a path match of type PathPrefix.
type HTTPPathMatch struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// HTTPRouteFilter is a URLRewrite filter.
type HTTPRouteFilter struct {
	Type       string      `json:"type"`
	URLRewrite *URLRewrite `json:"urlRewrite,omitempty"`
}

// URLRewrite replaces the matched path prefix.
type URLRewrite struct {
	Path HTTPPathModifier `json:"path"`
}

// HTTPPathModifier is a ReplacePrefixMatch modifier.
type HTTPPathModifier struct {
	Type               string `json:"type"`
	ReplacePrefixMatch string `json:"replacePrefixMatch"`
}

// GRPCRoute is a gateway.networking.k8s.io/v1 GRPCRoute, without status.
type GRPCRoute struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            GRPCRouteSpec     `json:"spec"`
}

// GRPCRouteSpec is the part of a GRPCRoute's spec the hooks set: every call to one backend.
type GRPCRouteSpec struct {
	ParentRefs []ParentReference `json:"parentRefs"`
	Hostnames  []string          `json:"hostnames,omitempty"`
	Rules      []GRPCRouteRule   `json:"rules"`
}

// GRPCRouteRule sends every call to its backends.
type GRPCRouteRule struct {
	BackendRefs []BackendRef `json:"backendRefs"`
}

// ParentReference names a Gateway, with the group and kind written out so that the answer
// reads the same as the object the API server stores.
type ParentReference struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

// BackendRef is a Service port.
type BackendRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Port  int32  `json:"port"`
}

// RouteSettings are the operator's defaults of the Gateway API routes built for every
// application and server.
type RouteSettings struct {
	// HTTPRoutes and GRPCRoutes say that the routes may be built: the controller registration
	// declares them as child types, which is the operator's switch for them (chart value
	// gatewayAPI.enabled).
	HTTPRoutes bool
	GRPCRoutes bool
	// UIHTTPRoute asks for a UI HTTPRoute for every application that has a UI Service, as
	// --ingress-url-format does for Ingresses (--ui-http-route).
	UIHTTPRoute bool
	// ParentRefs are the Gateways of every route whose spec names none (--gateway-parent-refs).
	ParentRefs []v1beta2.GatewayParentReference
	// HTTPRouteHostnames and HTTPRoutePathPrefix are the hostnames and path of every UI
	// HTTPRoute whose spec sets none (--http-route-hostnames, --http-route-path-prefix);
	// an empty path means DefaultHTTPRoutePathPrefix.
	HTTPRouteHostnames  []string
	HTTPRoutePathPrefix string
}

// RouteTarget is what a route is built for: its name and namespace, the names its placeholders
// expand to, and the labels it carries.
type RouteTarget struct {
	Name      string
	Namespace string
	// AppName and AppID replace {{$appName}} and {{$appId}}; {{$appNamespace}} is Namespace.
	AppName, AppID string
	Labels         map[string]string
}

// BuildHTTPRoute returns the HTTPRoute of cfg to the port of svc, and the path prefix it serves
// the UI under ("/" for the root). The prefix is stripped on the way in; the caller tells Spark
// to write its links under it (spark.ui.proxyBase).
func (s RouteSettings) BuildHTTPRoute(t RouteTarget, cfg *v1beta2.HTTPRouteConfiguration, svc *corev1.Service, port int32) (*HTTPRoute, string, error) {
	parents, err := s.parents(cfg.ParentRefs)
	if err != nil {
		return nil, "", err
	}
	hostnames := cfg.Hostnames
	if len(hostnames) == 0 {
		hostnames = s.HTTPRouteHostnames
	}
	hosts, err := expandHostnames(t, hostnames)
	if err != nil {
		return nil, "", err
	}
	path := cfg.PathPrefix
	if path == "" {
		path = s.HTTPRoutePathPrefix
	}
	if path == "" {
		path = DefaultHTTPRoutePathPrefix
	}
	if path, err = t.expand(path); err != nil {
		return nil, "", fmt.Errorf("pathPrefix: %w", err)
	}
	if path = strings.TrimSuffix(path, "/"); path == "" {
		path = "/"
	}
	if msgs := v1beta2.IsHTTPRoutePath(path); len(msgs) > 0 {
		return nil, "", fmt.Errorf("pathPrefix %q: %s", path, strings.Join(msgs, "; "))
	}
	rule := HTTPRouteRule{
		Matches:     []HTTPRouteMatch{{Path: HTTPPathMatch{Type: "PathPrefix", Value: path}}},
		BackendRefs: []BackendRef{serviceBackend(svc.Name, port)},
	}
	if path != "/" {
		// Spark serves its UI at /; the Gateway strips the application's prefix, as the
		// Ingress's nginx rewrite-target does, but in the API rather than an annotation.
		rule.Filters = []HTTPRouteFilter{{Type: "URLRewrite", URLRewrite: &URLRewrite{
			Path: HTTPPathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: "/"},
		}}}
	}
	return &HTTPRoute{
		TypeMeta: metav1.TypeMeta{Kind: "HTTPRoute", APIVersion: GatewayAPIVersion},
		Metadata: t.meta(cfg.Annotations),
		Spec:     HTTPRouteSpec{ParentRefs: parents, Hostnames: hosts, Rules: []HTTPRouteRule{rule}},
	}, path, nil
}

// BuildGRPCRoute returns the GRPCRoute of cfg to the port of svc.
func (s RouteSettings) BuildGRPCRoute(t RouteTarget, cfg *v1beta2.GRPCRouteConfiguration, svc *corev1.Service, port int32) (*GRPCRoute, error) {
	parents, err := s.parents(cfg.ParentRefs)
	if err != nil {
		return nil, err
	}
	hosts, err := expandHostnames(t, cfg.Hostnames)
	if err != nil {
		return nil, err
	}
	return &GRPCRoute{
		TypeMeta: metav1.TypeMeta{Kind: "GRPCRoute", APIVersion: GatewayAPIVersion},
		Metadata: t.meta(cfg.Annotations),
		Spec: GRPCRouteSpec{ParentRefs: parents, Hostnames: hosts, Rules: []GRPCRouteRule{{
			BackendRefs: []BackendRef{serviceBackend(svc.Name, port)},
		}}},
	}, nil
}

// HTTPRouteAddress is the URL of the UI through a route BuildHTTPRoute made: its first
// hostname, unless that is a wildcard, and the path prefix; the path alone when there is no such
// hostname (the UI is then at that path on the Gateway's address).
func HTTPRouteAddress(route *HTTPRoute) string {
	path := route.Spec.Rules[0].Matches[0].Path.Value
	if hosts := route.Spec.Hostnames; len(hosts) > 0 && !strings.HasPrefix(hosts[0], "*") {
		if path == "/" {
			path = ""
		}
		return "http://" + hosts[0] + path
	}
	return path
}

// parents are the spec's parent Gateways, else the operator's; a route attached to none would
// never receive traffic, so it is an error.
func (s RouteSettings) parents(refs []v1beta2.GatewayParentReference) ([]ParentReference, error) {
	if len(refs) == 0 {
		refs = s.ParentRefs
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("parentRefs: the route names no Gateway and the operator has no default (--gateway-parent-refs, chart value gatewayAPI.parentRefs)")
	}
	out := make([]ParentReference, len(refs))
	for i, r := range refs {
		out[i] = ParentReference{Group: gatewayGroup, Kind: "Gateway", Namespace: r.Namespace, Name: r.Name, SectionName: r.SectionName}
	}
	return out, nil
}

func serviceBackend(name string, port int32) BackendRef {
	return BackendRef{Group: "", Kind: "Service", Name: name, Port: port}
}

func (t RouteTarget) meta(annotations map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace, Labels: copyMap(t.Labels), Annotations: copyMap(annotations)}
}

// expand replaces Kubeflow's URL placeholders, as in --ingress-url-format.
func (t RouteTarget) expand(format string) (string, error) {
	s := strings.NewReplacer(
		"{{$appName}}", t.AppName,
		"{{$appNamespace}}", t.Namespace,
		"{{$appId}}", t.AppID,
	).Replace(format)
	if strings.Contains(s, "{{") {
		return "", fmt.Errorf("%q has a placeholder other than {{$appName}}, {{$appNamespace}} and {{$appId}}", format)
	}
	return s, nil
}

func expandHostnames(t RouteTarget, formats []string) ([]string, error) {
	if len(formats) == 0 {
		return nil, nil
	}
	out := make([]string, len(formats))
	for i, f := range formats {
		h, err := t.expand(f)
		if err != nil {
			return nil, fmt.Errorf("hostnames[%d]: %w", i, err)
		}
		if msgs := v1beta2.IsRouteHostname(h); len(msgs) > 0 {
			return nil, fmt.Errorf("hostnames[%d] %q: %s", i, h, strings.Join(msgs, "; "))
		}
		out[i] = h
	}
	return out, nil
}
