package children

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

func TestUIService(t *testing.T) {
	objs := build(t, newApp(), Options{EnableUIService: true})
	svc := objs.UIService
	require.NotNil(t, svc)
	assert.Equal(t, "Service", svc.Kind)
	assert.Equal(t, "pi-ui-svc", svc.Name)
	assert.Equal(t, testNamespace, svc.Namespace)
	assert.Equal(t, map[string]string{sparkpod.LabelAppName: "pi", sparkpod.LabelCreatedBy: "true"}, svc.Labels)
	assert.Nil(t, svc.Annotations)
	assert.Equal(t, corev1.ServiceTypeClusterIP, svc.Spec.Type)
	assert.Equal(t, map[string]string{sparkpod.LabelAppSelector: testSub.AppID, sparkpod.LabelSparkRole: sparkpod.RoleDriver}, svc.Spec.Selector,
		"the attempt's driver only")
	assert.Equal(t, []corev1.ServicePort{{Name: "spark-driver-ui-port", Port: 4040, TargetPort: intstr.FromInt32(4040), Protocol: corev1.ProtocolTCP}}, svc.Spec.Ports)
	assert.Nil(t, objs.UIIngress)
	props := sparkProps(t, objs)
	assert.NotContains(t, props, "spark.ui.proxyBase")
	assert.NotContains(t, props, "spark.ui.proxyRedirectUri")

	assert.Nil(t, build(t, newApp(), Options{}).UIService, "off unless enabled")
}

func TestUIServiceOptions(t *testing.T) {
	objs := build(t, newApp(withConf("spark.ui.port", "4041"), func(a *v1beta2.SparkApplication) {
		a.Spec.SparkUIOptions = &v1beta2.SparkUIConfiguration{
			ServicePort:        ptr.To[int32](80),
			ServicePortName:    ptr.To("http"),
			ServiceType:        ptr.To(corev1.ServiceTypeNodePort),
			ServiceLabels:      map[string]string{"team": "a"},
			ServiceAnnotations: map[string]string{"note": "ui"},
		}
	}), Options{EnableUIService: true})
	svc := objs.UIService
	require.NotNil(t, svc)
	assert.Equal(t, corev1.ServiceTypeNodePort, svc.Spec.Type)
	assert.Equal(t, []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(4041), Protocol: corev1.ProtocolTCP}}, svc.Spec.Ports)
	assert.Equal(t, map[string]string{"team": "a", sparkpod.LabelAppName: "pi", sparkpod.LabelCreatedBy: "true"}, svc.Labels)
	assert.Equal(t, map[string]string{"note": "ui"}, svc.Annotations)
	assert.Contains(t, driverContainer(t, objs).Ports, corev1.ContainerPort{Name: "spark-ui", ContainerPort: 4041, Protocol: corev1.ProtocolTCP})
}

func TestUIDisabled(t *testing.T) {
	opts := Options{EnableUIService: true, IngressURLFormat: "{{$appName}}.example.com"}
	for _, value := range []string{"false", " FALSE "} {
		objs := build(t, newApp(withConf("spark.ui.enabled", value)), opts)
		assert.Nil(t, objs.UIService, value)
		assert.Nil(t, objs.UIIngress, value)
	}
	objs := build(t, newApp(), Options{IngressURLFormat: "{{$appName}}.example.com"})
	assert.Nil(t, objs.UIService)
	assert.Nil(t, objs.UIIngress, "the Ingress needs the Service")
}

