package main

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/apacheapp"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/sparkcluster"
	"github.com/sparkhooks/sparkhooks/internal/sparkconnect"
)

// decisionOptions are the settings of the hook decisions, shared by serve and render so that a
// dry run shows exactly what the server would answer.
type decisionOptions struct {
	spark     sparkapp.Config
	scheduled schedule.Config
	// namespaces and namespaceSelector become spark.Namespaces in validate.
	namespaces        []string
	namespaceSelector string
}

func addDecisionFlags(f *envDefault, o *decisionOptions) {
	def := sparkapp.DefaultConfig()
	o.spark = def
	f.boolean(&o.spark.Driver.EnableUIService, "enable-ui-service", "SPARKHOOKS_ENABLE_UI_SERVICE", def.Driver.EnableUIService,
		"create a Service for the Spark UI of every application")
	f.string(&o.spark.Driver.IngressURLFormat, "ingress-url-format", "SPARKHOOKS_INGRESS_URL_FORMAT", def.Driver.IngressURLFormat,
		"URL of the Spark UI Ingress of every application, with {{$appName}} and {{$appNamespace}} (empty: no Ingress unless the spec asks)")
	f.string(&o.spark.Driver.IngressClassName, "ingress-class-name", "SPARKHOOKS_INGRESS_CLASS_NAME", def.Driver.IngressClassName,
		"ingressClassName of the Spark UI Ingresses")
	f.jsonValue(&o.spark.Driver.IngressAnnotations, "ingress-annotations", "SPARKHOOKS_INGRESS_ANNOTATIONS",
		`annotations of every Ingress, as a JSON object, e.g. {"cert-manager.io/cluster-issuer":"letsencrypt"}; an application's own non-empty ingressAnnotations replace them`)
	f.jsonValue(&o.spark.Driver.IngressTLS, "ingress-tls", "SPARKHOOKS_INGRESS_TLS",
		`TLS of every Ingress, as a JSON array of networking/v1 IngressTLS, e.g. [{"hosts":["*.spark.example.com"],"secretName":"spark-ui-tls"}]; an application's own non-empty ingressTLS replaces it`)
	f.boolean(&o.spark.Driver.Routes.UIHTTPRoute, "ui-http-route", "SPARKHOOKS_UI_HTTP_ROUTE", def.Driver.Routes.UIHTTPRoute,
		"a Gateway API HTTPRoute to the Spark UI of every application that has a UI Service, where the registration declares HTTPRoutes (needs --gateway-parent-refs)")
	f.jsonValue(&o.spark.Driver.Routes.ParentRefs, "gateway-parent-refs", "SPARKHOOKS_GATEWAY_PARENT_REFS",
		`Gateways of every HTTPRoute and GRPCRoute whose spec names none, as a JSON array, e.g. [{"name":"public","namespace":"gateways","sectionName":"https"}]`)
	f.list(&o.spark.Driver.Routes.HTTPRouteHostnames, "http-route-hostnames", "SPARKHOOKS_HTTP_ROUTE_HOSTNAMES",
		"comma-separated hostnames of every UI HTTPRoute whose spec sets none, with {{$appName}}, {{$appNamespace}} and {{$appId}} (empty: every host of the Gateway listener)")
	f.string(&o.spark.Driver.Routes.HTTPRoutePathPrefix, "http-route-path-prefix", "SPARKHOOKS_HTTP_ROUTE_PATH_PREFIX", children.DefaultHTTPRoutePathPrefix,
		"path of every UI HTTPRoute whose spec sets none, with {{$appName}}, {{$appNamespace}} and {{$appId}}; the route strips it and Spark's links carry it (spark.ui.proxyBase)")
	f.list(&o.spark.Driver.KubeSchedulerNames, "kube-scheduler-names", "SPARKHOOKS_KUBE_SCHEDULER_NAMES",
		"comma-separated kube-scheduler profiles that gang-schedule with the scheduler-plugins coscheduling plugin: an application whose batch scheduler is one of them gets a scheduling.x-k8s.io PodGroup (needs the registration to declare them)")
	f.string(&o.spark.Driver.DefaultBatchScheduler, "default-batch-scheduler", "SPARKHOOKS_DEFAULT_BATCH_SCHEDULER", def.Driver.DefaultBatchScheduler,
		"batch scheduler of applications whose spec.batchScheduler is empty: volcano, yunikorn or one of --kube-scheduler-names (empty: none)")
	f.string(&o.spark.Driver.DefaultServiceAccount, "default-service-account", "SPARKHOOKS_DEFAULT_SERVICE_ACCOUNT", def.Driver.DefaultServiceAccount,
		"service account of drivers and Spark Connect servers whose spec and template name none; their executors take it too (empty: the namespace's default)")
	f.duration(&o.spark.SubmissionGrace, "submission-grace", "SPARKHOOKS_SUBMISSION_GRACE", def.SubmissionGrace,
		"how long a submitted driver Pod may take to appear before the submission counts as failed")
	f.duration(&o.spark.MissingDriverGrace, "missing-driver-grace", "SPARKHOOKS_MISSING_DRIVER_GRACE", def.MissingDriverGrace,
		"how long a running driver Pod may be missing before the attempt counts as failed")
	f.duration(&o.spark.ImagePullGrace, "image-pull-grace", "SPARKHOOKS_IMAGE_PULL_GRACE", def.ImagePullGrace,
		"how long a driver may wait on its image or its configuration before the attempt fails")
	o.scheduled.MaxResync = time.Hour
	f.duration(&o.scheduled.MaxResync, "scheduled-max-resync", "SPARKHOOKS_SCHEDULED_MAX_RESYNC", o.scheduled.MaxResync,
		"longest wait between two syncs of a ScheduledSparkApplication, so that clock changes are picked up")
	f.int64(&o.spark.DefaultTimeToLiveSeconds, "default-time-to-live-seconds", "SPARKHOOKS_DEFAULT_TIME_TO_LIVE_SECONDS", def.DefaultTimeToLiveSeconds,
		"time to live of a finished SparkApplication whose spec sets no timeToLiveSeconds, after which sparkhooks gc deletes it (0: none)")
	f.string(&o.spark.Driver.EventLog.Dir, "default-event-log-dir", "SPARKHOOKS_DEFAULT_EVENT_LOG_DIR", def.Driver.EventLog.Dir,
		"spark.eventLog.dir of applications and Spark Connect servers that set none, with event logs on, rolling and compressed unless they say otherwise: s3a://bucket/prefix, hdfs://..., or file:/path with --default-event-log-volume (empty: Spark's own default, no event log)")
	f.jsonValue(&o.spark.Driver.EventLog.Volume, "default-event-log-volume", "SPARKHOOKS_DEFAULT_EVENT_LOG_VOLUME",
		`the volume --default-event-log-dir (file:/path) is on, mounted in drivers at that path, as a JSON core/v1 Volume: a ReadWriteMany persistentVolumeClaim, nfs or hostPath, e.g. {"persistentVolumeClaim":{"claimName":"spark-events"}}`)
	f.string(&o.spark.HistoryServerURL, "history-server-url", "SPARKHOOKS_HISTORY_SERVER_URL", def.HistoryServerURL,
		"base URL of the History Server that reads --default-event-log-dir: applications that log there name their page under it in status.historyURL (empty: none)")
	f.boolean(&o.spark.KueueIntegration, "kueue-spark-application-integration", "SPARKHOOKS_KUEUE_SPARK_APPLICATION_INTEGRATION", def.KueueIntegration,
		"Kueue's own SparkApplication integration queues the applications labelled kueue.x-k8s.io/queue-name through spec.suspend: its placement edits while it holds one are not the user's, and its suspensions are evictions (docs/kueue.md; not with the registration's Workload child)")
	f.integer(&o.spark.MaxTrackedExecutors, "max-tracked-executors", "SPARKHOOKS_MAX_TRACKED_EXECUTORS", def.MaxTrackedExecutors,
		"most executors listed in status.executorState; the rest are counted")
	f.list(&o.namespaces, "namespaces", "SPARKHOOKS_NAMESPACES",
		"comma-separated namespaces whose SparkApplications start whatever their labels (empty, and no --namespace-selector: every namespace)")
	f.string(&o.namespaceSelector, "namespace-selector", "SPARKHOOKS_NAMESPACE_SELECTOR", "",
		"label selector of further namespaces whose SparkApplications start, e.g. 'spark-operator=enabled,env in (prod,staging)'; others are left alone until their namespace matches (needs the parent's Namespace as a related object, in a v2 sync request)")
}

