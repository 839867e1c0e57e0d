package deploytest

import (
	"slices"
	"strings"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// isGC tells the objects of gc (its Deployment or CronJob) from the rest of the chart.
func isGC(obj metav1.Object) bool {
	return obj.GetLabels()["app.kubernetes.io/component"] == "gc"
}

// gc checks the Deployment (gc.mode watch) or CronJob (cronjob) that runs sparkhooks gc: the
// server's image and hardening, the job namespaces as its scope, RBAC limited to listing,
// watching and deleting SparkApplications there, and pods the server's Service and
// PodDisruptionBudget do not select. It also checks that the operator default TTL and the Kueue
// mode reach the server.
func (c *renderedChart) gc() {
	t := c.t
	defaultSA, _ := c.arg("default-service-account")
	assert.Equal(t, c.r.defaultServiceAccount, defaultSA, "--default-service-account: the value, else the chart's spark service account")
	ttl, hasTTL := c.arg("default-time-to-live-seconds")
	assert.Equal(t, c.r.defaultTTL != "", hasTTL, "--default-time-to-live-seconds only when the values set it")
	assert.Equal(t, c.r.defaultTTL, ttl)
	_, kueueIntegration := c.arg("kueue-spark-application-integration")
	assert.Equal(t, c.r.kueueIntegration, kueueIntegration, "--kueue-spark-application-integration only in Kueue's own integration's mode")

	var template corev1.PodTemplateSpec
	if c.r.gcCronJob {
		require.Len(t, c.m.cronJobs, 1)
		require.Empty(t, c.m.gcDeployments)
		cj := c.m.cronJobs[0]
		assert.Equal(t, releaseNamespace, cj.Namespace)
		_, err := cron.ParseStandard(cj.Spec.Schedule)
		assert.NoError(t, err, "schedule %q", cj.Spec.Schedule)
		assert.Equal(t, batchv1.ForbidConcurrent, cj.Spec.ConcurrencyPolicy, "two passes would race each other's deletions")
		job := cj.Spec.JobTemplate.Spec
		require.NotNil(t, job.ActiveDeadlineSeconds, "a hung pass must end")
		template = job.Template
		assert.Equal(t, corev1.RestartPolicyNever, template.Spec.RestartPolicy)
	} else {
		require.Len(t, c.m.gcDeployments, 1)
		require.Empty(t, c.m.cronJobs)
		dep := c.m.gcDeployments[0]
		assert.Equal(t, releaseNamespace, dep.Namespace)
		require.NotNil(t, dep.Spec.Replicas)
		assert.Equal(t, int32(1), *dep.Spec.Replicas, "one watcher")
		assert.Equal(t, appsv1.RecreateDeploymentStrategyType, dep.Spec.Strategy.Type, "two watchers would race each other's deletions")
		require.NotNil(t, dep.Spec.Selector)
		assert.True(t, labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).Matches(labels.Set(dep.Spec.Template.Labels)), "the Deployment selects its pods")
		template = dep.Spec.Template
	}

	pod := template.Spec
	require.NotNil(t, pod.AutomountServiceAccountToken)
	assert.True(t, *pod.AutomountServiceAccountToken, "gc calls the API")
	require.Len(t, pod.Containers, 1)
	ctr := pod.Containers[0]
	server := c.container()
	assert.Equal(t, server.Image, ctr.Image, "the server's image")
	assert.Equal(t, c.dep.Spec.Template.Spec.SecurityContext, pod.SecurityContext, "the server's pod security context")
	assert.Equal(t, server.SecurityContext, ctr.SecurityContext, "the server's container security context")
	assert.False(t, ctr.Resources.Limits.Memory().IsZero(), "a memory limit")
	assert.False(t, ctr.Resources.Requests.Cpu().IsZero(), "a CPU request")

	require.NotEmpty(t, ctr.Args)
	assert.Equal(t, "gc", ctr.Args[0])
	assert.Equal(t, !c.r.gcCronJob, slices.Contains(ctr.Args, "--watch"), "a watch in the Deployment, a pass in the CronJob")
	if fixed := c.r.fixedJobNamespaces(); len(fixed) > 0 {
		assert.Contains(t, ctr.Args, "--namespaces="+strings.Join(fixed, ","), "gc looks at the job namespaces only")
	} else {
		for _, a := range ctr.Args {
			assert.False(t, strings.HasPrefix(a, "--namespaces"), "gc looks at every namespace a selector may pick: %s", a)
		}
	}
	assert.Equal(t, c.r.gcDryRun, slices.Contains(ctr.Args, "--dry-run"))

	podLabels := labels.Set(template.Labels)
	assert.False(t, labels.SelectorFromSet(c.svc.Spec.Selector).Matches(podLabels), "the Service would send hook calls to gc pods")
	for _, pdb := range c.m.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		require.NoError(t, err)
		assert.False(t, sel.Matches(podLabels), "the PodDisruptionBudget would count gc pods")
	}

	var sa *corev1.ServiceAccount
	for _, s := range c.m.serviceAccounts {
		if s.Name == pod.ServiceAccountName && s.Namespace == releaseNamespace {
			sa = s
		}
	}
	require.NotNil(t, sa, "gc's ServiceAccount %s is rendered", pod.ServiceAccountName)
	assert.NotEqual(t, c.dep.Spec.Template.Spec.ServiceAccountName, sa.Name, "the server's ServiceAccount stays without API access")
	c.gcRBAC(sa)
}

func (c *renderedChart) gcRBAC(sa *corev1.ServiceAccount) {
	t := c.t
	want := []rbacv1.PolicyRule{{APIGroups: []string{"sparkoperator.k8s.io", "spark.apache.org"}, Resources: []string{"sparkapplications"}, Verbs: []string{"list", "watch", "delete"}}}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}}
	var namespaces []string
	for _, b := range c.m.roleBindings {
		if !isGC(b) {
			assert.NotEqual(t, subject, b.Subjects, "RoleBinding %s/%s grants gc more", b.Namespace, b.Name)
			continue
		}
		namespaces = append(namespaces, b.Namespace)
		assert.Equal(t, subject, b.Subjects)
		var role *rbacv1.Role
		for _, r := range c.m.roles {
			if r.Namespace == b.Namespace && r.Name == b.RoleRef.Name && b.RoleRef.Kind == "Role" {
				role = r
			}
		}
		require.NotNil(t, role, "RoleBinding %s/%s names no rendered Role", b.Namespace, b.Name)
		assert.Equal(t, want, role.Rules, "gc may list, watch and delete SparkApplications, nothing else")
	}
	fixed := c.r.fixedJobNamespaces()
	assert.ElementsMatch(t, fixed, namespaces, "gc is bound in the job namespaces")
	for _, b := range c.m.clusterRoleBindings {
		if !isGC(b) {
			continue
		}
		assert.Empty(t, fixed, "gc gets a ClusterRoleBinding only when its namespaces are not a fixed list")
		assert.Equal(t, subject, b.Subjects)
		assert.Equal(t, want, c.clusterRoleRules(b.RoleRef.Name), "gc may list, watch and delete SparkApplications, nothing else")
	}
}
