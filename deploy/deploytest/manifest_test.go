package deploytest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatalf("repository root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s has no go.mod: %v", root, err)
	}
	return root
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return data
}

// manifest holds every object of a YAML stream, each decoded into its own type.
type manifest struct {
	deployments          []*appsv1.Deployment
	services             []*corev1.Service
	serviceAccounts      []*corev1.ServiceAccount
	configMaps           []*corev1.ConfigMap
	secrets              []*corev1.Secret
	pdbs                 []*policyv1.PodDisruptionBudget
	webhooks             []*admissionregistrationv1.MutatingWebhookConfiguration
	validatingWebhooks   []*admissionregistrationv1.ValidatingWebhookConfiguration
	roles                []*rbacv1.Role
	roleBindings         []*rbacv1.RoleBinding
	clusterRoles         []*rbacv1.ClusterRole
	clusterRoleBindings  []*rbacv1.ClusterRoleBinding
	networkPolicies      []*networkingv1.NetworkPolicy
	cronJobs             []*batchv1.CronJob
	gcDeployments        []*appsv1.Deployment // gc.mode watch
	compositeControllers []*compositeController
	// historyServer holds the objects of the History Server (historyServer.enabled), kept apart
	// from the hook server's of the same kinds.
	historyServer historyServerObjects
	// Kinds whose Go types live in modules this repository does not depend on (cert-manager,
	// Prometheus Operator); their fields are checked by path.
	certificates    []*unstructured.Unstructured
	issuers         []*unstructured.Unstructured
	serviceMonitors []*unstructured.Unstructured
	prometheusRules []*unstructured.Unstructured
}

// strictDecoder decodes the built-in kinds the chart renders and refuses unknown or duplicate
// fields.
var strictDecoder = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		appsv1.AddToScheme, corev1.AddToScheme, policyv1.AddToScheme, admissionregistrationv1.AddToScheme,
		rbacv1.AddToScheme, networkingv1.AddToScheme, batchv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}()

// splitDocuments splits a YAML stream into documents, leaving out those with no object (only
// comments, or an empty template).
func splitDocuments(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("split YAML documents: %w", err)
		}
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, fmt.Errorf("parse YAML document: %w\n%s", err, doc)
		}
		if len(probe) > 0 {
			docs = append(docs, doc)
		}
	}
}

// decodeManifest decodes every document of data strictly; a kind the tests do not know is an
// error, so that a new template cannot go unchecked.
func decodeManifest(data []byte) (*manifest, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	m := &manifest{}
	for _, doc := range docs {
		if err := m.add(doc); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *manifest) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return fmt.Errorf("read apiVersion and kind: %w", err)
	}
	switch tm.GroupVersionKind().GroupKind().String() {
	case "CompositeController.metacontroller.k8s.io":
		if tm.APIVersion != "metacontroller.k8s.io/v1alpha1" {
			return fmt.Errorf("CompositeController has apiVersion %q, want metacontroller.k8s.io/v1alpha1", tm.APIVersion)
		}
		cc := &compositeController{}
		if err := yaml.UnmarshalStrict(doc, cc); err != nil {
			return fmt.Errorf("decode CompositeController: %w", err)
		}
		m.compositeControllers = append(m.compositeControllers, cc)
		return nil
	case "Certificate.cert-manager.io", "Issuer.cert-manager.io", "ServiceMonitor.monitoring.coreos.com", "PrometheusRule.monitoring.coreos.com":
		return m.addUnstructured(tm, doc)
	}
	obj, _, err := strictDecoder.Decode(doc, nil, nil)
	if err != nil {
		return fmt.Errorf("decode %s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	if m.historyServer.add(obj) {
		return nil
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		if isGC(o) {
			m.gcDeployments = append(m.gcDeployments, o)
			return nil
		}
		m.deployments = append(m.deployments, o)
	case *corev1.Service:
		m.services = append(m.services, o)
	case *corev1.ServiceAccount:
		m.serviceAccounts = append(m.serviceAccounts, o)
	case *corev1.ConfigMap:
		m.configMaps = append(m.configMaps, o)
	case *corev1.Secret:
		m.secrets = append(m.secrets, o)
	case *policyv1.PodDisruptionBudget:
		m.pdbs = append(m.pdbs, o)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		m.webhooks = append(m.webhooks, o)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		m.validatingWebhooks = append(m.validatingWebhooks, o)
	case *rbacv1.Role:
		m.roles = append(m.roles, o)
	case *rbacv1.RoleBinding:
		m.roleBindings = append(m.roleBindings, o)
	case *rbacv1.ClusterRole:
		m.clusterRoles = append(m.clusterRoles, o)
	case *rbacv1.ClusterRoleBinding:
		m.clusterRoleBindings = append(m.clusterRoleBindings, o)
	case *networkingv1.NetworkPolicy:
		m.networkPolicies = append(m.networkPolicies, o)
	case *batchv1.CronJob:
		m.cronJobs = append(m.cronJobs, o)
	default:
		return fmt.Errorf("no checks for %s %s: add it to manifest", tm.APIVersion, tm.Kind)
	}
	return nil
}

