package children

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
)

// Options are the operator-wide settings of the objects built for every application.
type Options struct {
	// EnableUIService creates a Service for every application's Spark UI (Kubeflow's
	// --enable-ui-service).
	EnableUIService bool
	// IngressURLFormat, when set, creates a UI Ingress for every application at this URL, with
	// {{$appName}}, {{$appNamespace}} and {{$appId}} replaced (Kubeflow's --ingress-url-format).
	IngressURLFormat string
	// IngressClassName is the ingressClassName of every Ingress built.
	IngressClassName string
	// IngressAnnotations and IngressTLS are the defaults of every Ingress built (Kubeflow's
	// --ingress-annotations and --ingress-tls). A spec that sets its own non-empty annotations
	// or TLS replaces the default whole, as in Kubeflow: merging would leave a default
	// annotation the user cannot remove.
	IngressAnnotations map[string]string
	IngressTLS         []networkingv1.IngressTLS
	// Routes are the Gateway API settings: whether the registration declares HTTPRoutes and
	// GRPCRoutes, and the defaults of the routes built.
	Routes RouteSettings
	// VolcanoPodGroups says that Volcano PodGroups may be built: the controller registration
	// declares them as a child type (Metacontroller rejects a child of an undeclared type).
	VolcanoPodGroups bool
	// KubeSchedulerNames are the kube-scheduler profiles that gang-schedule with the
	// scheduler-plugins coscheduling plugin (Kubeflow's --kube-scheduler-names): an application
	// whose batch scheduler is one of them gets a scheduling.x-k8s.io PodGroup and the pod-group
	// label on its driver and executors.
	KubeSchedulerNames []string
	// SchedulerPluginsPodGroups says that scheduler-plugins PodGroups may be built: the
	// registration declares them as a child type.
	SchedulerPluginsPodGroups bool
	// PodLabels are labels the caller, not the user, puts on the driver and executor Pods (the
	// SparkConnect hook's connect-name, which selects a server's executors); unlike the spec's
	// labels they may be in the operator's own domain.
	PodLabels map[string]string
	// DefaultBatchScheduler is the batch scheduler of an application whose spec names none
	// (Kubeflow's --default-batch-scheduler): volcano, yunikorn or one of KubeSchedulerNames.
	DefaultBatchScheduler string
	// DriverPDBs says that driver PodDisruptionBudgets may be built: the controller
	// registration declares them as a child type, which is the operator's switch for them
	// (Kubeflow's --enable-driver-pdb).
	DriverPDBs bool
	// DefaultServiceAccount is the driver's service account when neither the spec nor the
	// driver template names one (Kubeflow's --default-service-account). Executors then take it
	// too, as Spark gives executors without an account of their own the driver's.
	DefaultServiceAccount string
	// NetworkPolicies says that Spark's executor NetworkPolicy (Spark 4.2 and later) may be
	// built: the controller registration declares NetworkPolicies as a child type.
	NetworkPolicies bool
	// PodSets asks for the pod sets a queue (Kueue) admits the application by: Objects.PodSets.
	PodSets bool
	// EventLog is the event log of applications that choose none (EventLog.Validate).
	EventLog EventLog
	// AnsweredDriver returns the driver Pod of the named submission as it was answered before,
	// nil when there is none. Build answers that Pod again in place of one it would build (a Pod's
	// containers cannot change once it exists) and spares building it, which is most of the
	// work of a running application's sync. PodSets still builds it, to read its spec.
	AnsweredDriver func(name, submissionID string) any `json:"-"`
	// Apache names what Spark names after the application as the Apache operator does, for its
	// SparkApplication (internal/apacheapp): Spark's default application name "spark" unless
	// spark.app.name is set (then the application's name), and the properties ConfigMap
	// <name>-0-spark-drv-conf-map, the first attempt's, as the driver Pod's name is, and the
	// driver Service <name>-<n>-driver-svc of the attempt that is its n-th retry.
	Apache bool
}

// Objects are the children of one attempt. Optional ones are nil or empty.
type Objects struct {
	// PodGroup is the Volcano or scheduler-plugins PodGroup of a gang-scheduled application.
	PodGroup *unstructured.Unstructured
	// DriverPod is the driver Pod built for the attempt; nil when Options.AnsweredDriver gave
	// the one answered before, which is then AnsweredDriverPod.
	DriverPod         *corev1.Pod
	AnsweredDriverPod any
	DriverPodName     string
	DriverPDB         *policyv1.PodDisruptionBudget
	NetworkPolicy     *networkingv1.NetworkPolicy // Spark 4.2's: only the application reaches its executors
	ConfigMap         *corev1.ConfigMap           // spark.properties and the executor pod template
	MetricsConfig     *corev1.ConfigMap           // Prometheus metrics.properties and JMX exporter rules
	// DriverService is headless; executors reach the driver through it. Nil when the
	// application excludes Spark's DriverServiceFeatureStep (4.1+).
	DriverService *corev1.Service
	UIService     *corev1.Service
	UIIngress     *networkingv1.Ingress
	UIHTTPRoute   *HTTPRoute // the Gateway API route to the UI Service
	// PortServices, PortIngresses and the routes expose spec.driverIngressOptions, in spec order.
	PortServices   []*corev1.Service
	PortIngresses  []*networkingv1.Ingress
	PortHTTPRoutes []*HTTPRoute
	PortGRPCRoutes []*GRPCRoute
	// PodSets are the driver and executor pod sets, with the resources and scheduling fields of
	// the pods Spark will create, when Options.PodSets asks for them. They are not children.
	PodSets []kueue.PodSet
	// DefaultEventLog says that the attempt writes its event log to Options.EventLog.Dir, where
	// the operator's History Server reads it. It is not a child.
	DefaultEventLog bool
}

