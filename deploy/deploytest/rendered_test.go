package deploytest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
)

// renderedDirEnv names the directory hack/helm-check.sh rendered the chart into.
const renderedDirEnv = "SPARKHOOKS_RENDERED_DIR"

// Release name and namespace hack/helm-check.sh renders with; the static registrations in
// metacontroller/ assume the same.
const (
	releaseName      = "sparkhooks"
	releaseNamespace = "sparkhooks"
)

// Ports fixed by the server: the plain listener and the TLS listener.
const (
	httpContainerPort    = 8080
	webhookContainerPort = 8443
)

// rendering is one helm template output and what its values switched on.
type rendering struct {
	file        string
	certManager bool
	volcano     bool
	driverPDBs  bool // metacontroller.driverPodDisruptionBudgets
	kueue       bool // metacontroller.kueue
	// kueueIntegration: kueue.sparkApplicationIntegration, Kueue's own integration's mode.
	kueueIntegration bool
	gatewayAPI       bool // gatewayAPI.enabled, with every operator default of the routes
	// schedulerPlugins: metacontroller.schedulerPluginsPodGroups and the batchScheduler values.
	schedulerPlugins bool
	serviceMonitor   bool
	networkPolicy    bool
	dashboards       string // namespace of the dashboard ConfigMap, "" when off
	goMemLimit       string // GOMEMLIMIT given in extraEnv, "" when not
	ksm              string // namespace of the kube-state-metrics ConfigMap, "" when off
	ksmRBAC          bool
	jobNamespaces    []string
	// namespaceSelector: spark.jobNamespaceSelector, "" when off.
	namespaceSelector string
	// kubeflowMetrics: metrics.kubeflow.enabled, with labels and the PrometheusRule.
	kubeflowMetrics bool
	// ingressDefaults: the values set ui.ingressAnnotations and ui.ingressTLS.
	ingressDefaults bool
	defaultTTL      string // --default-time-to-live-seconds, "" when not given
	// defaultServiceAccount: --default-service-account, "" when not given.
	defaultServiceAccount string
	gcDryRun              bool
	gcCronJob             bool // gc.mode cronjob, else the default watch
	// historyServer: historyServer.enabled, with the event log on an nfs volume, a volume of
	// jars for its class path and an Ingress with TLS.
	historyServer bool
	// apacheApplication: apacheSparkApplication.enabled, the CompositeController of Apache's
	// SparkApplication.
	apacheApplication bool
}

var renderings = []rendering{
	{
		file:                  "default.yaml",
		jobNamespaces:         []string{"default"},
		defaultServiceAccount: "spark",
	},
	{
		file:                  "all-features.yaml",
		certManager:           true,
		volcano:               true,
		driverPDBs:            true,
		kueue:                 true,
		gatewayAPI:            true,
		apacheApplication:     true,
		schedulerPlugins:      true,
		serviceMonitor:        true,
		networkPolicy:         true,
		dashboards:            "monitoring",
		ksm:                   "monitoring",
		ksmRBAC:               true,
		goMemLimit:            "400MiB",
		ingressDefaults:       true,
		jobNamespaces:         []string{"spark-jobs", "analytics"},
		namespaceSelector:     "spark-operator=enabled,env in (prod, staging),tier!=legacy,team,!frozen,zone==a,region notin (x)",
		kubeflowMetrics:       true,
		defaultTTL:            "315360000",
		defaultServiceAccount: "spark-runner",
		gcDryRun:              true,
		gcCronJob:             true,
		historyServer:         true,
	},
	{
		file:                  "kueue-integration.yaml",
		kueueIntegration:      true,
		jobNamespaces:         []string{"default"},
		defaultServiceAccount: "spark",
	},
}

// fixedJobNamespaces are the namespaces the chart grants rights in one by one: none with a
// namespace selector, whose namespaces are not known when the chart is rendered.
func (r rendering) fixedJobNamespaces() []string {
	if r.namespaceSelector != "" {
		return nil
	}
	return r.jobNamespaces
}

func renderedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(renderedDirEnv)
	if dir == "" {
		t.Skipf("%s is not set: run hack/helm-check.sh <dir> and set %s=<dir> (make chart-check does both)", renderedDirEnv, renderedDirEnv)
	}
	return dir
}

