package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/mcstandin"
)

var compositeControllers = schema.GroupVersionResource{Group: "metacontroller.k8s.io", Version: "v1alpha1", Resource: "compositecontrollers"}

// installCompositeControllerCRD serves the CompositeController kind for the stand-in, where
// Metacontroller's chart (which brings its CRDs) is not installed. The schema keeps every field:
// the stand-in decodes the registrations strictly itself.
func installCompositeControllerCRD(ctx context.Context, cfg *restclient.Config) error {
	client, err := apiextensionsclientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name: "compositecontrollers.metacontroller.k8s.io",
			// *.k8s.io groups are protected; Metacontroller's own CRDs carry the same annotation.
			Annotations: map[string]string{"api-approved.kubernetes.io": "unapproved, request not yet submitted"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: compositeControllers.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "compositecontrollers", Singular: "compositecontroller", Kind: "CompositeController",
				ListKind: "CompositeControllerList", ShortNames: []string{"cc", "cctl"},
			},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: compositeControllers.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("installing the CompositeController CRD for the stand-in: %w", err)
	}
	return nil
}

// The stand-in's client limits: those chart/metacontroller-values.yaml gives Metacontroller
// (docs/install.md measures why). At client-go's defaults (5 requests/s, burst 10) the sandbox
// ran about 33 applications a minute whatever the hooks did.
const (
	standInQPS   = 200
	standInBurst = 400
)

// startStandIn runs one stand-in controller per CompositeController the chart installed. Its hook
// calls reach the Services the URLs name at their endpoints, as kube-apiserver reaches webhooks.
func (s *Stack) startStandIn(ctx, runCtx context.Context, o Options) error {
	cfg := restclient.CopyConfig(s.Admin)
	cfg.QPS, cfg.Burst = standInQPS, standInBurst
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	list, err := dyn.Resource(compositeControllers).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the CompositeControllers: %w", err)
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("the chart %s installed no CompositeController", o.Chart)
	}
	httpClient := ServiceHTTPClient(core)
	for _, item := range list.Items {
		data, err := json.Marshal(item.Object)
		if err != nil {
			return err
		}
		var cc mcstandin.CompositeController
		if err := json.Unmarshal(data, &cc); err != nil {
			return fmt.Errorf("decoding CompositeController %s: %w", item.GetName(), err)
		}
		ctl, err := mcstandin.New(cfg, &cc, mcstandin.Options{Logf: o.Logf, HTTPClient: httpClient})
		if err != nil {
			return err
		}
		s.Controllers[cc.Metadata.Name] = ctl
		s.running.Add(1)
		go func() {
			defer s.running.Done()
			if err := ctl.Run(runCtx); err != nil {
				o.Logf("stand-in controller %s: %v", cc.Metadata.Name, err)
			}
		}()
	}
	return nil
}

// HookBaseURL is where the chart's hooks are, as its CompositeControllers name them: the release
// sparkhooks in its namespace, on the Service's HTTP port (the chart's service.httpPort).
const HookBaseURL = "http://sparkhooks." + SparkhooksNamespace + ".svc:8080"

// ServiceHTTPClient is an HTTP client for this machine that reaches Services by their cluster
// names (HookBaseURL) at their ready endpoints.
func ServiceHTTPClient(client kubernetes.Interface) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: serviceDialer(client)}}
}

// serviceDialer resolves <service>.<namespace>.svc[.cluster.local] to a ready endpoint of the
// Service, with the port the Service maps the dialled port to, as cluster DNS and kube-proxy
// would; other addresses are dialled as they are.
func serviceDialer(client kubernetes.Interface) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var dialer net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		name, namespace, ok := serviceName(host)
		if !ok {
			return dialer.DialContext(ctx, network, addr)
		}
		port, err := strconv.Atoi(portText)
		if err != nil {
			return nil, err
		}
		target, err := resolveEndpoint(ctx, client, namespace, name, int32(port))
		if err != nil {
			return nil, err
		}
		return dialer.DialContext(ctx, network, target)
	}
}

func serviceName(host string) (name, namespace string, ok bool) {
	host = strings.TrimSuffix(strings.TrimSuffix(host, "."), ".cluster.local")
	parts := strings.Split(host, ".")
	if len(parts) != 3 || parts[2] != "svc" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// resolveEndpoint picks the first ready endpoint of the Service's port.
func resolveEndpoint(ctx context.Context, client kubernetes.Interface, namespace, name string, port int32) (string, error) {
	svc, err := client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	var servicePort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			servicePort = &svc.Spec.Ports[i]
		}
	}
	if servicePort == nil {
		return "", fmt.Errorf("service %s/%s has no port %d", namespace, name, port)
	}
	slices, err := client.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return "", err
	}
	for _, slice := range slices.Items {
		for _, p := range slice.Ports {
			if p.Port == nil || (p.Name != nil && *p.Name != servicePort.Name) {
				continue
			}
			for _, e := range slice.Endpoints {
				if e.Conditions.Ready != nil && !*e.Conditions.Ready || len(e.Addresses) == 0 {
					continue
				}
				return net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*p.Port))), nil
			}
		}
	}
	return "", fmt.Errorf("service %s/%s has no ready endpoint", namespace, name)
}
