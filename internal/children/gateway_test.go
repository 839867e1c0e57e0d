package children

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

var testGateway = []v1beta2.GatewayParentReference{{Name: "public", Namespace: "gateways", SectionName: "https"}}

func withUIRoute(cfg v1beta2.HTTPRouteConfiguration) func(*v1beta2.SparkApplication) {
	return func(a *v1beta2.SparkApplication) {
		a.Spec.SparkUIOptions = &v1beta2.SparkUIConfiguration{HTTPRoute: &cfg}
	}
}

func routeOpts(r RouteSettings) Options {
	r.HTTPRoutes = true
	return Options{EnableUIService: true, Routes: r}
}

func TestUIHTTPRoute(t *testing.T) {
	for _, tc := range []struct {
		name      string
		app       *v1beta2.SparkApplication
		opts      Options
		hostnames []string
		parents   []ParentReference
		path      string
		address   string
		proxyBase string // "" when Spark serves its UI at the root
	}{
		{
			name:      "spec asks, default path",
			app:       newApp(withUIRoute(v1beta2.HTTPRouteConfiguration{ParentRefs: testGateway, Hostnames: []string{"spark.example.com"}})),
			opts:      routeOpts(RouteSettings{}),
			hostnames: []string{"spark.example.com"},
			parents:   []ParentReference{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "gateways", Name: "public", SectionName: "https"}},
			path:      "/" + testNamespace + "/pi",
			address:   "http://spark.example.com/" + testNamespace + "/pi",
			proxyBase: "/" + testNamespace + "/pi",
		},
		{
			name:      "operator defaults, placeholders in hostname, root path",
			app:       newApp(),
			opts:      routeOpts(RouteSettings{UIHTTPRoute: true, ParentRefs: []v1beta2.GatewayParentReference{{Name: "ui"}}, HTTPRouteHostnames: []string{"{{$appName}}.spark.example.com"}, HTTPRoutePathPrefix: "/"}),
			hostnames: []string{"pi.spark.example.com"},
			parents:   []ParentReference{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "ui"}},
			path:      "/",
			address:   "http://pi.spark.example.com",
		},
		{
			name:    "spec overrides operator defaults, no hostname, trailing slash dropped",
			app:     newApp(withUIRoute(v1beta2.HTTPRouteConfiguration{ParentRefs: testGateway, PathPrefix: "/ui/{{$appId}}/"})),
			opts:    routeOpts(RouteSettings{UIHTTPRoute: true, ParentRefs: []v1beta2.GatewayParentReference{{Name: "ui"}}, HTTPRoutePathPrefix: "/"}),
			parents: []ParentReference{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "gateways", Name: "public", SectionName: "https"}},
			path:    "/ui/" + testSub.AppID, address: "/ui/" + testSub.AppID, proxyBase: "/ui/" + testSub.AppID,
		},
		{
			name:      "wildcard hostname: the address is the path",
			app:       newApp(withUIRoute(v1beta2.HTTPRouteConfiguration{ParentRefs: testGateway, Hostnames: []string{"*.spark.example.com"}})),
			opts:      routeOpts(RouteSettings{}),
			hostnames: []string{"*.spark.example.com"},
			parents:   []ParentReference{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "gateways", Name: "public", SectionName: "https"}},
			path:      "/" + testNamespace + "/pi", address: "/" + testNamespace + "/pi", proxyBase: "/" + testNamespace + "/pi",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t, tc.app, tc.opts)
			route := objs.UIHTTPRoute
			require.NotNil(t, route)
			assert.Equal(t, "pi-ui-route", route.Metadata.Name)
			assert.Equal(t, testNamespace, route.Metadata.Namespace)
			assert.Equal(t, tc.hostnames, route.Spec.Hostnames)
			assert.Equal(t, tc.parents, route.Spec.ParentRefs)
			require.Len(t, route.Spec.Rules, 1)
			rule := route.Spec.Rules[0]
			assert.Equal(t, []HTTPRouteMatch{{Path: HTTPPathMatch{Type: "PathPrefix", Value: tc.path}}}, rule.Matches)
			assert.Equal(t, []BackendRef{{Kind: "Service", Name: objs.UIService.Name, Port: 4040}}, rule.BackendRefs)
			assert.Equal(t, tc.address, HTTPRouteAddress(route))
			props := sparkProps(t, objs)
			if tc.proxyBase == "" {
				assert.Empty(t, rule.Filters, "nothing to strip at the root")
				assert.NotContains(t, props, "spark.ui.proxyBase")
				return
			}
			assert.Equal(t, []HTTPRouteFilter{{Type: "URLRewrite", URLRewrite: &URLRewrite{Path: HTTPPathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: "/"}}}}, rule.Filters)
			assert.Equal(t, tc.proxyBase, props["spark.ui.proxyBase"])
			assert.Equal(t, "/", props["spark.ui.proxyRedirectUri"])
		})
	}
}