func TestUIIngress(t *testing.T) {
	implementationSpecific := networkingv1.PathTypeImplementationSpecific
	tests := []struct {
		name          string
		app           *v1beta2.SparkApplication
		format        string
		wantHost      string
		wantPath      string
		wantAnn       map[string]string
		wantProxyBase string // "" for no spark.ui.proxyBase
		wantRedirect  string
	}{
		{
			name:          "path",
			app:           newApp(),
			format:        "spark.example.com/{{$appNamespace}}/{{$appName}}",
			wantHost:      "spark.example.com",
			wantPath:      "/team-a/pi(/|$)(.*)",
			wantAnn:       map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/$2"},
			wantProxyBase: "/team-a/pi",
			wantRedirect:  "/",
		},
		{
			name:          "path with scheme and trailing slash",
			app:           newApp(),
			format:        "https://spark.example.com/ui/{{$appName}}/",
			wantHost:      "spark.example.com",
			wantPath:      "/ui/pi(/|$)(.*)",
			wantAnn:       map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/$2"},
			wantProxyBase: "/ui/pi",
			wantRedirect:  "/",
		},
		{
			name:     "host only",
			app:      newApp(),
			format:   "{{$appName}}-{{$appNamespace}}.spark.example.com",
			wantHost: "pi-team-a.spark.example.com",
			wantPath: "/",
		},
		{
			name:     "host only with a root path",
			app:      newApp(),
			format:   "http://{{$appId}}.example.com/",
			wantHost: testSub.AppID + ".example.com",
			wantPath: "/",
		},
		{
			name: "the user's proxyBase and rewrite target are kept",
			app: newApp(withConf("spark.ui.proxyBase", "/custom", "spark.ui.proxyRedirectUri", "/r"), func(a *v1beta2.SparkApplication) {
				a.Spec.SparkUIOptions = &v1beta2.SparkUIConfiguration{IngressAnnotations: map[string]string{
					"nginx.ingress.kubernetes.io/rewrite-target": "/custom/$2",
					"cert-manager.io/cluster-issuer":             "letsencrypt",
				}}
			}),
			format:   "spark.example.com/{{$appName}}",
			wantHost: "spark.example.com",
			wantPath: "/pi(/|$)(.*)",
			wantAnn: map[string]string{
				"nginx.ingress.kubernetes.io/rewrite-target": "/custom/$2",
				"cert-manager.io/cluster-issuer":             "letsencrypt",
			},
			wantProxyBase: "/custom",
			wantRedirect:  "/r",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, Options{EnableUIService: true, IngressURLFormat: tt.format, IngressClassName: "nginx"})
			ing := objs.UIIngress
			require.NotNil(t, ing)
			assert.Equal(t, "Ingress", ing.Kind)
			assert.Equal(t, "networking.k8s.io/v1", ing.APIVersion)
			assert.Equal(t, "pi-ui-ingress", ing.Name)
			assert.Equal(t, testNamespace, ing.Namespace)
			assert.Equal(t, map[string]string{sparkpod.LabelAppName: "pi", sparkpod.LabelCreatedBy: "true"}, ing.Labels)
			assert.Equal(t, tt.wantAnn, ing.Annotations)
			assert.Equal(t, ptr.To("nginx"), ing.Spec.IngressClassName)
			assert.Equal(t, []networkingv1.IngressRule{{
				Host: tt.wantHost,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     tt.wantPath,
						PathType: &implementationSpecific,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: "pi-ui-svc",
							Port: networkingv1.ServiceBackendPort{Number: 4040},
						}},
					}},
				}},
			}}, ing.Spec.Rules)
			props := sparkProps(t, objs)
			if tt.wantProxyBase == "" {
				assert.NotContains(t, props, "spark.ui.proxyBase")
				assert.NotContains(t, props, "spark.ui.proxyRedirectUri")
			} else {
				assert.Equal(t, tt.wantProxyBase, props["spark.ui.proxyBase"])
				assert.Equal(t, tt.wantRedirect, props["spark.ui.proxyRedirectUri"])
			}
		})
	}

	// Without a class name, none; TLS is the application's.
	tls := []networkingv1.IngressTLS{{Hosts: []string{"spark.example.com"}, SecretName: "tls"}}
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.SparkUIOptions = &v1beta2.SparkUIConfiguration{IngressTLS: tls}
	}), Options{EnableUIService: true, IngressURLFormat: "spark.example.com"})
	assert.Nil(t, objs.UIIngress.Spec.IngressClassName)
	assert.Equal(t, tls, objs.UIIngress.Spec.TLS)
	assert.Nil(t, objs.UIIngress.Annotations)
}

func TestUIIngressBadFormat(t *testing.T) {
	tests := []struct {
		name, format string
		wantIn       []string
	}{
		{"unknown placeholder", "{{$appNam}}.example.com", []string{"--ingress-url-format", "{{$appNam}}", "placeholder"}},
		{"go template syntax", "{{ .Name }}.example.com", []string{"--ingress-url-format", "placeholder"}},
		{"port", "spark.example.com:8080/{{$appName}}", []string{"--ingress-url-format", "port"}},
		{"no host", "http:///{{$appName}}", []string{"--ingress-url-format", "no host"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			be := buildErr(t, newApp(), Options{EnableUIService: true, IngressURLFormat: tt.format})
			for _, s := range tt.wantIn {
				assert.Contains(t, be.Error(), s)
			}
		})
	}
}

