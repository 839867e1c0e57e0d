package deploytest

import (
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sparkhooks/sparkhooks/hooks"
	"github.com/sparkhooks/sparkhooks/internal/validate"
)

// compositeController mirrors Metacontroller's metacontroller.k8s.io/v1alpha1 CompositeController
// (pkg/apis/metacontroller/v1alpha1), field for field, so that strict decoding catches a field
// Metacontroller would not read.
type compositeController struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              compositeControllerSpec `json:"spec"`
}

type compositeControllerSpec struct {
	ParentResource      parentResourceRule  `json:"parentResource"`
	ChildResources      []childResourceRule `json:"childResources,omitempty"`
	Hooks               *compositeHooks     `json:"hooks,omitempty"`
	ResyncPeriodSeconds *int32              `json:"resyncPeriodSeconds,omitempty"`
	GenerateSelector    *bool               `json:"generateSelector,omitempty"`
}

type resourceRule struct {
	APIVersion string `json:"apiVersion"`
	Resource   string `json:"resource"`
}

type parentResourceRule struct {
	resourceRule    `json:",inline"`
	RevisionHistory *struct {
		FieldPaths []string `json:"fieldPaths,omitempty"`
	} `json:"revisionHistory,omitempty"`
	LabelSelector       *metav1.LabelSelector `json:"labelSelector,omitempty"`
	IgnoreStatusChanges *bool                 `json:"ignoreStatusChanges,omitempty"`
}

// checkIgnoresStatusChanges: Metacontroller's own status write must not bring another sync
// (measured with v4.17.2: 73 syncs instead of 106 for the 16 examples); a hook that needs to be
// called again asks with resyncAfterSeconds.
func checkIgnoresStatusChanges(t *testing.T, cc *compositeController) {
	t.Helper()
	require.NotNil(t, cc.Spec.ParentResource.IgnoreStatusChanges, "%s: parentResource.ignoreStatusChanges is unset", cc.Name)
	assert.True(t, *cc.Spec.ParentResource.IgnoreStatusChanges, "%s: parentResource.ignoreStatusChanges", cc.Name)
}

type childResourceRule struct {
	resourceRule   `json:",inline"`
	UpdateStrategy *childUpdateStrategy `json:"updateStrategy,omitempty"`
}

type childUpdateStrategy struct {
	Method       string `json:"method,omitempty"`
	StatusChecks struct {
		Conditions []struct {
			Type   string  `json:"type"`
			Status *string `json:"status,omitempty"`
			Reason *string `json:"reason,omitempty"`
		} `json:"conditions,omitempty"`
	} `json:"statusChecks"`
}

type compositeHooks struct {
	Customize       *hook `json:"customize,omitempty"`
	Sync            *hook `json:"sync,omitempty"`
	Finalize        *hook `json:"finalize,omitempty"`
	PreUpdateChild  *hook `json:"preUpdateChild,omitempty"`
	PostUpdateChild *hook `json:"postUpdateChild,omitempty"`
}

type hook struct {
	Version string   `json:"version,omitempty"`
	Webhook *webhook `json:"webhook,omitempty"`
}

type webhook struct {
	URL     *string          `json:"url,omitempty"`
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	Path    *string          `json:"path,omitempty"`
	Service *struct {
		Name      string  `json:"name"`
		Namespace string  `json:"namespace"`
		Port      *int32  `json:"port,omitempty"`
		Protocol  *string `json:"protocol,omitempty"`
	} `json:"service,omitempty"`
}

// The update strategies every SparkApplication child must have; see
// metacontroller/sparkapplication-controller.yaml for why.
var sparkApplicationChildren = []childResourceRule{
	child("v1", "pods", "OnDelete"),
	child("v1", "configmaps", "OnDelete"),
	child("v1", "services", "InPlace"),
	child("networking.k8s.io/v1", "ingresses", "InPlace"),
	child("networking.k8s.io/v1", "networkpolicies", "InPlace"),
}

var (
	volcanoPodGroups          = child("scheduling.volcano.sh/v1beta1", "podgroups", "InPlace")
	schedulerPluginsPodGroups = child("scheduling.x-k8s.io/v1alpha1", "podgroups", "InPlace")
	driverPDBs                = child("policy/v1", "poddisruptionbudgets", "InPlace")
	// A Workload's pod sets are immutable and Kueue owns its status: sparkhooks never updates
	// one, it replaces it.
	kueueWorkloads = child("kueue.x-k8s.io/v1beta2", "workloads", "OnDelete")
	// Gateway API routes follow the spec in place, as Ingresses do.
	httpRoutes = child("gateway.networking.k8s.io/v1", "httproutes", "InPlace")
	grpcRoutes = child("gateway.networking.k8s.io/v1", "grpcroutes", "InPlace")
)