func TestRenderedChart(t *testing.T) {
	dir := renderedDir(t)
	staticBase, staticVolcano := staticRegistrations(t)
	for _, r := range renderings {
		t.Run(r.file, func(t *testing.T) {
			m := loadManifest(t, filepath.Join(dir, r.file))
			c := &renderedChart{t: t, m: m, r: r}
			c.deployment()
			c.service()
			c.podDisruptionBudget()
			c.controllers(staticBase, staticVolcano)
			c.webhook(staticBase)
			c.validatingWebhook(staticBase)
			c.policy()
			c.sparkRBAC()
			c.serviceMonitor()
			c.networkPolicy()
			c.observability()
			c.gc()
			c.events()
			c.userRoles()
			c.historyServer()
			c.namespaceSelection()
			c.kubeflowMetrics()
		})
	}
}

// renderedChart holds one rendering and the objects the checks share.
type renderedChart struct {
	t   *testing.T
	m   *manifest
	r   rendering
	dep *appsv1.Deployment
	svc *corev1.Service
}

func (c *renderedChart) container() *corev1.Container {
	require.Len(c.t, c.dep.Spec.Template.Spec.Containers, 1)
	return &c.dep.Spec.Template.Spec.Containers[0]
}

func (c *renderedChart) containerPort(name string) int32 {
	for _, p := range c.container().Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	c.t.Fatalf("container has no port named %q", name)
	return 0
}

// ingressDefaultArgs checks that the Ingress defaults reach the server as the JSON its flags
// take: an object of annotations and a list of IngressTLS.
func (c *renderedChart) ingressDefaultArgs() {
	t := c.t
	ann, hasAnn := c.arg("ingress-annotations")
	tls, hasTLS := c.arg("ingress-tls")
	if !c.r.ingressDefaults {
		assert.False(t, hasAnn || hasTLS, "no Ingress defaults unless the values set them")
		return
	}
	var annotations map[string]string
	require.NoError(t, json.Unmarshal([]byte(ann), &annotations), "--ingress-annotations")
	assert.NotEmpty(t, annotations)
	var tlsList []networkingv1.IngressTLS
	require.NoError(t, json.Unmarshal([]byte(tls), &tlsList), "--ingress-tls")
	require.NotEmpty(t, tlsList)
	assert.NotEmpty(t, tlsList[0].SecretName)
}

// gatewayArgs checks that the Gateway API defaults reach the server's flags in the forms they
// take: the Gateways as a JSON list, the hostnames comma-separated.
func (c *renderedChart) gatewayArgs() {
	t := c.t
	refs, hasRefs := c.arg("gateway-parent-refs")
	every, hasEvery := c.arg("ui-http-route")
	hosts, hasHosts := c.arg("http-route-hostnames")
	path, hasPath := c.arg("http-route-path-prefix")
	if !c.r.gatewayAPI {
		assert.False(t, hasRefs || hasEvery || hasHosts || hasPath, "no Gateway API flags unless the values set them")
		return
	}
	var parents []v1beta2.GatewayParentReference
	require.NoError(t, json.Unmarshal([]byte(refs), &parents), "--gateway-parent-refs")
	assert.Equal(t, []v1beta2.GatewayParentReference{{Name: "public", Namespace: "gateways", SectionName: "https"}}, parents)
	assert.Equal(t, "true", every)
	assert.Equal(t, "spark.example.com", hosts)
	assert.Equal(t, "/ui/{{$appNamespace}}/{{$appName}}", path)
}

// batchSchedulerArgs checks that the batch scheduler values reach the server's flags.
func (c *renderedChart) batchSchedulerArgs() {
	t := c.t
	names, hasNames := c.arg("kube-scheduler-names")
	def, hasDefault := c.arg("default-batch-scheduler")
	if !c.r.schedulerPlugins {
		assert.False(t, hasNames || hasDefault, "no batch scheduler flags unless the values set them")
		return
	}
	assert.Equal(t, "scheduler-plugins-scheduler", names)
	assert.Equal(t, "scheduler-plugins-scheduler", def)
}