func TestDriverIngressOptions(t *testing.T) {
	app := newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{
			{
				ServicePort:        ptr.To[int32](8888),
				ServicePortName:    ptr.To("connect"),
				ServiceType:        ptr.To(corev1.ServiceTypeLoadBalancer),
				ServiceLabels:      map[string]string{"l": "1"},
				ServiceAnnotations: map[string]string{"a": "1"},
				IngressURLFormat:   "{{$appName}}-connect.example.com",
			},
			{
				ServicePort:        ptr.To[int32](9999),
				ServicePortName:    ptr.To("jupyter"),
				IngressURLFormat:   "example.com/{{$appNamespace}}/{{$appName}}/jupyter",
				IngressAnnotations: map[string]string{"x": "y"},
			},
		}
	})
	objs := build(t, app, Options{IngressClassName: "nginx"})
	require.Len(t, objs.PortServices, 2)
	require.Len(t, objs.PortIngresses, 2)
	assert.Nil(t, objs.UIService)

	svc := objs.PortServices[0]
	assert.Equal(t, "pi-driver-8888", svc.Name)
	assert.Equal(t, testNamespace, svc.Namespace)
	assert.Equal(t, corev1.ServiceTypeLoadBalancer, svc.Spec.Type)
	assert.Equal(t, map[string]string{"l": "1", sparkpod.LabelAppName: "pi", sparkpod.LabelCreatedBy: "true"}, svc.Labels)
	assert.Equal(t, map[string]string{"a": "1"}, svc.Annotations)
	assert.Equal(t, map[string]string{sparkpod.LabelAppSelector: testSub.AppID, sparkpod.LabelSparkRole: sparkpod.RoleDriver}, svc.Spec.Selector)
	assert.Equal(t, []corev1.ServicePort{{Name: "connect", Port: 8888, TargetPort: intstr.FromInt32(8888), Protocol: corev1.ProtocolTCP}}, svc.Spec.Ports)
	assert.Equal(t, corev1.ServiceTypeClusterIP, objs.PortServices[1].Spec.Type)
	assert.Equal(t, "pi-driver-9999", objs.PortServices[1].Name)

	ing := objs.PortIngresses[0]
	assert.Equal(t, "pi-ing-8888", ing.Name)
	assert.Equal(t, ptr.To("nginx"), ing.Spec.IngressClassName)
	require.Len(t, ing.Spec.Rules, 1)
	assert.Equal(t, "pi-connect.example.com", ing.Spec.Rules[0].Host)
	path := ing.Spec.Rules[0].HTTP.Paths[0]
	assert.Equal(t, "/", path.Path)
	assert.Equal(t, &networkingv1.IngressServiceBackend{Name: "pi-driver-8888", Port: networkingv1.ServiceBackendPort{Number: 8888}}, path.Backend.Service)
	assert.Nil(t, ing.Annotations)

	ing = objs.PortIngresses[1]
	assert.Equal(t, "pi-ing-9999", ing.Name)
	assert.Equal(t, "example.com", ing.Spec.Rules[0].Host)
	assert.Equal(t, "/team-a/pi/jupyter(/|$)(.*)", ing.Spec.Rules[0].HTTP.Paths[0].Path)
	assert.Equal(t, map[string]string{"x": "y", "nginx.ingress.kubernetes.io/rewrite-target": "/$2"}, ing.Annotations)
	assert.Equal(t, "pi-driver-9999", ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)

	// Only the UI Ingress sets Spark's proxy base.
	props := sparkProps(t, objs)
	assert.NotContains(t, props, "spark.ui.proxyBase")

	// The Spark container need not declare the port: a Service reaches any port of the Pod.
	be := buildErr(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{
			ServicePort: ptr.To[int32](8888), ServicePortName: ptr.To("c"), IngressURLFormat: "{{$name}}.example.com",
		}}
	}), Options{})
	assert.Contains(t, be.Error(), "spec.driverIngressOptions[0].ingressURLFormat")
}