func child(apiVersion, resource, method string) childResourceRule {
	return childResourceRule{
		resourceRule:   resourceRule{APIVersion: apiVersion, Resource: resource},
		UpdateStrategy: &childUpdateStrategy{Method: method},
	}
}

// metacontrollerHookTimeout is Metacontroller's own default; ours must be well under it.
const metacontrollerHookTimeout = 10 * time.Second

// hookURLs checks that every hook of cc is a webhook URL under base and returns the paths by hook.
func hookURLs(t *testing.T, cc *compositeController, base *url.URL) map[string]string {
	t.Helper()
	require.NotNil(t, cc.Spec.Hooks, "%s has no hooks", cc.Name)
	hooksByName := map[string]*hook{
		"sync":            cc.Spec.Hooks.Sync,
		"finalize":        cc.Spec.Hooks.Finalize,
		"customize":       cc.Spec.Hooks.Customize,
		"preUpdateChild":  cc.Spec.Hooks.PreUpdateChild,
		"postUpdateChild": cc.Spec.Hooks.PostUpdateChild,
	}
	paths := map[string]string{}
	for name, h := range hooksByName {
		if h == nil {
			continue
		}
		require.NotNil(t, h.Webhook, "%s hook %s is not a webhook", cc.Name, name)
		require.NotNil(t, h.Webhook.URL, "%s hook %s has no url", cc.Name, name)
		assert.Nil(t, h.Webhook.Service, "%s hook %s: url and service are exclusive", cc.Name, name)
		assert.Nil(t, h.Webhook.Path, "%s hook %s: the path belongs in the url", cc.Name, name)
		u, err := url.Parse(*h.Webhook.URL)
		require.NoError(t, err, "%s hook %s url", cc.Name, name)
		assert.Equal(t, base.Scheme, u.Scheme, "%s hook %s scheme", cc.Name, name)
		assert.Equal(t, base.Host, u.Host, "%s hook %s host", cc.Name, name)
		assert.Contains(t, hooks.Routes(), u.Path, "%s hook %s: the server registers no such route", cc.Name, name)
		require.NotNil(t, h.Webhook.Timeout, "%s hook %s has no timeout (Metacontroller's default is 10 s)", cc.Name, name)
		assert.Positive(t, h.Webhook.Timeout.Duration, "%s hook %s timeout", cc.Name, name)
		assert.Less(t, h.Webhook.Timeout.Duration, metacontrollerHookTimeout, "%s hook %s timeout", cc.Name, name)
		if name == "customize" {
			// A v2 customize hook's label rules select related objects in every namespace.
			assert.Empty(t, h.Version, "%s customize hook: the default version, v1", cc.Name)
		}
		paths[name] = u.Path
	}
	return paths
}

// checkSparkApplicationController checks the SparkApplication controller; optional are the
// child types declared besides the base ones, in the chart's order.
func checkSparkApplicationController(t *testing.T, cc *compositeController, base *url.URL, optional ...childResourceRule) {
	t.Helper()
	require.NotNil(t, cc, "no CompositeController for sparkapplications")
	assert.Equal(t, resourceRule{APIVersion: "sparkoperator.k8s.io/v1beta2", Resource: "sparkapplications"}, cc.Spec.ParentResource.resourceRule)
	checkIgnoresStatusChanges(t, cc)
	require.NotNil(t, cc.Spec.GenerateSelector)
	assert.True(t, *cc.Spec.GenerateSelector, "SparkApplications carry no selector")
	assert.Nil(t, cc.Spec.ResyncPeriodSeconds, "the sync hook answers resyncAfterSeconds; a fixed period only adds idle syncs")
	want := append(slices.Clone(sparkApplicationChildren), optional...)
	assert.Equal(t, want, cc.Spec.ChildResources)
	assert.Equal(t, map[string]string{
		"sync":      hooks.SparkApplicationSyncPath,
		"finalize":  hooks.SparkApplicationFinalizePath,
		"customize": hooks.SparkApplicationCustomizePath,
	}, hookURLs(t, cc, base))
	checkSyncHooksV2(t, cc)
}