// arg returns the value of --name=value in the container's arguments.
func (c *renderedChart) arg(name string) (string, bool) {
	for _, a := range c.container().Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// mountedVolume returns the volume whose mount contains file.
func (c *renderedChart) mountedVolume(file string) corev1.Volume {
	t := c.t
	for _, vm := range c.container().VolumeMounts {
		if path.Dir(file) == vm.MountPath {
			assert.True(t, vm.ReadOnly, "%s is mounted writable", vm.MountPath)
			assert.Empty(t, vm.SubPath, "a subPath mount never sees updates")
			for _, v := range c.dep.Spec.Template.Spec.Volumes {
				if v.Name == vm.Name {
					return v
				}
			}
			t.Fatalf("mount %s names no volume %q", vm.MountPath, vm.Name)
		}
	}
	t.Fatalf("no volume is mounted at %s", path.Dir(file))
	return corev1.Volume{}
}

func (c *renderedChart) deployment() {
	t := c.t
	require.Len(t, c.m.deployments, 1)
	c.dep = c.m.deployments[0]
	dep := c.dep
	assert.Equal(t, releaseNamespace, dep.Namespace)
	require.NotNil(t, dep.Spec.Replicas)
	assert.Equal(t, int32(2), *dep.Spec.Replicas)
	podLabels := dep.Spec.Template.Labels
	require.NotNil(t, dep.Spec.Selector)
	assert.Subset(t, podLabels, dep.Spec.Selector.MatchLabels, "the selector must match the pod template")

	pod := dep.Spec.Template.Spec
	require.NotNil(t, pod.AutomountServiceAccountToken)
	assert.True(t, *pod.AutomountServiceAccountToken, "the server records Events: the hooks themselves never call the API")
	sc := pod.SecurityContext
	require.NotNil(t, sc)
	assert.Equal(t, ptr(true), sc.RunAsNonRoot)
	assert.Equal(t, ptr(int64(65532)), sc.RunAsUser)
	require.NotNil(t, sc.SeccompProfile)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)

	require.NotNil(t, pod.Affinity)
	require.NotNil(t, pod.Affinity.PodAntiAffinity)
	terms := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	require.Len(t, terms, 1)
	assert.Equal(t, "kubernetes.io/hostname", terms[0].PodAffinityTerm.TopologyKey)
	assert.Equal(t, &metav1.LabelSelector{MatchLabels: dep.Spec.Selector.MatchLabels}, terms[0].PodAffinityTerm.LabelSelector)

	ctr := c.container()
	assert.Equal(t, "serve", ctr.Args[0], "the image's entrypoint is /sparkhooks; args name the subcommand")
	csc := ctr.SecurityContext
	require.NotNil(t, csc)
	assert.Equal(t, ptr(true), csc.ReadOnlyRootFilesystem)
	assert.Equal(t, ptr(false), csc.AllowPrivilegeEscalation)
	require.NotNil(t, csc.Capabilities)
	assert.Equal(t, []corev1.Capability{"ALL"}, csc.Capabilities.Drop)
	assert.Empty(t, csc.Capabilities.Add)

	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := ctr.Resources.Requests[res]
		assert.True(t, ok && !q.IsZero(), "no %s request", res)
	}
	limit, ok := ctr.Resources.Limits[corev1.ResourceMemory]
	assert.True(t, ok && limit.Cmp(resource.MustParse("64Mi")) > 0, "memory limit")
	c.memoryLimitEnv()

	assert.Equal(t, int32(httpContainerPort), c.containerPort("http"))
	assert.Equal(t, int32(webhookContainerPort), c.containerPort("webhook"))
	addr, _ := c.arg("addr")
	assert.Equal(t, fmt.Sprintf(":%d", httpContainerPort), addr)
	tlsAddr, _ := c.arg("tls-addr")
	assert.Equal(t, fmt.Sprintf(":%d", webhookContainerPort), tlsAddr)
	c.ingressDefaultArgs()
	c.gatewayArgs()
	c.batchSchedulerArgs()

	// SIGTERM comes after the pre-stop pause; the server then drains for up to its shutdown timeout,
	// and the kubelet kills it at the end of the grace period.
	shutdown, ok := c.arg("shutdown-timeout")
	require.True(t, ok, "no --shutdown-timeout")
	drain, err := time.ParseDuration(shutdown)
	require.NoError(t, err)
	var pause time.Duration
	if ctr.Lifecycle != nil && ctr.Lifecycle.PreStop != nil && ctr.Lifecycle.PreStop.Sleep != nil {
		pause = time.Duration(ctr.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	assert.Positive(t, pause, "without a pre-stop pause, kube-proxy still routes to a pod that stopped listening")
	require.NotNil(t, pod.TerminationGracePeriodSeconds)
	assert.Greater(t, time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second, pause+drain, "grace period")

	for _, probe := range []struct {
		name string
		p    *corev1.Probe
		path string
	}{
		{"readiness", ctr.ReadinessProbe, hooks.ReadyzPath},
		{"liveness", ctr.LivenessProbe, hooks.HealthzPath},
	} {
		require.NotNil(t, probe.p, "no %s probe", probe.name)
		require.NotNil(t, probe.p.HTTPGet, "%s probe", probe.name)
		assert.Equal(t, probe.path, probe.p.HTTPGet.Path, "%s probe", probe.name)
		assert.Equal(t, intstr.FromString("http"), probe.p.HTTPGet.Port, "%s probe", probe.name)
		assert.Contains(t, hooks.Routes(), probe.p.HTTPGet.Path)
	}
}

// memoryLimitEnv checks that the server learns the container's memory limit, from which it sets
// the Go memory limit and its in-flight request budget, and that extraEnv still follows.
func (c *renderedChart) memoryLimitEnv() {
	t := c.t
	env := map[string]corev1.EnvVar{}
	for _, e := range c.container().Env {
		env[e.Name] = e
	}
	limit, ok := env["SPARKHOOKS_MEMORY_LIMIT_BYTES"]
	require.True(t, ok, "SPARKHOOKS_MEMORY_LIMIT_BYTES is not set")
	require.NotNil(t, limit.ValueFrom, "SPARKHOOKS_MEMORY_LIMIT_BYTES must come from the downward API")
	ref := limit.ValueFrom.ResourceFieldRef
	require.NotNil(t, ref, "SPARKHOOKS_MEMORY_LIMIT_BYTES must come from a resourceFieldRef")
	assert.Equal(t, "limits.memory", ref.Resource)
	assert.Contains(t, []string{"", c.container().Name}, ref.ContainerName, "the limit of another container")
	assert.True(t, ref.Divisor.IsZero() || ref.Divisor.Cmp(resource.MustParse("1")) == 0, "the server reads bytes, divisor %s", ref.Divisor.String())

	gomemlimit, ok := env["GOMEMLIMIT"]
	assert.Equal(t, c.r.goMemLimit != "", ok, "GOMEMLIMIT from extraEnv")
	assert.Equal(t, c.r.goMemLimit, gomemlimit.Value)
}

func (c *renderedChart) service() {
	t := c.t
	c.svc = c.m.service(releaseNamespace, releaseName)
	require.NotNil(t, c.svc, "no Service %s/%s", releaseNamespace, releaseName)
	assert.Equal(t, c.dep.Spec.Selector.MatchLabels, c.svc.Spec.Selector)
}

// servicePortTo returns the Service port whose target is the container port number.
func (c *renderedChart) servicePortTo(containerPort int32) corev1.ServicePort {
	for _, sp := range c.svc.Spec.Ports {
		target := sp.TargetPort.IntVal
		if sp.TargetPort.Type == intstr.String {
			target = c.containerPort(sp.TargetPort.StrVal)
		}
		if target == containerPort {
			return sp
		}
	}
	c.t.Fatalf("Service %s has no port to container port %d", c.svc.Name, containerPort)
	return corev1.ServicePort{}
}

func (c *renderedChart) podDisruptionBudget() {
	t := c.t
	require.Len(t, c.m.pdbs, 1)
	pdb := c.m.pdbs[0]
	require.NotNil(t, pdb.Spec.MinAvailable)
	assert.Equal(t, intstr.FromInt32(1), *pdb.Spec.MinAvailable)
	assert.Equal(t, c.dep.Spec.Selector, pdb.Spec.Selector)
}

func (c *renderedChart) controllers(staticBase, staticVolcano *manifest) {
	t := c.t
	base := mustParseURL(t, fmt.Sprintf("http://%s.%s.svc:%d", c.svc.Name, c.svc.Namespace, c.servicePortTo(httpContainerPort).Port))
	want := 4
	if c.r.apacheApplication {
		want++
	}
	require.Len(t, c.m.compositeControllers, want)
	sparkApp := c.m.controllerFor("sparkoperator.k8s.io/v1beta2", "sparkapplications")
	var optional []childResourceRule
	if c.r.volcano {
		optional = append(optional, volcanoPodGroups)
	}
	if c.r.schedulerPlugins {
		optional = append(optional, schedulerPluginsPodGroups)
	}
	if c.r.driverPDBs {
		optional = append(optional, driverPDBs)
	}
	if c.r.kueue {
		optional = append(optional, kueueWorkloads)
	}
	if c.r.gatewayAPI {
		optional = append(optional, httpRoutes, grpcRoutes)
	}
	checkSparkApplicationController(t, sparkApp, base, optional...)
	scheduled := c.m.controllerFor("sparkoperator.k8s.io/v1beta2", "scheduledsparkapplications")
	checkScheduledController(t, scheduled, base)

	// The chart and metacontroller/*.yaml must register the same controllers.
	wantSparkApp := staticBase.controllerFor("sparkoperator.k8s.io/v1beta2", "sparkapplications")
	if c.r.volcano {
		wantSparkApp = staticVolcano.controllerFor("sparkoperator.k8s.io/v1beta2", "sparkapplications")
	}
	assert.Equal(t, wantSparkApp.Name, sparkApp.Name)
	gotSpec := sparkApp.Spec
	// metacontroller/README.md says how to add these children without the chart; no static
	// variant carries them.
	gotSpec.ChildResources = slices.DeleteFunc(slices.Clone(gotSpec.ChildResources), func(r childResourceRule) bool {
		return r.resourceRule == driverPDBs.resourceRule || r.resourceRule == schedulerPluginsPodGroups.resourceRule ||
			r.resourceRule == kueueWorkloads.resourceRule || r.resourceRule == httpRoutes.resourceRule || r.resourceRule == grpcRoutes.resourceRule
	})
	assert.Equal(t, wantSparkApp.Spec, gotSpec)
	wantScheduled := staticBase.controllerFor("sparkoperator.k8s.io/v1beta2", "scheduledsparkapplications")
	assert.Equal(t, wantScheduled.Name, scheduled.Name)
	assert.Equal(t, wantScheduled.Spec, scheduled.Spec)

	connect := c.m.controllerFor("sparkoperator.k8s.io/v1alpha1", "sparkconnects")
	var connectOptional []childResourceRule
	if c.r.gatewayAPI {
		connectOptional = append(connectOptional, httpRoutes, grpcRoutes)
	}
	if c.r.kueue {
		connectOptional = append(connectOptional, kueueWorkloads)
	}
	checkConnectController(t, connect, base, connectOptional...)
	wantConnect := staticBase.controllerFor("sparkoperator.k8s.io/v1alpha1", "sparkconnects")
	assert.Equal(t, wantConnect.Name, connect.Name)
	gotConnect := connect.Spec
	gotConnect.ChildResources = slices.DeleteFunc(slices.Clone(gotConnect.ChildResources), func(r childResourceRule) bool {
		return r.resourceRule == kueueWorkloads.resourceRule || r.resourceRule == httpRoutes.resourceRule || r.resourceRule == grpcRoutes.resourceRule
	})
	assert.Equal(t, wantConnect.Spec, gotConnect)

	cluster := c.m.controllerFor("spark.apache.org/v1", "sparkclusters")
	checkClusterController(t, cluster, base)
	wantCluster := staticBase.controllerFor("spark.apache.org/v1", "sparkclusters")
	assert.Equal(t, wantCluster.Name, cluster.Name)
	assert.Equal(t, wantCluster.Spec, cluster.Spec)

	if !c.r.apacheApplication {
		return
	}
	apache := c.m.controllerFor("spark.apache.org/v1", "sparkapplications")
	apacheOptional := []childResourceRule{child("networking.k8s.io/v1", "networkpolicies", "InPlace")}
	if c.r.gatewayAPI {
		// driverHttpRouteList and driverGrpcRouteList's children.
		apacheOptional = append(apacheOptional, httpRoutes, grpcRoutes)
	}
	checkApacheApplicationController(t, apache, base, apacheOptional...)
	wantApache := staticBase.controllerFor("spark.apache.org/v1", "sparkapplications")
	assert.Equal(t, wantApache.Name, apache.Name)
	gotApache := apache.Spec
	gotApache.ChildResources = slices.DeleteFunc(slices.Clone(gotApache.ChildResources), func(r childResourceRule) bool {
		return r.resourceRule == httpRoutes.resourceRule || r.resourceRule == grpcRoutes.resourceRule
	})
	assert.Equal(t, wantApache.Spec, gotApache)
}

func (c *renderedChart) webhook(staticBase *manifest) {
	t := c.t
	require.Len(t, c.m.webhooks, 1)
	mwc := c.m.webhooks[0]
	w := checkPodWebhook(t, mwc)
	svcRef := w.ClientConfig.Service
	assert.Equal(t, c.svc.Name, svcRef.Name)
	assert.Equal(t, c.svc.Namespace, svcRef.Namespace)
	require.NotNil(t, svcRef.Port)
	assert.Equal(t, c.servicePortTo(webhookContainerPort).Port, *svcRef.Port, "the webhook must reach the TLS listener")

	// The same registration as metacontroller/pod-mutating-webhook.yaml, CA aside.
	want := staticBase.webhooks[0].Webhooks[0].DeepCopy()
	got := w.DeepCopy()
	want.ClientConfig.CABundle, got.ClientConfig.CABundle = nil, nil
	assert.Equal(t, want, got)

	certFile, ok := c.arg("tls-cert-file")
	require.True(t, ok, "no --tls-cert-file")
	keyFile, ok := c.arg("tls-key-file")
	require.True(t, ok, "no --tls-key-file")
	vol := c.mountedVolume(certFile)
	assert.Equal(t, vol.Name, c.mountedVolume(keyFile).Name, "certificate and key come from one Secret")
	require.NotNil(t, vol.Secret, "the certificate volume is not a Secret")
	secretName := vol.Secret.SecretName
	serviceDNS := fmt.Sprintf("%s.%s.svc", c.svc.Name, c.svc.Namespace)

	if c.r.certManager {
		assert.Empty(t, w.ClientConfig.CABundle, "cert-manager injects the CA")
		certName := strings.TrimPrefix(mwc.Annotations["cert-manager.io/inject-ca-from"], releaseNamespace+"/")
		cert := unstructuredNamed(c.m.certificates, releaseNamespace, certName)
		require.NotNil(t, cert, "cert-manager.io/inject-ca-from names no rendered Certificate")
		gotSecret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
		assert.Equal(t, secretName, gotSecret, "the Certificate must write the Secret the pods mount")
		dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
		assert.Contains(t, dnsNames, serviceDNS)
		issuerKind, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "kind")
		issuerName, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
		assert.Equal(t, "Issuer", issuerKind)
		issuer := unstructuredNamed(c.m.issuers, releaseNamespace, issuerName)
		require.NotNil(t, issuer, "the Certificate's issuer %q is not rendered", issuerName)
		assert.Nil(t, c.m.secret(releaseNamespace, secretName), "cert-manager owns the Secret")
		return
	}

	assert.Empty(t, c.m.certificates)
	secret := c.m.secret(releaseNamespace, secretName)
	require.NotNil(t, secret, "the pods mount Secret %s, which is not rendered", secretName)
	assert.Equal(t, corev1.SecretTypeTLS, secret.Type)
	assert.Equal(t, secret.Data["ca.crt"], w.ClientConfig.CABundle, "caBundle must be the CA in the Secret")
	pair, err := tls.X509KeyPair(secret.Data[path.Base(certFile)], secret.Data[path.Base(keyFile)])
	require.NoError(t, err, "serving certificate and key")
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(w.ClientConfig.CABundle), "caBundle holds no PEM certificate")
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: serviceDNS, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err, "the API server could not verify the webhook's certificate")
}

