package children

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func yunikornApp(muts ...func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	return newApp(append([]func(*v1beta2.SparkApplication){func(a *v1beta2.SparkApplication) {
		a.Spec.BatchScheduler = ptr.To("yunikorn")
		a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("root.default")}
		a.Spec.Driver.Cores = ptr.To[int32](1)
		a.Spec.Driver.Memory = ptr.To("512m")
		a.Spec.Executor.Cores = ptr.To[int32](1)
		a.Spec.Executor.Memory = ptr.To("512m")
		a.Spec.Executor.Instances = ptr.To[int32](2)
	}}, muts...)...)
}

func taskGroups(t *testing.T, objs *Objects) []taskGroup {
	t.Helper()
	raw := objs.DriverPod.Annotations[yunikornTaskGroups]
	require.NotEmpty(t, raw, "the driver carries the task groups")
	var groups []taskGroup
	require.NoError(t, json.Unmarshal([]byte(raw), &groups))
	return groups
}

// The example of Kubeflow's YuniKorn guide: 512m at the JVM factor is 512 + 384 = 896Mi.
func TestYuniKornTaskGroups(t *testing.T) {
	objs := build(t, yunikornApp(), Options{})
	assert.Equal(t, []taskGroup{
		{Name: "spark-driver", MinMember: 1, MinResource: map[string]string{"cpu": "1", "memory": "896Mi"}},
		{Name: "spark-executor", MinMember: 2, MinResource: map[string]string{"cpu": "1", "memory": "896Mi"}},
	}, taskGroups(t, objs))
	assert.Equal(t, "spark-driver", objs.DriverPod.Annotations[yunikornTaskGroupName])
	assert.Equal(t, "yunikorn", objs.DriverPod.Spec.SchedulerName)
	assert.Equal(t, "root.default", objs.DriverPod.Labels["queue"])

	props := sparkProps(t, objs)
	assert.Equal(t, "root.default", props["spark.kubernetes.executor.label.queue"], "executors are queued too")
	assert.Equal(t, "spark-executor", props["spark.kubernetes.executor.annotation."+yunikornTaskGroupName])
	assert.NotContains(t, props, "spark.kubernetes.executor.annotation."+yunikornTaskGroups, "only the first Pod carries the groups")
	assert.Equal(t, "yunikorn", executorTemplatePod(t, objs).Spec.SchedulerName)
}

func TestYuniKornTaskGroupDetails(t *testing.T) {
	toleration := corev1.Toleration{Key: "spark", Operator: corev1.TolerationOpExists}
	tests := []struct {
		name  string
		app   *v1beta2.SparkApplication
		check func(t *testing.T, groups []taskGroup, props map[string]string)
	}{
		{"the application's node selector on both groups",
			yunikornApp(func(a *v1beta2.SparkApplication) { a.Spec.NodeSelector = map[string]string{"pool": "spark"} }),
			func(t *testing.T, groups []taskGroup, _ map[string]string) {
				assert.Equal(t, map[string]string{"pool": "spark"}, groups[0].NodeSelector)
				assert.Equal(t, map[string]string{"pool": "spark"}, groups[1].NodeSelector)
			}},
		{"each role's placement on its own group",
			yunikornApp(func(a *v1beta2.SparkApplication) {
				a.Spec.Driver.NodeSelector = map[string]string{"pool": "small"}
				a.Spec.Executor.NodeSelector = map[string]string{"pool": "big"}
				a.Spec.Executor.Tolerations = []corev1.Toleration{toleration}
				a.Spec.Executor.Labels = map[string]string{"team": "data"}
			}),
			func(t *testing.T, groups []taskGroup, _ map[string]string) {
				assert.Equal(t, map[string]string{"pool": "small"}, groups[0].NodeSelector)
				assert.Equal(t, map[string]string{"pool": "big"}, groups[1].NodeSelector)
				assert.Equal(t, []corev1.Toleration{toleration}, groups[1].Tolerations)
				assert.Equal(t, map[string]string{"team": "data"}, groups[1].Labels)
				assert.Empty(t, groups[0].Tolerations)
			}},
		{"core request over cores; a Python executor's worker and off-heap memory",
			yunikornApp(pythonApp, func(a *v1beta2.SparkApplication) {
				a.Spec.Executor.CoreRequest = ptr.To("500m")
				a.Spec.SparkConf = map[string]string{"spark.executor.pyspark.memory": "256", "spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "1g"}
			}),
			func(t *testing.T, groups []taskGroup, _ map[string]string) {
				// 512m heap + max(0.4 × 512, 384) = 896 MiB, + 256 MiB Python + 1024 MiB off-heap.
				assert.Equal(t, map[string]string{"cpu": "500m", "memory": "2176Mi"}, groups[1].MinResource)
				assert.Equal(t, "896Mi", groups[0].MinResource["memory"])
			}},
		{"no executors at start: no executor group, which YuniKorn would refuse",
			yunikornApp(func(a *v1beta2.SparkApplication) {
				a.Spec.Executor.Instances = nil
				a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](0), MaxExecutors: ptr.To[int32](4)}
			}),
			func(t *testing.T, groups []taskGroup, props map[string]string) {
				require.Len(t, groups, 1)
				assert.NotContains(t, props, "spark.kubernetes.executor.annotation."+yunikornTaskGroupName)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, Options{})
			tt.check(t, taskGroups(t, objs), sparkProps(t, objs))
		})
	}
}

func TestNoYuniKornWithoutTheScheduler(t *testing.T) {
	objs := build(t, newApp(), Options{})
	assert.NotContains(t, objs.DriverPod.Annotations, yunikornTaskGroups)
	assert.NotContains(t, sparkProps(t, objs), "spark.kubernetes.executor.label.queue")
}