func TestUIHTTPRouteOff(t *testing.T) {
	asks := newApp(withUIRoute(v1beta2.HTTPRouteConfiguration{ParentRefs: testGateway}))
	for _, tc := range []struct {
		name string
		app  *v1beta2.SparkApplication
		opts Options
	}{
		{"registration does not declare HTTPRoutes", asks, Options{EnableUIService: true, Routes: RouteSettings{UIHTTPRoute: true, ParentRefs: testGateway}}},
		{"no UI Service", asks, Options{Routes: RouteSettings{HTTPRoutes: true}}},
		{"neither spec nor operator asks", newApp(), routeOpts(RouteSettings{ParentRefs: testGateway})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t, tc.app, tc.opts)
			assert.Nil(t, objs.UIHTTPRoute)
			assert.NotContains(t, sparkProps(t, objs), "spark.ui.proxyBase")
		})
	}
}

func TestUIHTTPRouteErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  v1beta2.HTTPRouteConfiguration
		want string
	}{
		{"no gateway anywhere", v1beta2.HTTPRouteConfiguration{}, "names no Gateway"},
		{"unknown placeholder", v1beta2.HTTPRouteConfiguration{ParentRefs: testGateway, PathPrefix: "/{{$user}}"}, "placeholder other than"},
		{"hostname too long once expanded", v1beta2.HTTPRouteConfiguration{ParentRefs: testGateway, Hostnames: []string{"{{$appId}}" + longLabel(250) + ".example.com"}}, "no more than 253"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := buildErr(t, newApp(withUIRoute(tc.cfg)), routeOpts(RouteSettings{}))
			assert.Contains(t, err.Error(), "spec.sparkUIOptions.httpRoute")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// An Ingress served under a path has told Spark its prefix first; the route does not move it.
func TestUIHTTPRouteKeepsIngressProxyBase(t *testing.T) {
	opts := routeOpts(RouteSettings{})
	opts.IngressURLFormat = "spark.example.com/ingress/{{$appName}}"
	objs := build(t, newApp(withUIRoute(v1beta2.HTTPRouteConfiguration{ParentRefs: testGateway})), opts)
	require.NotNil(t, objs.UIHTTPRoute)
	assert.Equal(t, "/ingress/pi", sparkProps(t, objs)["spark.ui.proxyBase"])
}

// The same attempt yields the same bytes: Metacontroller compares the answer with the route it
// recorded, and a difference would rewrite the route on every sync.
func TestRoutesByteStable(t *testing.T) {
	s := RouteSettings{HTTPRoutes: true, GRPCRoutes: true, ParentRefs: testGateway}
	app := newApp(withUIRoute(v1beta2.HTTPRouteConfiguration{Hostnames: []string{"a.example.com", "b.example.com"}, Annotations: map[string]string{"b": "2", "a": "1"}}))
	encode := func() []byte {
		objs := build(t, app, Options{EnableUIService: true, Routes: s})
		grpc, err := s.BuildGRPCRoute(RouteTarget{Name: "c", Namespace: "ns", AppName: "c"},
			&v1beta2.GRPCRouteConfiguration{Hostnames: []string{"{{$appName}}.example.com"}}, objs.UIService, 15002)
		require.NoError(t, err)
		b, err := json.Marshal([]any{metacontroller.Wire(objs.UIHTTPRoute), metacontroller.Wire(grpc)})
		require.NoError(t, err)
		return b
	}
	first := encode()
	assert.Equal(t, string(first), string(encode()))
	assert.NotContains(t, string(first), `"status"`)
}

func TestGRPCRoute(t *testing.T) {
	s := RouteSettings{GRPCRoutes: true, ParentRefs: []v1beta2.GatewayParentReference{{Name: "default-gw"}}}
	svc := build(t, newApp(), Options{EnableUIService: true}).UIService
	route, err := s.BuildGRPCRoute(RouteTarget{Name: "nb-grpc-route", Namespace: "ns", AppName: "nb", Labels: map[string]string{"x": "y"}},
		&v1beta2.GRPCRouteConfiguration{Hostnames: []string{"{{$appName}}.{{$appNamespace}}.connect.example.com"}}, svc, 15002)
	require.NoError(t, err)
	assert.Equal(t, "GRPCRoute", route.Kind)
	assert.Equal(t, GatewayAPIVersion, route.APIVersion)
	assert.Equal(t, map[string]string{"x": "y"}, route.Metadata.Labels)
	assert.Equal(t, []string{"nb.ns.connect.example.com"}, route.Spec.Hostnames)
	assert.Equal(t, []ParentReference{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "default-gw"}}, route.Spec.ParentRefs, "the operator's Gateway")
	assert.Equal(t, []GRPCRouteRule{{BackendRefs: []BackendRef{{Kind: "Service", Name: svc.Name, Port: 15002}}}}, route.Spec.Rules)

	_, err = RouteSettings{GRPCRoutes: true}.BuildGRPCRoute(RouteTarget{Name: "r"}, &v1beta2.GRPCRouteConfiguration{}, svc, 15002)
	assert.ErrorContains(t, err, "names no Gateway")
}

func longLabel(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a'
		if i%60 == 59 {
			b[i] = '.'
		}
	}
	return string(b)
}