// validatingWebhook checks the validating webhook against metacontroller/validating-webhook.yaml
// and the pod-mutation webhook, whose Service, certificate and CA it shares.
func (c *renderedChart) validatingWebhook(staticBase *manifest) {
	t := c.t
	require.Len(t, c.m.validatingWebhooks, 1)
	vwc := c.m.validatingWebhooks[0]
	checkValidatingWebhooks(t, vwc, c.r.jobNamespaces, c.r.namespaceSelector)
	mwc := c.m.webhooks[0]
	assert.Equal(t, mwc.Annotations, vwc.Annotations, "the same cert-manager CA injection")
	want := staticBase.validatingWebhooks[0].DeepCopy()
	for i := range vwc.Webhooks {
		got := &vwc.Webhooks[i]
		wantConfig := mwc.Webhooks[0].ClientConfig.DeepCopy()
		wantConfig.Service.Path = got.ClientConfig.Service.Path
		assert.Equal(t, wantConfig, &got.ClientConfig, "%s: the pod-mutation webhook's Service and CA", got.Name)

		// The same registration as the static file, where clientConfig and the namespaces differ
		// (and the name of a kind's second webhook, for the selected namespaces).
		w := want.Webhooks[i*len(want.Webhooks)/len(vwc.Webhooks)].DeepCopy()
		w.ClientConfig, w.NamespaceSelector, w.Name = got.ClientConfig, got.NamespaceSelector, got.Name
		assert.Equal(t, w, got)
	}
}

