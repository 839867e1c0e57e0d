package sparkconnect

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// LabelConnectName marks the server Pod with its SparkConnect; the client Service selects on it,
// so that a SparkApplication of the same name is never behind it.
const LabelConnectName = "sparkoperator.k8s.io/connect-name"

// objects are the children of one server submission.
type objects struct {
	pod  *corev1.Pod
	rest []any // the ConfigMap, the Services and the routes, in a fixed order
	// driverService is the headless driver Service among rest, nil when the server has none.
	driverService *corev1.Service
	grpcRoute     *children.GRPCRoute
	httpRoute     *children.HTTPRoute
	podSets       []kueue.PodSet // when opts.PodSets asks for them
}

// build returns the children of a server submission. The server is a driver (see
// v1alpha1.ServerApplication); on top of what the driver builder gives it, it gets probes on
// the gRPC port, a container restart policy, and the client Service.
// place, when given, adds a queue admission's placement to the server's application.
func build(sc *v1alpha1.SparkConnect, sub children.Submission, opts children.Options, place func(*v1beta2.SparkApplicationSpec) error) (*objects, error) {
	app := v1alpha1.ServerApplication(sc)
	v1beta2.SetSparkApplicationDefaults(app)
	if place != nil {
		if err := place(&app.Spec); err != nil {
			return nil, err
		}
	}
	client := clientService(sc)
	out := &objects{}
	// Built before the server, whose Spark UI must know the path its route serves it under.
	if err := out.routes(sc, sub, opts.Routes, client, app); err != nil {
		return nil, err
	}
	// The client Service carries the UI port; no UI Service, Ingress or UI route of the
	// driver's own.
	opts.EnableUIService = false
	opts.IngressURLFormat = ""
	opts.PodLabels = map[string]string{LabelConnectName: sc.Name}
	built, err := children.Build(app, sub, opts)
	if err != nil {
		return nil, err
	}
	pod := built.DriverPod
	serverContainer(sc, pod)

	out.pod, out.podSets, out.driverService = pod, built.PodSets, built.DriverService
	for _, obj := range built.List() {
		if obj != any(pod) {
			out.rest = append(out.rest, obj)
		}
	}
	out.rest = append(out.rest, client)
	if out.grpcRoute != nil {
		out.rest = append(out.rest, out.grpcRoute)
	}
	if out.httpRoute != nil {
		out.rest = append(out.rest, out.httpRoute)
	}
	return out, nil
}

// routes builds the Gateway API routes the spec asks for and the registration declares: a
// GRPCRoute to the gRPC port and an HTTPRoute to the UI port of the client Service. A UI served
// under a path gets spark.ui.proxyBase in app, the server's application, unless it sets its own.
func (o *objects) routes(sc *v1alpha1.SparkConnect, sub children.Submission, routes children.RouteSettings, client *corev1.Service, app *v1beta2.SparkApplication) error {
	target := func(suffix string) children.RouteTarget {
		return children.RouteTarget{
			Name: sc.Name + suffix, Namespace: sc.Namespace, AppName: sc.Name, AppID: sub.AppID,
			Labels: map[string]string{sparkpod.LabelCreatedBy: "true", LabelConnectName: sc.Name},
		}
	}
	if cfg := sc.Spec.Server.GRPCRoute; cfg != nil && routes.GRPCRoutes {
		route, err := routes.BuildGRPCRoute(target("-grpc-route"), cfg, client, v1alpha1.GRPCPort)
		if err != nil {
			return fmt.Errorf("spec.server.grpcRoute: %w", err)
		}
		o.grpcRoute = route
	}
	if cfg := sc.Spec.Server.HTTPRoute; cfg != nil && routes.HTTPRoutes {
		route, path, err := routes.BuildHTTPRoute(target("-ui-route"), cfg, client, uiPort)
		if err != nil {
			return fmt.Errorf("spec.server.httpRoute: %w", err)
		}
		o.httpRoute = route
		if path != "/" {
			if app.Spec.SparkConf == nil {
				app.Spec.SparkConf = map[string]string{}
			}
			for k, v := range map[string]string{"spark.ui.proxyBase": path, "spark.ui.proxyRedirectUri": "/"} {
				if _, set := app.Spec.SparkConf[k]; !set {
					app.Spec.SparkConf[k] = v
				}
			}
		}
	}
	return nil
}

// list is every child, the Pod first.
func (o *objects) list() []any { return append([]any{o.pod}, o.rest...) }

// serverContainer readies the Spark container for a server: TCP probes on the gRPC port unless
// the template brings its own (Kubeflow's), the port named for port-forwards, and a restart
// policy that lets the kubelet restart a crashed server in place unless the template says
// otherwise.
func serverContainer(sc *v1alpha1.SparkConnect, pod *corev1.Pod) {
	var c *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == sparkpod.DriverContainerName {
			c = &pod.Spec.Containers[i]
		}
	}
	if c == nil {
		return
	}
	grpc := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(v1alpha1.GRPCPort)}}
	if c.StartupProbe == nil {
		c.StartupProbe = &corev1.Probe{ProbeHandler: grpc, InitialDelaySeconds: 5, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 30}
	}
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: grpc, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3}
	}
	hasPort := false
	for _, p := range c.Ports {
		hasPort = hasPort || p.ContainerPort == v1alpha1.GRPCPort
	}
	if !hasPort {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "spark-connect", ContainerPort: v1alpha1.GRPCPort, Protocol: corev1.ProtocolTCP})
	}
	if t := sc.Spec.Server.Template; t == nil || t.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	}
}

// uiPort is the Spark UI's port on the client Service.
const uiPort = 4040

// clientService is the Service clients reach the server at, sc://<name>.<namespace>.svc:15002:
// Kubeflow's four ports, on the user's base (spec.server.service: name, labels, annotations,
// type), selecting the server Pod.
func clientService(sc *v1alpha1.SparkConnect) *corev1.Service {
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{Kind: "Service", APIVersion: "v1"}}
	if base := sc.Spec.Server.Service; base != nil {
		svc.Labels = maps.Clone(base.Labels)
		svc.Annotations = maps.Clone(base.Annotations)
		svc.Spec = *base.Spec.DeepCopy()
	}
	svc.Name = v1alpha1.ServiceName(sc)
	svc.Namespace = sc.Namespace
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	svc.Labels[sparkpod.LabelCreatedBy] = "true"
	svc.Labels[LabelConnectName] = sc.Name
	if svc.Spec.Selector == nil {
		svc.Spec.Selector = map[string]string{}
	}
	svc.Spec.Selector[LabelConnectName] = sc.Name
	svc.Spec.Selector[sparkpod.LabelSparkRole] = sparkpod.RoleDriver
	port := func(name string, number int32, protocol string) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: number, TargetPort: intstr.FromInt32(number), Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To(protocol)}
	}
	svc.Spec.Ports = []corev1.ServicePort{
		port("driver-rpc", 7078, "tcp"),
		port("blockmanager", 7079, "tcp"),
		port("web-ui", uiPort, "http"),
		port("spark-connect-server", v1alpha1.GRPCPort, "grpc"),
	}
	return svc
}

// clientURL is what a notebook connects to.
func clientURL(sc *v1alpha1.SparkConnect) string {
	return fmt.Sprintf("sc://%s.%s.svc:%d", v1alpha1.ServiceName(sc), sc.Namespace, v1alpha1.GRPCPort)
}