func (m *manifest) addUnstructured(tm metav1.TypeMeta, doc []byte) error {
	want := map[string]string{
		"Certificate":    "cert-manager.io/v1",
		"Issuer":         "cert-manager.io/v1",
		"ServiceMonitor": "monitoring.coreos.com/v1",
		"PrometheusRule": "monitoring.coreos.com/v1",
	}[tm.Kind]
	if tm.APIVersion != want {
		return fmt.Errorf("%s has apiVersion %q, want %q", tm.Kind, tm.APIVersion, want)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		return fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	switch tm.Kind {
	case "Certificate":
		m.certificates = append(m.certificates, u)
	case "Issuer":
		m.issuers = append(m.issuers, u)
	case "PrometheusRule":
		m.prometheusRules = append(m.prometheusRules, u)
	default:
		m.serviceMonitors = append(m.serviceMonitors, u)
	}
	return nil
}

// count is the number of objects decoded.
func (m *manifest) count() int {
	return len(m.deployments) + len(m.services) + len(m.serviceAccounts) + len(m.configMaps) +
		len(m.secrets) + len(m.pdbs) + len(m.webhooks) + len(m.validatingWebhooks) + len(m.roles) + len(m.roleBindings) +
		len(m.clusterRoles) + len(m.clusterRoleBindings) + len(m.networkPolicies) + len(m.cronJobs) + len(m.gcDeployments) +
		len(m.compositeControllers) + len(m.certificates) + len(m.issuers) + len(m.serviceMonitors) + len(m.prometheusRules)
}

func (m *manifest) configMap(namespace, name string) *corev1.ConfigMap {
	for _, cm := range m.configMaps {
		if cm.Namespace == namespace && cm.Name == name {
			return cm
		}
	}
	return nil
}

func (m *manifest) clusterRole(name string) *rbacv1.ClusterRole {
	for _, r := range m.clusterRoles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func (m *manifest) secret(namespace, name string) *corev1.Secret {
	for _, s := range m.secrets {
		if s.Namespace == namespace && s.Name == name {
			return s
		}
	}
	return nil
}

func (m *manifest) service(namespace, name string) *corev1.Service {
	for _, s := range m.services {
		if s.Namespace == namespace && s.Name == name {
			return s
		}
	}
	return nil
}

// controllerFor is the registration of the parent resource of apiVersion: two APIs have a
// sparkapplications resource.
func (m *manifest) controllerFor(apiVersion, resource string) *compositeController {
	for _, cc := range m.compositeControllers {
		if cc.Spec.ParentResource.APIVersion == apiVersion && cc.Spec.ParentResource.Resource == resource {
			return cc
		}
	}
	return nil
}

func unstructuredNamed(objs []*unstructured.Unstructured, namespace, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetNamespace() == namespace && u.GetName() == name {
			return u
		}
	}
	return nil
}
