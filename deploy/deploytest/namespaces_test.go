package deploytest

import (
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// namespaceSelection checks spark.jobNamespaceSelector: the server gets it as
// --namespace-selector, with the listed namespaces as --namespaces (either selects), and the
// chart ships the driver's rules as a ClusterRole for the owners of selected namespaces to bind,
// bound to nobody. The webhooks and the cluster-wide grants are checked with them.
func (c *renderedChart) namespaceSelection() {
	t := c.t
	sel, hasSel := c.arg("namespace-selector")
	names, hasNames := c.arg("namespaces")
	var driverRole *rbacv1.ClusterRole
	for _, r := range c.m.clusterRoles {
		if r.Labels["app.kubernetes.io/component"] == "spark-driver" {
			driverRole = r
		}
	}
	if c.r.namespaceSelector == "" {
		assert.False(t, hasSel || hasNames, "no namespace selection unless the values set a selector")
		assert.Nil(t, driverRole, "no driver ClusterRole without a selector")
		return
	}
	assert.Equal(t, c.r.namespaceSelector, sel)
	assert.Equal(t, strings.Join(c.r.jobNamespaces, ","), names, "the listed namespaces are selected too")
	require.NotNil(t, driverRole, "the driver's rules as a ClusterRole to bind in selected namespaces")
	for _, ns := range c.r.jobNamespaces {
		for _, r := range c.m.roles {
			if r.Namespace == ns && r.Labels["app.kubernetes.io/component"] == "spark-driver" {
				assert.Equal(t, r.Rules, driverRole.Rules, "the ClusterRole grants what the Role of a listed namespace does")
			}
		}
	}
	for _, b := range c.m.clusterRoleBindings {
		assert.NotEqual(t, driverRole.Name, b.RoleRef.Name, "the driver ClusterRole is for RoleBindings in selected namespaces only")
	}
}

// kubeflowMetrics checks metrics.kubeflow: the server's flags, and the recording rules of the
// running gauges.
func (c *renderedChart) kubeflowMetrics() {
	t := c.t
	on, _ := c.arg("kubeflow-metrics")
	labels, _ := c.arg("metrics-labels")
	if !c.r.kubeflowMetrics {
		assert.Empty(t, on)
		assert.Empty(t, c.m.prometheusRules)
		return
	}
	assert.Equal(t, "true", on)
	assert.Equal(t, "app-type,namespace", labels)
	submit, _ := c.arg("metrics-job-submit-latency-buckets")
	assert.Equal(t, "0.5,1,2,4,8,16,32,64,128,256", submit)
	require.Len(t, c.m.prometheusRules, 1)
	groups, _, err := unstructured.NestedSlice(c.m.prometheusRules[0].Object, "spec", "groups")
	require.NoError(t, err)
	require.Len(t, groups, 1)
	rules, _, err := unstructured.NestedSlice(groups[0].(map[string]any), "rules")
	require.NoError(t, err)
	recorded := map[string]string{}
	for _, r := range rules {
		rule := r.(map[string]any)
		recorded[rule["record"].(string)], _ = rule["expr"].(string)
	}
	assert.Contains(t, recorded["spark_application_running_count"], "kube_sparkapplication_state")
	assert.Contains(t, recorded["spark_executor_running_count"], `label_spark_role="executor"`)
}