func checkScheduledController(t *testing.T, cc *compositeController, base *url.URL) {
	t.Helper()
	require.NotNil(t, cc, "no CompositeController for scheduledsparkapplications")
	assert.Equal(t, resourceRule{APIVersion: "sparkoperator.k8s.io/v1beta2", Resource: "scheduledsparkapplications"}, cc.Spec.ParentResource.resourceRule)
	checkIgnoresStatusChanges(t, cc)
	require.NotNil(t, cc.Spec.GenerateSelector)
	assert.True(t, *cc.Spec.GenerateSelector)
	assert.Nil(t, cc.Spec.ResyncPeriodSeconds)
	// A run, once created, is never rewritten: see metacontroller/scheduledsparkapplication-controller.yaml.
	assert.Equal(t, []childResourceRule{child("sparkoperator.k8s.io/v1beta2", "sparkapplications", "OnDelete")}, cc.Spec.ChildResources)
	assert.Equal(t, map[string]string{"sync": hooks.ScheduledSyncPath}, hookURLs(t, cc, base))
}

func checkConnectController(t *testing.T, cc *compositeController, base *url.URL, optional ...childResourceRule) {
	t.Helper()
	require.NotNil(t, cc, "no CompositeController for sparkconnects")
	assert.Equal(t, resourceRule{APIVersion: "sparkoperator.k8s.io/v1alpha1", Resource: "sparkconnects"}, cc.Spec.ParentResource.resourceRule)
	checkIgnoresStatusChanges(t, cc)
	require.NotNil(t, cc.Spec.GenerateSelector)
	assert.True(t, *cc.Spec.GenerateSelector)
	assert.Nil(t, cc.Spec.ResyncPeriodSeconds, "the sync hook is woken by the server Pod's events")
	assert.Equal(t, append([]childResourceRule{
		child("v1", "pods", "OnDelete"),
		child("v1", "configmaps", "OnDelete"),
		child("v1", "services", "InPlace"),
	}, optional...), cc.Spec.ChildResources)
	assert.Equal(t, map[string]string{
		"sync":      hooks.SparkConnectSyncPath,
		"finalize":  hooks.SparkConnectFinalizePath,
		"customize": hooks.SparkConnectCustomizePath,
	}, hookURLs(t, cc, base))
	checkSyncHooksV2(t, cc)
}

func checkClusterController(t *testing.T, cc *compositeController, base *url.URL) {
	t.Helper()
	require.NotNil(t, cc, "no CompositeController for sparkclusters")
	assert.Equal(t, resourceRule{APIVersion: "spark.apache.org/v1", Resource: "sparkclusters"}, cc.Spec.ParentResource.resourceRule)
	checkIgnoresStatusChanges(t, cc)
	require.NotNil(t, cc.Spec.GenerateSelector)
	assert.True(t, *cc.Spec.GenerateSelector)
	assert.Nil(t, cc.Spec.ResyncPeriodSeconds, "the StatefulSets' status changes wake the sync hook")
	assert.Equal(t, []childResourceRule{
		child("v1", "services", "InPlace"),
		child("apps/v1", "statefulsets", "InPlace"),
		child("networking.k8s.io/v1", "networkpolicies", "InPlace"),
		child("autoscaling/v2", "horizontalpodautoscalers", "InPlace"),
		child("policy/v1", "poddisruptionbudgets", "InPlace"),
	}, cc.Spec.ChildResources)
	assert.Equal(t, map[string]string{
		"sync":      hooks.SparkClusterSyncPath,
		"finalize":  hooks.SparkClusterFinalizePath,
		"customize": hooks.SparkClusterCustomizePath,
	}, hookURLs(t, cc, base))
}

func checkApacheApplicationController(t *testing.T, cc *compositeController, base *url.URL, optional ...childResourceRule) {
	t.Helper()
	require.NotNil(t, cc, "no CompositeController for Apache's sparkapplications")
	checkIgnoresStatusChanges(t, cc)
	require.NotNil(t, cc.Spec.GenerateSelector)
	assert.True(t, *cc.Spec.GenerateSelector)
	assert.Nil(t, cc.Spec.ResyncPeriodSeconds, "every answer asks for its next deadline")
	assert.Equal(t, append([]childResourceRule{
		child("v1", "pods", "OnDelete"),
		child("v1", "configmaps", "OnDelete"),
		child("v1", "services", "InPlace"),
		child("networking.k8s.io/v1", "ingresses", "InPlace"),
	}, optional...), cc.Spec.ChildResources)
	assert.Equal(t, map[string]string{
		"sync":      hooks.ApacheSparkApplicationSyncPath,
		"finalize":  hooks.ApacheSparkApplicationFinalizePath,
		"customize": hooks.ApacheSparkApplicationCustomizePath,
	}, hookURLs(t, cc, base))
	checkSyncHooksV2(t, cc)
}