func TestDriverIngressOptionsLongName(t *testing.T) {
	objs := build(t, newApp(withName(name63), func(a *v1beta2.SparkApplication) {
		a.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{
			ServicePort: ptr.To[int32](8888), ServicePortName: ptr.To("c"), IngressURLFormat: "{{$appName}}.example.com",
		}}
	}), Options{EnableUIService: true, IngressURLFormat: "ui.example.com/{{$appName}}"})
	for _, svc := range []*corev1.Service{objs.PortServices[0], objs.UIService} {
		assert.LessOrEqual(t, len(svc.Name), maxLabelName, svc.Name)
	}
	assert.Equal(t, objs.PortServices[0].Name, objs.PortIngresses[0].Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
	assert.Equal(t, objs.UIService.Name, objs.UIIngress.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
	assert.Equal(t, name63+".example.com", objs.PortIngresses[0].Spec.Rules[0].Host)
}

// The operator's Ingress annotations and TLS are defaults: an application's own non-empty value
// replaces the default whole, for the UI Ingress and each driverIngressOptions entry alike.
func TestIngressDefaults(t *testing.T) {
	defTLS := []networkingv1.IngressTLS{{Hosts: []string{"*.example.com"}, SecretName: "default-tls"}}
	ownTLS := []networkingv1.IngressTLS{{Hosts: []string{"pi.example.com"}, SecretName: "own-tls"}}
	opts := Options{
		EnableUIService:    true,
		IngressURLFormat:   "ui.example.com/{{$appName}}",
		IngressAnnotations: map[string]string{"cert-manager.io/cluster-issuer": "corp"},
		IngressTLS:         defTLS,
	}
	port := func(a *v1beta2.SparkApplication, ann map[string]string, tls []networkingv1.IngressTLS) {
		a.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{
			ServicePort: ptr.To[int32](8888), ServicePortName: ptr.To("connect"), IngressURLFormat: "{{$appName}}.example.com",
			IngressAnnotations: ann, IngressTLS: tls,
		}}
	}
	tests := []struct {
		name        string
		app         *v1beta2.SparkApplication
		wantUIAnn   map[string]string
		wantUITLS   []networkingv1.IngressTLS
		wantPortAnn map[string]string
		wantPortTLS []networkingv1.IngressTLS
	}{
		{"defaults", newApp(func(a *v1beta2.SparkApplication) { port(a, nil, nil) }),
			map[string]string{"cert-manager.io/cluster-issuer": "corp", nginxRewriteTarget: "/$2"}, defTLS,
			map[string]string{"cert-manager.io/cluster-issuer": "corp"}, defTLS},
		{"the application's own, whole", newApp(func(a *v1beta2.SparkApplication) {
			a.Spec.SparkUIOptions = &v1beta2.SparkUIConfiguration{IngressAnnotations: map[string]string{"own": "1"}, IngressTLS: ownTLS}
			port(a, map[string]string{"port": "1"}, ownTLS)
		}),
			map[string]string{"own": "1", nginxRewriteTarget: "/$2"}, ownTLS,
			map[string]string{"port": "1"}, ownTLS},
		{"empty values count as unset", newApp(func(a *v1beta2.SparkApplication) {
			a.Spec.SparkUIOptions = &v1beta2.SparkUIConfiguration{IngressAnnotations: map[string]string{}, IngressTLS: []networkingv1.IngressTLS{}}
			port(a, map[string]string{}, nil)
		}),
			map[string]string{"cert-manager.io/cluster-issuer": "corp", nginxRewriteTarget: "/$2"}, defTLS,
			map[string]string{"cert-manager.io/cluster-issuer": "corp"}, defTLS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, opts)
			require.NotNil(t, objs.UIIngress)
			assert.Equal(t, tt.wantUIAnn, objs.UIIngress.Annotations)
			assert.Equal(t, tt.wantUITLS, objs.UIIngress.Spec.TLS)
			require.Len(t, objs.PortIngresses, 1)
			assert.Equal(t, tt.wantPortAnn, objs.PortIngresses[0].Annotations)
			assert.Equal(t, tt.wantPortTLS, objs.PortIngresses[0].Spec.TLS)
		})
	}
	assert.Equal(t, map[string]string{"cert-manager.io/cluster-issuer": "corp"}, opts.IngressAnnotations, "the shared defaults are never changed")
}
