package v1beta2

// GatewayParentReference names a Gateway, or one listener of it, that a route attaches to: the
// name, namespace and sectionName of a Gateway API ParentReference (gateway.networking.k8s.io/v1),
// with the group and kind fixed to Gateway's.
type GatewayParentReference struct {
	// Name is the Gateway's name.
	Name string `json:"name"`
	// Namespace is the Gateway's namespace; empty means the route's own. A Gateway in another
	// namespace must allow routes from the application's namespace (its listeners'
	// allowedRoutes).
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// SectionName is the Gateway listener the route attaches to; empty means every listener
	// that accepts it.
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}

// HTTPRouteConfiguration asks for a Gateway API HTTPRoute in front of a Spark UI. This is a
// sparkhooks extension; its field names are the Gateway API's.
type HTTPRouteConfiguration struct {
	// ParentRefs are the Gateways the route attaches to. Empty means the operator's
	// --gateway-parent-refs; a route needs at least one.
	// +optional
	ParentRefs []GatewayParentReference `json:"parentRefs,omitempty"`
	// Hostnames are the hosts the route answers for, each of which may contain
	// {{$appName}}, {{$appNamespace}} and {{$appId}}. Empty means the operator's
	// --http-route-hostnames, and when those are empty too, every host of the Gateway listener.
	// +optional
	Hostnames []string `json:"hostnames,omitempty"`
	// PathPrefix is the path the UI is served under, which may contain {{$appName}},
	// {{$appNamespace}} and {{$appId}}. The route strips it before the request reaches Spark, and
	// Spark writes its links under it (spark.ui.proxyBase). Empty means the operator's
	// --http-route-path-prefix, /{{$appNamespace}}/{{$appName}} unless set; "/" serves the UI at
	// the root of its hostnames.
	// +optional
	PathPrefix string `json:"pathPrefix,omitempty"`
	// Annotations are added to the route.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// GRPCRouteConfiguration asks for a Gateway API GRPCRoute in front of a Spark Connect server.
// gRPC clients address a server by host and port only, so a server is told apart from the
// others by its hostnames, not by a path. This is a sparkhooks extension; its field names are
// the Gateway API's.
type GRPCRouteConfiguration struct {
	// ParentRefs are the Gateways the route attaches to. Empty means the operator's
	// --gateway-parent-refs; a route needs at least one.
	// +optional
	ParentRefs []GatewayParentReference `json:"parentRefs,omitempty"`
	// Hostnames are the hosts the route answers for, each of which may contain
	// {{$appName}} and {{$appNamespace}}. Empty means every host of the Gateway listener, which
	// then serves this one server only.
	// +optional
	Hostnames []string `json:"hostnames,omitempty"`
	// Annotations are added to the route.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}