// checkPodWebhook checks the registration of the pod-mutation webhook; the caller checks where
// clientConfig points and the CA.
func checkPodWebhook(t *testing.T, mwc *admissionregistrationv1.MutatingWebhookConfiguration) *admissionregistrationv1.MutatingWebhook {
	t.Helper()
	require.Len(t, mwc.Webhooks, 1, "%s: one webhook, for Spark pods", mwc.Name)
	w := &mwc.Webhooks[0]
	assert.Equal(t, []string{"v1"}, w.AdmissionReviewVersions)
	require.NotNil(t, w.SideEffects)
	assert.Equal(t, admissionregistrationv1.SideEffectClassNone, *w.SideEffects)
	assert.Nil(t, w.ClientConfig.URL, "the webhook is reached through its Service")
	require.NotNil(t, w.ClientConfig.Service)
	require.NotNil(t, w.ClientConfig.Service.Path)
	assert.Equal(t, hooks.MutatePath, *w.ClientConfig.Service.Path)
	assert.Contains(t, hooks.WebhookRoutes(), *w.ClientConfig.Service.Path, "the TLS listener must serve the webhook path")
	assert.Equal(t, []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
			Scope: ptr(admissionregistrationv1.NamespacedScope),
		},
	}}, w.Rules)
	require.NotNil(t, w.ObjectSelector, "without an objectSelector every pod in the cluster waits on the webhook")
	assert.Equal(t, &metav1.LabelSelector{MatchLabels: map[string]string{"sparkoperator.k8s.io/launched-by-spark-operator": "true"}}, w.ObjectSelector)
	require.NotNil(t, w.NamespaceSelector)
	assert.Contains(t, w.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"},
	})
	require.NotNil(t, w.FailurePolicy)
	assert.Contains(t, []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Fail, admissionregistrationv1.Ignore}, *w.FailurePolicy)
	require.NotNil(t, w.TimeoutSeconds, "the API server's default is 10 s")
	assert.LessOrEqual(t, *w.TimeoutSeconds, int32(5))
	require.NotNil(t, w.ReinvocationPolicy)
	assert.Equal(t, admissionregistrationv1.IfNeededReinvocationPolicy, *w.ReinvocationPolicy)
	return w
}

