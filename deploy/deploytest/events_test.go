package deploytest

import (
	"strconv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// isEvents tells the RBAC objects that let the server record Events from the rest of the chart.
func isEvents(obj metav1.Object) bool {
	return obj.GetLabels()["app.kubernetes.io/component"] == "events"
}

// events checks that the server records Events (on by default) and may do exactly what
// client-go's events recorder does, create and patch events.k8s.io Events, in the job
// namespaces and nowhere else.
func (c *renderedChart) events() {
	t := c.t
	on, _ := c.arg("events")
	assert.Equal(t, "true", on)
	qps, _ := c.arg("events-qps")
	_, err := strconv.Atoi(qps)
	assert.NoError(t, err, "--events-qps=%q", qps)

	sa := c.dep.Spec.Template.Spec.ServiceAccountName
	want := []rbacv1.PolicyRule{{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}}}
	var namespaces []string
	for _, b := range c.m.roleBindings {
		if !isEvents(b) {
			continue
		}
		namespaces = append(namespaces, b.Namespace)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: releaseNamespace}}, b.Subjects)
		var role *rbacv1.Role
		for _, r := range c.m.roles {
			if r.Namespace == b.Namespace && r.Name == b.RoleRef.Name && b.RoleRef.Kind == "Role" {
				role = r
			}
		}
		require.NotNil(t, role, "RoleBinding %s/%s names no rendered Role", b.Namespace, b.Name)
		assert.Equal(t, want, role.Rules, "the server may create and patch Events, nothing else")
	}
	fixed := c.r.fixedJobNamespaces()
	assert.ElementsMatch(t, fixed, namespaces, "the server records Events in the job namespaces")
	for _, b := range c.m.roleBindings {
		if !isEvents(b) {
			for _, s := range b.Subjects {
				assert.False(t, s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == releaseNamespace,
					"RoleBinding %s/%s grants the server more", b.Namespace, b.Name)
			}
		}
	}
	for _, b := range c.m.clusterRoleBindings {
		if len(fixed) == 0 && isEvents(b) {
			// Every namespace, or those a selector picks: granted cluster-wide, still only Events.
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: releaseNamespace}}, b.Subjects)
			assert.Equal(t, want, c.clusterRoleRules(b.RoleRef.Name), "the server may create and patch Events, nothing else")
			continue
		}
		for _, s := range b.Subjects {
			assert.False(t, s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == releaseNamespace,
				"ClusterRoleBinding %s grants the server rights where there are job namespaces", b.Name)
		}
	}
}

// clusterRoleRules are the rules of the rendered ClusterRole name.
func (c *renderedChart) clusterRoleRules(name string) []rbacv1.PolicyRule {
	for _, r := range c.m.clusterRoles {
		if r.Name == name {
			return r.Rules
		}
	}
	c.t.Fatalf("no rendered ClusterRole %s", name)
	return nil
}
