package v1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cluster(muts ...func(*SparkCluster)) *SparkCluster {
	c := &SparkCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: "spark"},
		Spec: ClusterSpec{
			RuntimeVersions:    RuntimeVersions{SparkVersion: "4.0.1"},
			ClusterTolerations: ClusterTolerations{InstanceConfig: WorkerInstanceConfig{InitWorkers: 2, MinWorkers: 1, MaxWorkers: 3}},
		},
	}
	for _, m := range muts {
		m(c)
	}
	return c
}

func TestValidateSparkCluster(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*SparkCluster)
		want []string
	}{
		{"valid", func(*SparkCluster) {}, nil},
		{"Apache's zero defaults", func(c *SparkCluster) { c.Spec.ClusterTolerations.InstanceConfig = WorkerInstanceConfig{} }, nil},
		{"name too long for the StatefulSet revision label", func(c *SparkCluster) { c.Name = "a23456789012345678901234567890123456789012345x" },
			[]string{"metadata.name"}},
		{"not a DNS label", func(c *SparkCluster) { c.Name = "Prod" }, []string{"metadata.name"}},
		{"no Spark version", func(c *SparkCluster) { c.Spec.RuntimeVersions.SparkVersion = "" }, []string{"spec.runtimeVersions.sparkVersion"}},
		{"init above max", func(c *SparkCluster) { c.Spec.ClusterTolerations.InstanceConfig.InitWorkers = 4 },
			[]string{"spec.clusterTolerations.instanceConfig.initWorkers"}},
		{"min above max", func(c *SparkCluster) { c.Spec.ClusterTolerations.InstanceConfig.MinWorkers = 4 },
			[]string{"spec.clusterTolerations.instanceConfig.minWorkers", "spec.clusterTolerations.instanceConfig.initWorkers"}},
		{"negative", func(c *SparkCluster) {
			c.Spec.ClusterTolerations.InstanceConfig = WorkerInstanceConfig{InitWorkers: -1, MinWorkers: -1, MaxWorkers: 0}
		}, []string{"spec.clusterTolerations.instanceConfig.initWorkers", "spec.clusterTolerations.instanceConfig.minWorkers"}},
		{"headless LoadBalancer", func(c *SparkCluster) {
			c.Spec.MasterSpec = &MasterSpec{ServiceSpec: &corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: corev1.ClusterIPNone}}
		}, []string{"spec.masterSpec.serviceSpec.clusterIP"}},
		{"LoadBalancer with a cluster IP", func(c *SparkCluster) {
			c.Spec.WorkerSpec = &WorkerSpec{ServiceSpec: &corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
		}, nil},
		{"ExternalName", func(c *SparkCluster) {
			c.Spec.WorkerSpec = &WorkerSpec{ServiceSpec: &corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}
		}, []string{"spec.workerSpec.serviceSpec.type"}},
		{"queued with Kueue, which sparkhooks does not do for clusters", func(c *SparkCluster) {
			c.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "team-a"}
		}, []string{"metadata.labels[kueue.x-k8s.io/queue-name]"}},
		{"bad label", func(c *SparkCluster) {
			c.Spec.MasterSpec = &MasterSpec{StatefulSetMetadata: &metav1.ObjectMeta{Labels: map[string]string{"team": "data science"}}}
		}, []string{"spec.masterSpec.statefulSetMetadata.labels[team]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateSparkCluster(cluster(tt.mut)) {
				got = append(got, e.Field)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodeSparkCluster(t *testing.T) {
	c, errs, err := DecodeSparkCluster([]byte(`{"metadata":{"name":"prod"},"spec":{"runtimeVersions":{"sparkVersion":"4.0.1"}},"status":{"currentState":{"currentStateSummary":"RunningHealthy"}}}`))
	require.NoError(t, err)
	assert.Empty(t, errs)
	assert.Equal(t, "4.0.1", c.Spec.RuntimeVersions.SparkVersion)

	c, errs, err = DecodeSparkCluster([]byte(`{"metadata":{"name":"prod"},"spec":{"masterSpec":{"statefulSetSpec":{"replicas":"one"}}},"status":{"currentState":{"currentStateSummary":"RunningHealthy"}}}`))
	require.NoError(t, err)
	assert.Equal(t, "RunningHealthy", c.Status.CurrentState.CurrentStateSummary, "the status decodes whatever the spec holds")
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.masterSpec.statefulSetSpec.replicas", errs[0].Field)

	_, _, err = DecodeSparkCluster([]byte(`{"metadata":"prod"}`))
	assert.Error(t, err)
}