// resolve turns the namespace flags into the decision's selector.
func (o *decisionOptions) resolve() error {
	sel, err := sparkapp.NewNamespaceSelector(o.namespaces, o.namespaceSelector)
	if err != nil {
		return fmt.Errorf("--namespace-selector: %w", err)
	}
	for _, ns := range o.namespaces {
		if errs := validation.IsDNS1123Label(ns); ns != "" && len(errs) > 0 {
			return fmt.Errorf("--namespaces: %q is not a namespace name: %s", ns, strings.Join(errs, "; "))
		}
	}
	o.spark.Namespaces = sel
	return nil
}

func (o decisionOptions) validate() error {
	for name, d := range map[string]time.Duration{
		"--submission-grace":     o.spark.SubmissionGrace,
		"--missing-driver-grace": o.spark.MissingDriverGrace,
		"--image-pull-grace":     o.spark.ImagePullGrace,
		"--scheduled-max-resync": o.scheduled.MaxResync,
	} {
		if d <= 0 {
			return fmt.Errorf("%s must be > 0, got %s", name, d)
		}
	}
	if ttl := o.spark.DefaultTimeToLiveSeconds; ttl < 0 || ttl > v1beta2.MaxSeconds {
		return fmt.Errorf("--default-time-to-live-seconds must be between 0 and %d, got %d", v1beta2.MaxSeconds, ttl)
	}
	if err := validateBatchSchedulers(o.spark.Driver.KubeSchedulerNames, o.spark.Driver.DefaultBatchScheduler); err != nil {
		return err
	}
	if sa := o.spark.Driver.DefaultServiceAccount; sa != "" {
		if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
			return fmt.Errorf("--default-service-account %q is not a service account name: %s", sa, strings.Join(errs, "; "))
		}
	}
	if err := validateRouteDefaults(o.spark.Driver.Routes); err != nil {
		return err
	}
	if err := o.spark.Driver.EventLog.Validate(); err != nil {
		return fmt.Errorf("--default-event-log-dir, --default-event-log-volume: %w", err)
	}
	if u := o.spark.HistoryServerURL; u != "" {
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return fmt.Errorf("--history-server-url %q is not an http or https URL", u)
		}
		if o.spark.Driver.EventLog.Dir == "" {
			return errors.New("--history-server-url needs --default-event-log-dir: the History Server shows the applications that log there")
		}
	}
	if o.spark.MaxTrackedExecutors <= 0 {
		return fmt.Errorf("--max-tracked-executors must be > 0, got %d", o.spark.MaxTrackedExecutors)
	}
	return nil
}