// List returns the objects in a fixed order, as Metacontroller children.
func (o *Objects) List() []any {
	out := make([]any, 0, 10+len(o.PortServices)+len(o.PortIngresses)+len(o.PortHTTPRoutes)+len(o.PortGRPCRoutes))
	if o.PodGroup != nil {
		out = append(out, o.PodGroup)
	}
	out = append(out, o.Driver())
	if o.DriverPDB != nil {
		out = append(out, o.DriverPDB)
	}
	if o.NetworkPolicy != nil {
		out = append(out, o.NetworkPolicy)
	}
	out = append(out, o.ConfigMap)
	if o.MetricsConfig != nil {
		out = append(out, o.MetricsConfig)
	}
	if o.DriverService != nil {
		out = append(out, o.DriverService)
	}
	if o.UIService != nil {
		out = append(out, o.UIService)
	}
	for _, svc := range o.PortServices {
		out = append(out, svc)
	}
	if o.UIIngress != nil {
		out = append(out, o.UIIngress)
	}
	for _, ing := range o.PortIngresses {
		out = append(out, ing)
	}
	if o.UIHTTPRoute != nil {
		out = append(out, o.UIHTTPRoute)
	}
	for _, r := range o.PortHTTPRoutes {
		out = append(out, r)
	}
	for _, r := range o.PortGRPCRoutes {
		out = append(out, r)
	}
	return out
}

// Driver is the attempt's driver Pod: the one answered before, or else the one built.
func (o *Objects) Driver() any {
	if o.AnsweredDriverPod != nil {
		return o.AnsweredDriverPod
	}
	return o.DriverPod
}

// BuildError is a spec the builder cannot turn into objects although it passed validation, for
// example one whose ConfigMap would exceed the API server's size limit.
type BuildError struct{ msg string }

func (e *BuildError) Error() string { return e.msg }

func buildErrorf(format string, args ...any) error {
	return &BuildError{msg: fmt.Sprintf(format, args...)}
}

// Build returns the objects of one attempt of app, which must be defaulted and valid.
func Build(app *v1beta2.SparkApplication, sub Submission, opts Options) (*Objects, error) {
	if app == nil {
		return nil, errors.New("build driver objects: no SparkApplication")
	}
	b := newBuilder(app, sub, opts)
	// The order matters: the UI and monitoring add properties, the ConfigMap's name is its
	// content's hash, and the driver Pod mounts the ConfigMap by name.
	if err := b.sparkProperties(); err != nil {
		return nil, wrapBuildError("spark properties", err)
	}
	if err := b.uiObjects(); err != nil {
		return nil, wrapBuildError("ui", err)
	}
	b.monitoring()
	if err := b.yunikorn(); err != nil {
		return nil, wrapBuildError("yunikorn", err)
	}
	if err := b.volcano(); err != nil {
		return nil, wrapBuildError("volcano", err)
	}
	if err := b.coscheduling(); err != nil {
		return nil, wrapBuildError("kube-scheduler", err)
	}
	if err := b.executorTemplate(); err != nil {
		return nil, wrapBuildError("executor pod template", err)
	}
	if err := b.configMap(); err != nil {
		return nil, wrapBuildError("configmap", err)
	}
	b.objs.DriverPodName = b.driverPodName
	if opts.AnsweredDriver != nil && !opts.PodSets {
		b.objs.AnsweredDriverPod = opts.AnsweredDriver(b.driverPodName, sub.SubmissionID)
	}
	if b.objs.AnsweredDriverPod == nil {
		if err := b.driverPod(); err != nil {
			return nil, wrapBuildError("driver pod", err)
		}
	}
	b.driverService()
	b.driverPDB()
	b.executorNetworkPolicy()
	if err := b.podSets(); err != nil {
		return nil, wrapBuildError("pod sets", err)
	}
	return &b.objs, nil
}

// wrapBuildError keeps a BuildError as it is, for the user, and names the step of any other.
func wrapBuildError(step string, err error) error {
	var be *BuildError
	if errors.As(err, &be) {
		return err
	}
	return buildErrorf("%s: %v", step, err)
}
