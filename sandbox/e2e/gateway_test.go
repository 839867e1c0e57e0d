//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// gatewayAPICRDsEnv names the directory of the Gateway API CRDs the cluster serves; make
// gateway-api fetches them (sigs.k8s.io/gateway-api, pinned) and prints it, make e2e exports it.
const gatewayAPICRDsEnv = "SPARKHOOKS_GATEWAY_API_CRDS"

var (
	httpRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	grpcRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"}
)

// routedRegistration is metacontroller/<file> with the Gateway API routes declared, as the
// chart's gatewayAPI.enabled renders it.
func routedRegistration(t *testing.T, file string, resources ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "metacontroller", file))
	require.NoError(t, err)
	var children strings.Builder
	for _, r := range resources {
		children.WriteString("    - apiVersion: gateway.networking.k8s.io/v1\n      resource: " + r + "\n      updateStrategy:\n        method: InPlace\n")
	}
	out := strings.Replace(string(b), "  hooks:\n", children.String()+"  hooks:\n", 1)
	require.NotEqual(t, string(b), out)
	path := filepath.Join(t.TempDir(), file)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	return path
}

// A SparkApplication and a SparkConnect that ask for Gateway API routes get them from the
// controller on the real API server, which validates them against the Gateway API's own CRDs
// (schemas and CEL rules): the UI HTTPRoute with its path prefix and URLRewrite filter, a
// GRPCRoute to a driver port, the GRPCRoute to a SparkConnect server's port. The status names them; the routes are written once (a
// rewrite would show as a new generation) and go with their owner.
func TestGatewayRoutes(t *testing.T) {
	if !shared.gatewayAPI {
		t.Fatalf("%s is not set: make gateway-api fetches the Gateway API CRDs and prints their directory, make e2e exports it", gatewayAPICRDsEnv)
	}
	t.Parallel()
	var w *world
	if shared.metacontroller {
		w = newWorld(t, hooksURL, appController, connectController) // the chart's, with gatewayAPI.enabled
	} else {
		w = newWorld(t, hooksURL, routedRegistration(t, appController, "httproutes", "grpcroutes"),
			routedRegistration(t, connectController, "httproutes", "grpcroutes"))
	}
	ctx := context.Background()

	const app = "routed-pi"
	out, err := w.apply(scenarioApp(app, "10", `  sparkUIOptions:
    httpRoute:
      parentRefs:
        - {name: public, namespace: gateways, sectionName: https}
      hostnames: ["spark.example.com"]
  driverIngressOptions:
    - servicePort: 15002
      servicePortName: spark-connect
      grpcRoute:
        parentRefs:
          - {name: public, namespace: gateways, sectionName: grpc}
        hostnames: ["{{$appName}}.connect.example.com"]
`))
	require.NoError(t, err, out)
	a, pod := w.runAttempt(t, app, "")
	route := w.waitRoute(t, httpRoutes, app+"-ui-route")
	prefix := "/" + w.ns + "/" + app
	assert.Equal(t, []any{"spark.example.com"}, nestedSlice(route, "spec", "hostnames"))
	rule := firstOf(t, route, "spec", "rules")
	assert.Equal(t, prefix, harness.NestedString(firstOf(t, rule, "matches"), "path", "value"))
	filter := firstOf(t, rule, "filters")
	assert.Equal(t, "URLRewrite", harness.NestedString(filter, "type"))
	assert.Equal(t, "/", harness.NestedString(filter, "urlRewrite", "path", "replacePrefixMatch"))
	backend := firstOf(t, rule, "backendRefs")
	assert.Equal(t, app+"-ui-svc", harness.NestedString(backend, "name"))
	assert.Equal(t, "1", harness.NestedString(backend, "weight"), "defaulted by the HTTPRoute CRD: the real schema took the object")
	w.checkOwned(t, route, sparkApplications, app)
	portRoute := w.waitRoute(t, grpcRoutes, app+"-grpc-15002")
	assert.Equal(t, []any{app + ".connect.example.com"}, nestedSlice(portRoute, "spec", "hostnames"))
	assert.Equal(t, app+"-driver-15002", harness.NestedString(firstOf(t, firstOf(t, portRoute, "spec", "rules"), "backendRefs"), "name"))
	status, err := w.app(app)
	require.NoError(t, err)
	assert.Equal(t, app+"-ui-route", harness.NestedString(status, "status", "driverInfo", "webUIHTTPRouteName"))
	assert.Equal(t, "http://spark.example.com"+prefix, harness.NestedString(status, "status", "driverInfo", "webUIHTTPRouteAddress"))
	t.Logf("attempt %s, driver %s, route %s", a.submissionID, pod.Name, route.GetName())

	const connect = "routed-connect"
	out, err = w.apply(`
apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata:
  name: ` + connect + `
spec:
  sparkVersion: 4.0.1
  image: apache/spark:4.0.1
  server:
    cores: 1
    memory: 512m
    serviceAccount: spark
    grpcRoute:
      parentRefs:
        - {name: public, namespace: gateways, sectionName: grpc}
      hostnames: ["{{$appName}}.{{$appNamespace}}.connect.example.com"]
    httpRoute:
      parentRefs:
        - {name: public, namespace: gateways, sectionName: https}
  executor:
    instances: 1
    cores: 1
    memory: 512m
`)
	require.NoError(t, err, out)
	grpc := w.waitRoute(t, grpcRoutes, connect+"-grpc-route")
	assert.Equal(t, []any{connect + "." + w.ns + ".connect.example.com"}, nestedSlice(grpc, "spec", "hostnames"))
	grpcBackend := firstOf(t, firstOf(t, grpc, "spec", "rules"), "backendRefs")
	assert.Equal(t, connect+"-server", harness.NestedString(grpcBackend, "name"))
	assert.Equal(t, "15002", harness.NestedString(grpcBackend, "port"))
	w.checkOwned(t, grpc, sparkConnects, connect)
	connectUI := w.waitRoute(t, httpRoutes, connect+"-ui-route")
	sc := w.waitConnect(t, connect, func(sc *unstructured.Unstructured) bool {
		return harness.NestedString(sc, "status", "server", "grpcRouteName") != ""
	})
	assert.Equal(t, connect+"-grpc-route", harness.NestedString(sc, "status", "server", "grpcRouteName"))
	assert.Equal(t, connect+"-ui-route", harness.NestedString(sc, "status", "server", "webUIHTTPRouteName"))
	assert.Equal(t, "/"+w.ns+"/"+connect, harness.NestedString(sc, "status", "server", "webUIHTTPRouteAddress"))

	// Later syncs answer the same routes: the API server never saw them change.
	time.Sleep(metacontrollerSettle)
	for _, r := range []struct {
		gvr schema.GroupVersionResource
		obj *unstructured.Unstructured
	}{{httpRoutes, route}, {grpcRoutes, portRoute}, {grpcRoutes, grpc}, {httpRoutes, connectUI}} {
		now, err := w.dyn.Resource(r.gvr).Namespace(w.ns).Get(ctx, r.obj.GetName(), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, int64(1), now.GetGeneration(), "%s %s rewritten after creation", r.gvr.Resource, now.GetName())
	}

	for _, del := range []struct {
		kind, name string
		routes     map[string]schema.GroupVersionResource
	}{
		{"sparkapplications.sparkoperator.k8s.io", app, map[string]schema.GroupVersionResource{app + "-ui-route": httpRoutes, app + "-grpc-15002": grpcRoutes}},
		{"sparkconnect", connect, map[string]schema.GroupVersionResource{connect + "-grpc-route": grpcRoutes, connect + "-ui-route": httpRoutes}},
	} {
		out, err := w.kubectl("delete", del.kind, del.name, "--wait=true", "--timeout="+waitTimeout.String())
		require.NoError(t, err, out)
		for name, gvr := range del.routes {
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
				_, err := w.dyn.Resource(gvr).Namespace(w.ns).Get(ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
			require.NoError(t, err, "%s %s goes with %s %s", gvr.Resource, name, del.kind, del.name)
		}
	}
}

// waitRoute waits for a route of the world's namespace.
func (w *world) waitRoute(t *testing.T, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	t.Helper()
	return w.waitObject(t, gvr, name, func(*unstructured.Unstructured) bool { return true })
}

// checkOwned checks that obj is controlled by the parent of that resource and name, which
// is what deletes it with its parent.
func (w *world) checkOwned(t *testing.T, obj *unstructured.Unstructured, parents schema.GroupVersionResource, name string) {
	t.Helper()
	parent, err := w.dyn.Resource(parents).Namespace(w.ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	ref := metav1.GetControllerOf(obj)
	require.NotNil(t, ref, "%s has a controller owner reference", obj.GetName())
	assert.Equal(t, parent.GetUID(), ref.UID, "%s is controlled by %s %s", obj.GetName(), parents.Resource, name)
}

func nestedSlice(obj *unstructured.Unstructured, fields ...string) []any {
	v, _, _ := unstructured.NestedSlice(obj.Object, fields...)
	return v
}

// firstOf is the first object of a list field.
func firstOf(t *testing.T, obj *unstructured.Unstructured, fields ...string) *unstructured.Unstructured {
	t.Helper()
	list := nestedSlice(obj, fields...)
	require.NotEmpty(t, list, "%s of %v", strings.Join(fields, "."), obj.Object)
	m, ok := list[0].(map[string]any)
	require.True(t, ok, "%s[0] is not an object: %v", strings.Join(fields, "."), list[0])
	return &unstructured.Unstructured{Object: m}
}