func (c *renderedChart) policy() {
	t := c.t
	policyFile, ok := c.arg("policy-file")
	require.True(t, ok, "no --policy-file")
	vol := c.mountedVolume(policyFile)
	require.NotNil(t, vol.ConfigMap, "the policy volume is not a ConfigMap")
	cm := c.m.configMap(releaseNamespace, vol.ConfigMap.Name)
	require.NotNil(t, cm, "ConfigMap %s is not rendered", vol.ConfigMap.Name)
	text, ok := cm.Data[path.Base(policyFile)]
	require.True(t, ok, "ConfigMap %s has no key %s", cm.Name, path.Base(policyFile))
	_, err := mutate.ParsePolicy([]byte(text))
	assert.NoError(t, err, "the rendered policy would stop the webhook")
}

func (c *renderedChart) sparkRBAC() {
	t := c.t
	// What Spark's driver does in its namespace (research/spark-pod.md §5a), by API group; apps is
	// for the statefulset executor allocator.
	need := map[string]map[string][]string{
		"": {
			"pods":                   {"get", "list", "watch", "create", "delete", "deletecollection"},
			"services":               {"get", "list", "create", "delete"},
			"configmaps":             {"get", "list", "create", "delete"},
			"persistentvolumeclaims": {"get", "list", "create", "delete"},
		},
		"apps": {
			"statefulsets":       {"get", "create", "delete"},
			"statefulsets/scale": {"get", "update"},
		},
	}
	for _, ns := range c.r.jobNamespaces {
		var sa *corev1.ServiceAccount
		for _, s := range c.m.serviceAccounts {
			if s.Namespace == ns {
				sa = s
			}
		}
		require.NotNil(t, sa, "no driver ServiceAccount in %s", ns)
		assert.Equal(t, "spark", sa.Name)
		var binding *rbacv1.RoleBinding
		for _, b := range c.m.roleBindings {
			if b.Namespace == ns && !isGC(b) && !isEvents(b) {
				binding = b
			}
		}
		require.NotNil(t, binding, "no RoleBinding in %s", ns)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}, binding.Subjects)
		var role *rbacv1.Role
		for _, r := range c.m.roles {
			if r.Namespace == ns && r.Name == binding.RoleRef.Name && binding.RoleRef.Kind == "Role" {
				role = r
			}
		}
		require.NotNil(t, role, "RoleBinding %s/%s names no rendered Role", ns, binding.Name)
		for group, resources := range need {
			for res, verbs := range resources {
				assert.Subset(t, grantedVerbsInGroup(role.Rules, group, res), verbs, "%s: verbs on %s in group %q", ns, res, group)
			}
		}
	}
	var roleNamespaces []string
	for _, r := range c.m.roles {
		if !isGC(r) && !isEvents(r) {
			roleNamespaces = append(roleNamespaces, r.Namespace)
		}
	}
	assert.ElementsMatch(t, c.r.jobNamespaces, roleNamespaces)
}