// checkValidatingWebhooks checks the registration of the validating webhook: one webhook per
// kind package validate knows, each on its route of the TLS listener, for CREATE and UPDATE of
// its resource in jobNamespaces (every namespace when empty), or in those namespaceSelector (a
// selector in kubectl's syntax) picks: with both, a second webhook per kind for the selected
// namespaces that are not listed. The caller checks where clientConfig points and the CA.
func checkValidatingWebhooks(t *testing.T, vwc *admissionregistrationv1.ValidatingWebhookConfiguration, jobNamespaces []string, namespaceSelector string) {
	t.Helper()
	kinds := validate.Kinds()
	perKind := 1
	if namespaceSelector != "" && len(jobNamespaces) > 0 {
		perKind = 2
	}
	require.Len(t, vwc.Webhooks, perKind*len(kinds), "%s: one webhook per validated kind and namespace scope", vwc.Name)
	listed := metav1.LabelSelectorRequirement{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: jobNamespaces}
	for i := range vwc.Webhooks {
		kind, w := kinds[i/perKind], &vwc.Webhooks[i]
		selected := namespaceSelector != "" && (perKind == 1 || i%2 == 1)
		suffix := ""
		if selected && perKind == 2 {
			suffix = "-selected"
		}
		assert.Equal(t, kind.Route()+"s"+suffix+".sparkhooks.sparkoperator.k8s.io", w.Name)
		assert.Equal(t, []string{"v1"}, w.AdmissionReviewVersions, w.Name)
		require.NotNil(t, w.SideEffects, w.Name)
		assert.Equal(t, admissionregistrationv1.SideEffectClassNone, *w.SideEffects, w.Name)
		assert.Nil(t, w.ClientConfig.URL, "%s: the webhook is reached through its Service", w.Name)
		require.NotNil(t, w.ClientConfig.Service, w.Name)
		require.NotNil(t, w.ClientConfig.Service.Path, w.Name)
		assert.Equal(t, hooks.ValidatePath(kind.Route()), *w.ClientConfig.Service.Path, w.Name)
		assert.Contains(t, hooks.WebhookRoutes(), *w.ClientConfig.Service.Path, "%s: the TLS listener must serve the path", w.Name)
		assert.Equal(t, []admissionregistrationv1.RuleWithOperations{{
			// Not DELETE, and not the status subresource: neither is ever refused.
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{kind.GroupVersion.Group}, APIVersions: []string{kind.GroupVersion.Version}, Resources: []string{kind.Resource},
				Scope: ptr(admissionregistrationv1.NamespacedScope),
			},
		}}, w.Rules, w.Name)
		assert.Nil(t, w.ObjectSelector, w.Name)
		switch {
		case selected:
			// The chart turns the selector into matchExpressions itself: they must select what
			// the server's parser (labels.Parse, as --namespace-selector) makes of the text, less
			// the listed namespaces.
			require.NotNil(t, w.NamespaceSelector, w.Name)
			checkSameNamespaces(t, w.Name, namespaceSelector, jobNamespaces, w.NamespaceSelector)
		case len(jobNamespaces) == 0:
			assert.Nil(t, w.NamespaceSelector, w.Name)
		default:
			assert.Equal(t, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{listed}},
				w.NamespaceSelector, "%s: scoped to the job namespaces", w.Name)
		}
		require.NotNil(t, w.FailurePolicy, w.Name)
		assert.Equal(t, admissionregistrationv1.Ignore, *w.FailurePolicy, "%s: the hooks validate again, so an outage must not block users", w.Name)
		require.NotNil(t, w.TimeoutSeconds, "%s: the API server's default is 10 s", w.Name)
		assert.LessOrEqual(t, *w.TimeoutSeconds, int32(3), w.Name)
		require.NotNil(t, w.MatchPolicy, w.Name)
		assert.Equal(t, admissionregistrationv1.Equivalent, *w.MatchPolicy, w.Name)
	}
}

func ptr[T any](v T) *T { return &v }

// checkSameNamespaces compares a webhook's namespaceSelector with the server's reading of the
// selector text, minus the listed namespaces, on namespaces labelled with every combination of
// the keys and values the text names (and some it does not).
func checkSameNamespaces(t *testing.T, webhook, text string, listed []string, got *metav1.LabelSelector) {
	t.Helper()
	want, err := labels.Parse(text)
	require.NoError(t, err)
	sel, err := metav1.LabelSelectorAsSelector(got)
	require.NoError(t, err, webhook)
	reqs, _ := want.Requirements()
	keys := []string{"other"}
	values := []string{"", "other"}
	for _, r := range reqs {
		keys = append(keys, r.Key())
		values = append(values, r.Values().UnsortedList()...)
	}
	names := append([]string{"elsewhere"}, listed...)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		set := labels.Set{"kubernetes.io/metadata.name": names[rng.IntN(len(names))]}
		for _, k := range keys {
			if rng.IntN(3) > 0 {
				set[k] = values[rng.IntN(len(values))]
			}
		}
		expected := want.Matches(set) && !slices.Contains(listed, set["kubernetes.io/metadata.name"])
		require.Equal(t, expected, sel.Matches(set), "%s: namespace labelled %v", webhook, set)
	}
}

func mustParseURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}

func loadManifest(t *testing.T, path string) *manifest {
	t.Helper()
	m, err := decodeManifest(readFile(t, path))
	require.NoError(t, err, filepath.Base(path))
	return m
}

// staticRegistrations reads metacontroller/*.yaml, the files for clusters without the chart.
func staticRegistrations(t *testing.T) (base, volcano *manifest) {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "metacontroller")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	base = &manifest{}
	for _, f := range files {
		m := loadManifest(t, f)
		base.compositeControllers = append(base.compositeControllers, m.compositeControllers...)
		base.webhooks = append(base.webhooks, m.webhooks...)
		base.validatingWebhooks = append(base.validatingWebhooks, m.validatingWebhooks...)
		assert.Equal(t, len(m.compositeControllers)+len(m.webhooks)+len(m.validatingWebhooks), m.count(), "%s: only registrations belong in metacontroller/", f)
	}
	volcano = loadManifest(t, filepath.Join(dir, "volcano", "sparkapplication-controller.yaml"))
	return base, volcano
}

