package apacheapp

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// extra is one child the spec asks for, with the field that names it.
type extra struct {
	at  *field.Path
	obj any
}

// extras are the children Apache's spec asks for beside those of the attempt: the ConfigMaps of
// configMapSpecs and the Service with its Ingress or route of every exposure list entry. Apache
// owns them by the driver Pod, so they live as long as the attempt's driver Pod does; here
// they are answered whenever the core answers that Pod. appID is the attempt's, which the
// Services select the driver by unless their spec selects otherwise. Everything comes from the
// spec and the attempt, so every sync of an attempt answers the same bytes.
func extras(app *sparkv1.SparkApplication, appID string) ([]extra, error) {
	var out []extra
	labels := func(own map[string]string) map[string]string {
		l := maps.Clone(own)
		if l == nil {
			l = map[string]string{}
		}
		l[sparkpod.LabelAppName] = app.Name
		l[sparkpod.LabelCreatedBy] = "true"
		return l
	}
	meta := func(m *metav1.ObjectMeta) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: m.Name, Namespace: app.Namespace, Labels: labels(m.Labels), Annotations: maps.Clone(m.Annotations)}
	}
	spec := field.NewPath("spec")
	for i, cm := range app.Spec.ConfigMapSpecs {
		out = append(out, extra{spec.Child("configMapSpecs").Index(i).Child("name"), &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: meta(&metav1.ObjectMeta{Name: cm.Name, Labels: cm.Labels, Annotations: cm.Annotations}),
			Data:       maps.Clone(cm.Data),
		}})
	}
	for _, e := range sparkv1.Exposures(&app.Spec) {
		at := spec.Child(e.List).Index(e.Index)
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
			ObjectMeta: meta(e.ServiceMetadata),
			Spec:       *e.ServiceSpec.DeepCopy(),
		}
		if len(svc.Spec.Selector) == 0 {
			svc.Spec.Selector = map[string]string{sparkpod.LabelAppSelector: appID, sparkpod.LabelSparkRole: sparkpod.RoleDriver}
		}
		front, err := frontOf(e, meta(e.FrontMetadata()), svc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		out = append(out, extra{at.Child("serviceMetadata", "name"), svc}, extra{at.Child(e.FrontField()+"Metadata", "name"), front})
	}
	return out, nil
}

// frontOf is the Ingress or route of an exposure entry, routing to the entry's Service: with
// no rules in its spec, Apache's one rule, everything to the Service's first port.
func frontOf(e sparkv1.Exposure, meta metav1.ObjectMeta, svc *corev1.Service) (any, error) {
	port := svc.Spec.Ports[0].Port
	raw := e.FrontSpec()
	if e.List == sparkv1.ListIngress {
		ing := &networkingv1.Ingress{TypeMeta: metav1.TypeMeta{Kind: "Ingress", APIVersion: "networking.k8s.io/v1"}, ObjectMeta: meta}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &ing.Spec); err != nil {
				return nil, err
			}
		}
		if len(ing.Spec.Rules) == 0 {
			pathType := networkingv1.PathTypeImplementationSpecific
			ing.Spec.Rules = []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: svc.Name, Port: networkingv1.ServiceBackendPort{Number: port}},
				}}},
			}}}}
		}
		return ing, nil
	}
	// A route's spec is passed on as written, as Apache does, but for the default rule: the
	// Gateway API's types are not imported (internal/children/gateway.go says why).
	spec := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &spec); err != nil {
			return nil, err
		}
	}
	kind := "GRPCRoute"
	backend := []any{map[string]any{"name": svc.Name, "port": port}}
	rule := map[string]any{"backendRefs": backend}
	if e.List == sparkv1.ListHTTPRoute {
		kind = "HTTPRoute"
		rule["matches"] = []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}}
	}
	if rules, _ := spec["rules"].([]any); len(rules) == 0 {
		spec["rules"] = []any{rule}
	}
	return map[string]any{"apiVersion": children.GatewayAPIVersion, "kind": kind, "metadata": meta, "spec": spec}, nil
}

// withExtras adds the extras to an answer that holds the attempt's driver Pod. It returns the
// spec's problems instead when the registration does not declare a kind the spec asks for, or
// an extra has the name of a child the attempt has of its own. Both are told on every sync,
// whether or not the driver is answered, so that the status they fail stays.
func withExtras(app *sparkv1.SparkApplication, resp *metacontroller.SyncResponse, appID string, opts children.Options) (field.ErrorList, error) {
	spec := &app.Spec
	if len(spec.ConfigMapSpecs) == 0 && len(sparkv1.Exposures(spec)) == 0 {
		return nil, nil
	}
	var errs field.ErrorList
	for _, r := range []struct {
		list     string
		n        int
		declared bool
	}{{sparkv1.ListHTTPRoute, len(spec.DriverHTTPRouteList), opts.Routes.HTTPRoutes}, {sparkv1.ListGRPCRoute, len(spec.DriverGRPCRouteList), opts.Routes.GRPCRoutes}} {
		if r.n > 0 && !r.declared {
			errs = append(errs, field.Forbidden(field.NewPath("spec", r.list),
				"the operator's registration does not declare Gateway API routes as children: install the chart with gatewayAPI.enabled=true (and the Gateway API's CRDs)"))
		}
	}
	if len(errs) > 0 {
		return errs, nil
	}
	objs, err := extras(app, appID)
	if err != nil {
		return nil, err
	}
	taken, err := ownNames(app, opts)
	if err != nil {
		return nil, err
	}
	for _, x := range objs {
		kind, name, err := metacontroller.Identity(x.obj)
		if err != nil {
			return nil, err
		}
		if taken[kind+"/"+name] {
			errs = append(errs, field.Invalid(x.at, name, fmt.Sprintf("sparkhooks names a %s of the attempt's own so: name yours otherwise", kind)))
		}
	}
	if len(errs) > 0 {
		return errs, nil
	}
	driver := sparkv1.DriverPodName(app)
	for _, c := range resp.Children {
		if kind, name, err := metacontroller.Identity(c); err != nil {
			return nil, err
		} else if kind == "Pod" && name == driver {
			for _, x := range objs {
				resp.Children = append(resp.Children, metacontroller.Wire(x.obj))
			}
			return nil, nil
		}
	}
	return nil, nil
}

// ownNames are the kinds and names of the children the core builds for an attempt of app,
// whatever the attempt: those the Apache operator names after the first attempt, and the
// operator's UI objects, named after the application.
func ownNames(app *sparkv1.SparkApplication, opts children.Options) (map[string]bool, error) {
	core := sparkv1.CoreApplication(app, v1beta2.ResourceRetainPolicyNever)
	if len(v1beta2.DefaultAndValidate(core)) > 0 {
		return nil, nil // the core reports the spec's problems itself
	}
	opts.AnsweredDriver = nil
	objs, err := children.Build(core, children.NewSubmission(app.UID, 0), opts)
	if err != nil {
		// A spec the core cannot build fails in the core, with the reason.
		return nil, nil
	}
	out := map[string]bool{}
	for _, obj := range objs.List() {
		kind, name, err := metacontroller.Identity(obj)
		if err != nil {
			return nil, err
		}
		out[kind+"/"+name] = true
	}
	return out, nil
}