func (c *renderedChart) serviceMonitor() {
	t := c.t
	if !c.r.serviceMonitor {
		assert.Empty(t, c.m.serviceMonitors)
		return
	}
	require.Len(t, c.m.serviceMonitors, 1)
	sm := c.m.serviceMonitors[0]
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	assert.Subset(t, c.svc.Labels, selector, "the ServiceMonitor must select the Service")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	require.Len(t, endpoints, 1)
	ep := endpoints[0].(map[string]any)
	assert.Equal(t, hooks.MetricsPath, ep["path"])
	assert.Equal(t, c.servicePortTo(httpContainerPort).Name, ep["port"], "metrics are on the plain listener")
}

func (c *renderedChart) networkPolicy() {
	t := c.t
	if !c.r.networkPolicy {
		assert.Empty(t, c.m.networkPolicies)
		return
	}
	require.Len(t, c.m.networkPolicies, 1)
	np := c.m.networkPolicies[0]
	assert.Equal(t, *c.dep.Spec.Selector, np.Spec.PodSelector)
	assert.ElementsMatch(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes)
	require.Len(t, np.Spec.Egress, 1, "the hooks open no connections; the server's Events go to the API server")
	assert.Empty(t, np.Spec.Egress[0].To, "apiServerTo is empty: the API server's address differs per cluster")
	var egressPorts []int32
	for _, p := range np.Spec.Egress[0].Ports {
		egressPorts = append(egressPorts, p.Port.IntVal)
	}
	assert.Equal(t, []int32{443, 6443}, egressPorts)
	ports := map[int32][]networkingv1.NetworkPolicyPeer{}
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			require.NotNil(t, p.Port)
			ports[p.Port.IntVal] = rule.From
		}
	}
	require.Contains(t, ports, int32(httpContainerPort))
	require.Contains(t, ports, int32(webhookContainerPort))
	assert.NotEmpty(t, ports[httpContainerPort], "hooks and metrics are limited to Metacontroller and Prometheus")
}