// The static files assume the Service "sparkhooks" in namespace "sparkhooks".
const staticHookBase = "http://sparkhooks.sparkhooks.svc:8080"

func TestStaticRegistrations(t *testing.T) {
	base, volcano := staticRegistrations(t)
	hookBase := mustParseURL(t, staticHookBase)

	require.Len(t, base.compositeControllers, 5)
	checkSparkApplicationController(t, base.controllerFor("sparkoperator.k8s.io/v1beta2", "sparkapplications"), hookBase)
	checkScheduledController(t, base.controllerFor("sparkoperator.k8s.io/v1beta2", "scheduledsparkapplications"), hookBase)
	checkConnectController(t, base.controllerFor("sparkoperator.k8s.io/v1alpha1", "sparkconnects"), hookBase)
	checkClusterController(t, base.controllerFor("spark.apache.org/v1", "sparkclusters"), hookBase)
	checkApacheApplicationController(t, base.controllerFor("spark.apache.org/v1", "sparkapplications"), hookBase, child("networking.k8s.io/v1", "networkpolicies", "InPlace"))

	require.Len(t, volcano.compositeControllers, 1)
	variant := volcano.controllerFor("sparkoperator.k8s.io/v1beta2", "sparkapplications")
	checkSparkApplicationController(t, variant, hookBase, volcanoPodGroups)
	// Applied instead of the base file, so it must replace it: same name, same everything else.
	plain := base.controllerFor("sparkoperator.k8s.io/v1beta2", "sparkapplications")
	assert.Equal(t, plain.Name, variant.Name)
	assert.Equal(t, plain.Spec.Hooks, variant.Spec.Hooks)

	require.Len(t, base.webhooks, 1)
	mwc := base.webhooks[0]
	w := checkPodWebhook(t, mwc)
	assert.Equal(t, "sparkhooks", w.ClientConfig.Service.Name)
	assert.Equal(t, "sparkhooks", w.ClientConfig.Service.Namespace)
	require.NotNil(t, w.ClientConfig.Service.Port)
	assert.Equal(t, int32(443), *w.ClientConfig.Service.Port)
	assert.Empty(t, w.ClientConfig.CABundle, "cert-manager injects the CA")
	assert.Equal(t, "sparkhooks/sparkhooks-webhook", mwc.Annotations["cert-manager.io/inject-ca-from"])

	require.Len(t, base.validatingWebhooks, 1)
	vwc := base.validatingWebhooks[0]
	checkValidatingWebhooks(t, vwc, []string{"default"}, "")
	for _, v := range vwc.Webhooks {
		// The same Service, port and certificate as the pod-mutation webhook.
		want := w.ClientConfig.DeepCopy()
		want.Service.Path = v.ClientConfig.Service.Path
		assert.Equal(t, want, &v.ClientConfig, v.Name)
	}
	assert.Equal(t, mwc.Annotations, vwc.Annotations)
}

func TestDecodeManifestRefusesUnknownFieldsAndKinds(t *testing.T) {
	tests := []struct {
		name, doc, wantErr string
	}{
		{
			name:    "misspelt CompositeController field",
			doc:     "apiVersion: metacontroller.k8s.io/v1alpha1\nkind: CompositeController\nmetadata: {name: x}\nspec:\n  parentResource: {apiVersion: v1, resource: pods}\n  generateSelecter: true\n",
			wantErr: `unknown field "generateSelecter"`,
		},
		{
			name:    "misspelt webhook field",
			doc:     "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: x}\nwebhooks:\n- name: a.b.c\n  sideEfects: None\n",
			wantErr: `unknown field "webhooks[0].sideEfects"`,
		},
		{
			name:    "kind without checks",
			doc:     "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\n",
			wantErr: "batch/v1 Job",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeManifest([]byte(tt.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// checkSyncHooksV2 checks that the sync and finalize hooks of cc are version v2: a v1 request
// of Metacontroller v4.17 leaves out the cluster-scoped related objects (ResourceFlavors,
// PriorityClasses) a queued application's hooks need.
func checkSyncHooksV2(t *testing.T, cc *compositeController) {
	t.Helper()
	for name, h := range map[string]*hook{"sync": cc.Spec.Hooks.Sync, "finalize": cc.Spec.Hooks.Finalize} {
		if assert.NotNil(t, h, "%s has no %s hook", cc.Name, name) {
			assert.Equal(t, "v2", h.Version, "%s %s hook version", cc.Name, name)
		}
	}
}