func TestDriverPortRoutes(t *testing.T) {
	withPort := func(opt v1beta2.DriverIngressConfiguration) *v1beta2.SparkApplication {
		return newApp(func(a *v1beta2.SparkApplication) {
			opt.ServicePort, opt.ServicePortName = ptr.To[int32](15002), ptr.To("spark-connect")
			a.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{opt}
		})
	}
	both := RouteSettings{HTTPRoutes: true, GRPCRoutes: true, ParentRefs: testGateway}
	for _, tc := range []struct {
		name                  string
		opt                   v1beta2.DriverIngressConfiguration
		routes                RouteSettings
		ingresses, http, grpc int
	}{
		{"GRPCRoute instead of an Ingress", v1beta2.DriverIngressConfiguration{GRPCRoute: &v1beta2.GRPCRouteConfiguration{}}, both, 0, 0, 1},
		{"HTTPRoute beside an Ingress", v1beta2.DriverIngressConfiguration{IngressURLFormat: "{{$appName}}.example.com", HTTPRoute: &v1beta2.HTTPRouteConfiguration{}}, both, 1, 1, 0},
		{"routes not declared", v1beta2.DriverIngressConfiguration{GRPCRoute: &v1beta2.GRPCRouteConfiguration{}, HTTPRoute: &v1beta2.HTTPRouteConfiguration{}}, RouteSettings{ParentRefs: testGateway}, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t, withPort(tc.opt), Options{Routes: tc.routes})
			require.Len(t, objs.PortServices, 1, "the port's Service in every case")
			assert.Len(t, objs.PortIngresses, tc.ingresses)
			assert.Len(t, objs.PortHTTPRoutes, tc.http)
			assert.Len(t, objs.PortGRPCRoutes, tc.grpc)
			for _, r := range objs.PortGRPCRoutes {
				assert.Equal(t, "pi-grpc-15002", r.Metadata.Name)
				assert.Equal(t, []BackendRef{{Kind: "Service", Name: objs.PortServices[0].Name, Port: 15002}}, r.Spec.Rules[0].BackendRefs)
			}
			for _, r := range objs.PortHTTPRoutes {
				assert.Equal(t, "pi-http-15002", r.Metadata.Name)
			}
			assert.NotContains(t, sparkProps(t, objs), "spark.ui.proxyBase", "a port that is not the UI's sets no proxy base")
		})
	}
}