func (c *renderedChart) observability() {
	t := c.t
	root := repoRoot(t)
	for _, cm := range []struct {
		namespace, name, key, file string
	}{
		{c.r.dashboards, releaseName + "-dashboard", "sparkhooks.json", dashboardFile},
		{c.r.ksm, releaseName + "-kube-state-metrics", "config.yaml", ksmConfigFile},
	} {
		if cm.namespace == "" {
			for _, got := range c.m.configMaps {
				assert.NotEqual(t, cm.name, got.Name, "%s is off but rendered", cm.name)
			}
			continue
		}
		got := c.m.configMap(cm.namespace, cm.name)
		require.NotNil(t, got, "ConfigMap %s/%s is not rendered", cm.namespace, cm.name)
		want := strings.TrimRight(string(readFile(t, filepath.Join(root, cm.file))), "\n")
		assert.Equal(t, want, got.Data[cm.key], "%s must ship %s unchanged", cm.name, cm.file)
		if cm.key == "sparkhooks.json" {
			assert.Equal(t, "1", got.Labels["grafana_dashboard"], "Grafana's sidecar looks for this label")
		}
	}
	ksm := c.m.clusterRole("sparkhooks-kube-state-metrics")
	// Events and gc are bound cluster-wide where the job namespaces are not a fixed list, and
	// checked by events and gc.
	var bindings []*rbacv1.ClusterRoleBinding
	for _, b := range c.m.clusterRoleBindings {
		if !isEvents(b) && !isGC(b) {
			bindings = append(bindings, b)
		}
	}
	if !c.r.ksmRBAC {
		assert.Nil(t, ksm)
		assert.Empty(t, bindings)
		return
	}
	require.NotNil(t, ksm)
	assert.ElementsMatch(t, []string{"list", "watch"}, grantedVerbsInGroup(ksm.Rules, "sparkoperator.k8s.io", "sparkapplications"))
	assert.ElementsMatch(t, []string{"list", "watch"}, grantedVerbsInGroup(ksm.Rules, "sparkoperator.k8s.io", "scheduledsparkapplications"))
	require.Len(t, bindings, 1)
	assert.Equal(t, ksm.Name, bindings[0].RoleRef.Name)
}

