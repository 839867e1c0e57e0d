package sparkctl

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	restclient "k8s.io/client-go/rest"
)

// serviceRef is an HTTP port of a Service, which the API server's service proxy reaches: the
// user needs only services/proxy in its namespace, not a route to the cluster's network.
type serviceRef struct {
	Namespace, Name string
	// Port is the Service's port, by number or name.
	Port string
}

func (s serviceRef) String() string {
	return fmt.Sprintf("service %s/%s:%s", s.Namespace, s.Name, s.Port)
}

// ProxyFunc sends GET path?query to a Service through the API server's service proxy and returns
// the answer's body; an answer other than 2xx is an error (an apierrors.StatusError, so callers can
// tell NotFound and Forbidden apart).
type ProxyFunc func(ctx context.Context, svc serviceRef, path string, query url.Values) ([]byte, error)

// serviceProxyPath is the API server's path that proxies to path on the Service's port:
// /api/v1/namespaces/NS/services/NAME:PORT/proxy/PATH. Namespaces, Service names and Spark's
// application IDs need no escaping: they are DNS labels and [a-z0-9-_].
func serviceProxyPath(svc serviceRef, path string) string {
	name := svc.Name
	if svc.Port != "" {
		name += ":" + svc.Port
	}
	return "/api/v1/namespaces/" + svc.Namespace + "/services/" + name + "/proxy/" + strings.TrimLeft(path, "/")
}

// restProxy reaches Services through the API server with a plain REST client.
func restProxy(cfg *restclient.Config) (ProxyFunc, error) {
	c := restclient.CopyConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	// The scheme knows metav1.Status, so that the API server's refusals (Forbidden, no
	// endpoints) come back with their messages.
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := restclient.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, svc serviceRef, path string, query url.Values) ([]byte, error) {
		req := client.Get().AbsPath(serviceProxyPath(svc, path))
		for k, vs := range query {
			for _, v := range vs {
				req = req.Param(k, v)
			}
		}
		// Error, not Raw's error: it reads the API server's Status from the body.
		res := req.Do(ctx)
		if err := res.Error(); err != nil {
			return nil, err
		}
		return res.Raw()
	}, nil
}