// validateRouteDefaults checks the Gateway API defaults as a spec's would be checked, so that a
// mistake stops the server at start rather than failing every application.
func validateRouteDefaults(r children.RouteSettings) error {
	defaults := &v1beta2.HTTPRouteConfiguration{ParentRefs: r.ParentRefs, Hostnames: r.HTTPRouteHostnames, PathPrefix: r.HTTPRoutePathPrefix}
	if errs := v1beta2.ValidateHTTPRouteConfiguration(defaults, field.NewPath("defaults")); len(errs) > 0 {
		flags := strings.NewReplacer("defaults.parentRefs", "--gateway-parent-refs", "defaults.hostnames", "--http-route-hostnames", "defaults.pathPrefix", "--http-route-path-prefix")
		return fmt.Errorf("%s", flags.Replace(errs.ToAggregate().Error()))
	}
	if r.UIHTTPRoute && len(r.ParentRefs) == 0 {
		return fmt.Errorf("--ui-http-route needs --gateway-parent-refs: a route attached to no Gateway receives no traffic")
	}
	return nil
}

// kinds are the hooks of every parent kind with these settings, for the router to serve.
func (o decisionOptions) kinds() []hook.Kind {
	return []hook.Kind{
		sparkapp.Hooks(o.spark),
		schedule.Hooks(o.scheduled),
		sparkconnect.Hooks(sparkconnect.Config{Driver: o.spark.Driver}),
		sparkcluster.Hooks(),
		apacheapp.Hooks(o.spark),
	}
}

// validateBatchSchedulers refuses settings that would leave an application with a batch
// scheduler no code path handles, as the Kubeflow operator refuses to start with them.
func validateBatchSchedulers(kubeSchedulers []string, defaultScheduler string) error {
	for _, name := range kubeSchedulers {
		if name == "volcano" || name == "yunikorn" {
			return fmt.Errorf("--kube-scheduler-names: %s has its own integration and cannot be a kube-scheduler name", name)
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return fmt.Errorf("--kube-scheduler-names: %q is not a scheduler name: %s", name, strings.Join(errs, "; "))
		}
	}
	switch {
	case defaultScheduler == "", defaultScheduler == "volcano", defaultScheduler == "yunikorn", slices.Contains(kubeSchedulers, defaultScheduler):
		return nil
	}
	return fmt.Errorf("--default-batch-scheduler %q is neither volcano, yunikorn nor one of --kube-scheduler-names %v", defaultScheduler, kubeSchedulers)
}