// userRoles: the four kinds join Kubernetes' default roles by aggregation, managed by admin and
// edit, read by view, status read through its subresource by all three and written by none
// (Metacontroller's alone).
func (c *renderedChart) userRoles() {
	t := c.t
	edit, view := c.m.clusterRole("sparkhooks-edit"), c.m.clusterRole("sparkhooks-view")
	require.NotNil(t, edit, "the aggregated edit ClusterRole")
	require.NotNil(t, view, "the aggregated view ClusterRole")
	assert.Equal(t, "true", edit.Labels["rbac.authorization.k8s.io/aggregate-to-edit"])
	assert.Equal(t, "true", edit.Labels["rbac.authorization.k8s.io/aggregate-to-admin"])
	assert.Equal(t, "true", view.Labels["rbac.authorization.k8s.io/aggregate-to-view"])
	assert.Empty(t, view.Labels["rbac.authorization.k8s.io/aggregate-to-edit"])
	for _, kind := range []struct{ group, resource string }{
		{"sparkoperator.k8s.io", "sparkapplications"},
		{"sparkoperator.k8s.io", "scheduledsparkapplications"},
		{"sparkoperator.k8s.io", "sparkconnects"},
		{"spark.apache.org", "sparkclusters"},
	} {
		assert.ElementsMatch(t, []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}, grantedVerbsInGroup(edit.Rules, kind.group, kind.resource), kind.resource)
		assert.ElementsMatch(t, []string{"get", "list", "watch"}, grantedVerbsInGroup(view.Rules, kind.group, kind.resource), kind.resource)
		// Status is read through its subresource too (Airflow's SparkKubernetesOperator), and
		// written by Metacontroller only.
		assert.Equal(t, []string{"get"}, grantedVerbsInGroup(edit.Rules, kind.group, kind.resource+"/status"), kind.resource+"/status")
		assert.Equal(t, []string{"get"}, grantedVerbsInGroup(view.Rules, kind.group, kind.resource+"/status"), kind.resource+"/status")
	}
}

func grantedVerbsInGroup(rules []rbacv1.PolicyRule, group, res string) []string {
	var verbs []string
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, res) {
			verbs = append(verbs, r.Verbs...)
		}
	}
	return verbs
}
