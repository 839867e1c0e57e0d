package children

import (
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

const (
	defaultUIPortName    = "spark-driver-ui-port"
	nginxRewriteTarget   = "nginx.ingress.kubernetes.io/rewrite-target"
	ingressPathRegexTail = "(/|$)(.*)"
)

// uiObjects builds the UI Service and Ingress, and the Service and Ingress of every
// spec.driverIngressOptions entry, as the Kubeflow operator does. It runs before the properties
// are final because a UI served under a path needs spark.ui.proxyBase.
func (b *builder) uiObjects() error {
	if b.opts.EnableUIService && b.uiEnabled() {
		ui := b.spec.SparkUIOptions
		if ui == nil {
			ui = &v1beta2.SparkUIConfiguration{}
		}
		port := b.uiPort()
		if ui.ServicePort != nil {
			port = *ui.ServicePort
		}
		portName := defaultUIPortName
		if ui.ServicePortName != nil && *ui.ServicePortName != "" {
			portName = *ui.ServicePortName
		}
		b.objs.UIService = b.exposingService(boundedName(b.app.Name, "-ui-svc", maxLabelName),
			portName, port, b.uiPort(), ui.ServiceType, ui.ServiceLabels, ui.ServiceAnnotations)

		if b.opts.IngressURLFormat != "" {
			ing, path, err := b.ingress(boundedName(b.app.Name, "-ui-ingress", maxSubdomainName),
				b.opts.IngressURLFormat, b.objs.UIService, ui.IngressAnnotations, ui.IngressTLS)
			if err != nil {
				return buildErrorf("--ingress-url-format: %v", err)
			}
			b.objs.UIIngress = ing
			if path != "" {
				// Spark then writes its links under the path the Ingress serves it at.
				b.conf.setIfAbsent("spark.ui.proxyBase", path)
				b.conf.setIfAbsent("spark.ui.proxyRedirectUri", "/")
			}
		}
		if err := b.uiHTTPRoute(ui); err != nil {
			return err
		}
	}
	for i, opt := range b.spec.DriverIngressOptions {
		if opt.ServicePort == nil || opt.ServicePortName == nil {
			return buildErrorf("spec.driverIngressOptions[%d]: servicePort and servicePortName are required", i)
		}
		port := *opt.ServicePort
		svc := b.exposingService(boundedName(b.app.Name, fmt.Sprintf("-driver-%d", port), maxLabelName),
			*opt.ServicePortName, port, port, opt.ServiceType, opt.ServiceLabels, opt.ServiceAnnotations)
		b.objs.PortServices = append(b.objs.PortServices, svc)
		if opt.IngressURLFormat != "" {
			ing, _, err := b.ingress(boundedName(b.app.Name, fmt.Sprintf("-ing-%d", port), maxSubdomainName),
				opt.IngressURLFormat, svc, opt.IngressAnnotations, opt.IngressTLS)
			if err != nil {
				return buildErrorf("spec.driverIngressOptions[%d].ingressURLFormat: %v", i, err)
			}
			b.objs.PortIngresses = append(b.objs.PortIngresses, ing)
		}
		if err := b.portRoutes(i, opt, svc); err != nil {
			return err
		}
	}
	return nil
}

// portRoutes builds the Gateway API routes of one spec.driverIngressOptions entry, those the
// registration declares.
func (b *builder) portRoutes(i int, opt v1beta2.DriverIngressConfiguration, svc *corev1.Service) error {
	routes := b.opts.Routes
	port := *opt.ServicePort
	target := func(suffix string) RouteTarget {
		return RouteTarget{
			Name:      boundedName(b.app.Name, fmt.Sprintf("-%s-%d", suffix, port), maxSubdomainName),
			Namespace: b.namespace(),
			AppName:   b.app.Name,
			AppID:     b.sub.AppID,
			Labels:    map[string]string{sparkpod.LabelAppName: b.app.Name, sparkpod.LabelCreatedBy: "true"},
		}
	}
	if opt.HTTPRoute != nil && routes.HTTPRoutes {
		route, _, err := routes.BuildHTTPRoute(target("http"), opt.HTTPRoute, svc, port)
		if err != nil {
			return buildErrorf("spec.driverIngressOptions[%d].httpRoute: %v", i, err)
		}
		b.objs.PortHTTPRoutes = append(b.objs.PortHTTPRoutes, route)
	}
	if opt.GRPCRoute != nil && routes.GRPCRoutes {
		route, err := routes.BuildGRPCRoute(target("grpc"), opt.GRPCRoute, svc, port)
		if err != nil {
			return buildErrorf("spec.driverIngressOptions[%d].grpcRoute: %v", i, err)
		}
		b.objs.PortGRPCRoutes = append(b.objs.PortGRPCRoutes, route)
	}
	return nil
}

// uiHTTPRoute builds the Gateway API route to the UI Service when the registration declares
// HTTPRoutes and the application (spec.sparkUIOptions.httpRoute) or the operator
// (--ui-http-route) asks for one.
func (b *builder) uiHTTPRoute(ui *v1beta2.SparkUIConfiguration) error {
	routes := b.opts.Routes
	if !routes.HTTPRoutes {
		return nil
	}
	cfg := ui.HTTPRoute
	if cfg == nil {
		if !routes.UIHTTPRoute {
			return nil
		}
		cfg = &v1beta2.HTTPRouteConfiguration{}
	}
	svc := b.objs.UIService
	route, path, err := routes.BuildHTTPRoute(RouteTarget{
		Name:      boundedName(b.app.Name, "-ui-route", maxSubdomainName),
		Namespace: b.namespace(),
		AppName:   b.app.Name,
		AppID:     b.sub.AppID,
		Labels:    map[string]string{sparkpod.LabelAppName: b.app.Name, sparkpod.LabelCreatedBy: "true"},
	}, cfg, svc, svc.Spec.Ports[0].Port)
	if err != nil {
		return buildErrorf("spec.sparkUIOptions.httpRoute: %v", err)
	}
	b.objs.UIHTTPRoute = route
	if path != "/" {
		// As for the Ingress: Spark writes its links under the prefix the route strips. An
		// Ingress served under another path has set these first, and keeps them.
		b.conf.setIfAbsent("spark.ui.proxyBase", path)
		b.conf.setIfAbsent("spark.ui.proxyRedirectUri", "/")
	}
	return nil
}

// exposingService is a Service in front of one port of the current attempt's driver.
func (b *builder) exposingService(name, portName string, port, targetPort int32, typ *corev1.ServiceType,
	labels, annotations map[string]string) *corev1.Service {
	svcType := corev1.ServiceTypeClusterIP
	if typ != nil && *typ != "" {
		svcType = *typ
	}
	l := make(map[string]string, len(labels)+2)
	for k, v := range labels {
		l[k] = v
	}
	l[sparkpod.LabelAppName] = b.app.Name
	l[sparkpod.LabelCreatedBy] = "true"
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.namespace(), Labels: l, Annotations: copyMap(annotations)},
		Spec: corev1.ServiceSpec{
			Type: svcType,
			// The attempt's id, not the application's name: a finished attempt's driver that is
			// kept for its logs must not receive the new attempt's traffic.
			Selector: map[string]string{sparkpod.LabelAppSelector: b.sub.AppID, sparkpod.LabelSparkRole: sparkpod.RoleDriver},
			Ports: []corev1.ServicePort{{
				Name:       portName,
				Port:       port,
				TargetPort: intstr.FromInt32(targetPort),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// ingress routes the URL made from format to the first port of svc. It returns the URL's path
// when the UI is served under one.
func (b *builder) ingress(name, format string, svc *corev1.Service, annotations map[string]string,
	tls []networkingv1.IngressTLS) (*networkingv1.Ingress, string, error) {
	u, err := b.ingressURL(format)
	if err != nil {
		return nil, "", err
	}
	if len(annotations) == 0 {
		annotations = b.opts.IngressAnnotations
	}
	if len(tls) == 0 {
		tls = b.opts.IngressTLS
	}
	// A copy: the rewrite target below must not reach the spec or the shared defaults.
	ann := copyMap(annotations)
	path := strings.TrimSuffix(u.Path, "/")
	rulePath := "/"
	if path != "" {
		// The UI's own links start at /; nginx strips the prefix on the way in.
		rulePath = path + ingressPathRegexTail
		if ann == nil {
			ann = map[string]string{}
		}
		if _, ok := ann[nginxRewriteTarget]; !ok {
			ann[nginxRewriteTarget] = "/$2"
		}
	}
	pathType := networkingv1.PathTypeImplementationSpecific
	ing := &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{Kind: "Ingress", APIVersion: "networking.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.namespace(), Labels: map[string]string{sparkpod.LabelAppName: b.app.Name, sparkpod.LabelCreatedBy: "true"}, Annotations: ann},
		Spec: networkingv1.IngressSpec{
			TLS: tls,
			Rules: []networkingv1.IngressRule{{
				Host: u.Hostname(),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     rulePath,
						PathType: &pathType,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: svc.Name,
							Port: networkingv1.ServiceBackendPort{Number: svc.Spec.Ports[0].Port},
						}},
					}},
				}},
			}},
		},
	}
	if b.opts.IngressClassName != "" {
		class := b.opts.IngressClassName
		ing.Spec.IngressClassName = &class
	}
	return ing, path, nil
}

// ingressURL expands Kubeflow's URL placeholders; a URL without a scheme is taken as http.
func (b *builder) ingressURL(format string) (*url.URL, error) {
	s := strings.NewReplacer(
		"{{$appName}}", b.app.Name,
		"{{$appNamespace}}", b.namespace(),
		"{{$appId}}", b.sub.AppID,
	).Replace(format)
	if strings.Contains(s, "{{") {
		return nil, fmt.Errorf("%q has a placeholder other than {{$appName}}, {{$appNamespace}} and {{$appId}}", format)
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", s, err)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	if u.Port() != "" {
		return nil, fmt.Errorf("%q names a port; an Ingress host cannot carry one", s)
	}
	return u, nil
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
