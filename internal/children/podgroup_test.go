package children

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

func volcanoApp(muts ...func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	return newApp(append([]func(*v1beta2.SparkApplication){func(app *v1beta2.SparkApplication) {
		app.Spec.BatchScheduler = ptr.To("volcano")
		app.Spec.Driver.Cores = ptr.To[int32](1)
		app.Spec.Driver.Memory = ptr.To("1g")
		app.Spec.Executor.Cores = ptr.To[int32](2)
		app.Spec.Executor.Memory = ptr.To("4g")
		app.Spec.Executor.Instances = ptr.To[int32](3)
	}}, muts...)...)
}

func TestVolcanoPodGroup(t *testing.T) {
	tests := []struct {
		name          string
		app           *v1beta2.SparkApplication
		wantResources map[string]any
		wantQueue     any
		wantPriority  any
	}{
		{
			// driver 1 cpu and 1408Mi (1g + 384Mi); executors 3 × (2 cpu, 4505Mi = 4g + 409Mi)
			name:          "resources computed as Spark sizes the containers",
			app:           volcanoApp(),
			wantResources: map[string]any{"cpu": "7", "memory": "14923Mi"},
		},
		{
			name: "batchSchedulerOptions win",
			app: volcanoApp(func(app *v1beta2.SparkApplication) {
				app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{
					Queue:             ptr.To("analytics"),
					PriorityClassName: ptr.To("batch-high"),
					Resources:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20"), corev1.ResourceMemory: resource.MustParse("64Gi")},
				}
			}),
			wantResources: map[string]any{"cpu": "20", "memory": "64Gi"},
			wantQueue:     "analytics",
			wantPriority:  "batch-high",
		},
		{
			name: "dynamic allocation counts the executors it starts with",
			app: volcanoApp(func(app *v1beta2.SparkApplication) {
				app.Spec.Executor.Instances = nil
				app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](1), InitialExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](10)}
			}),
			wantResources: map[string]any{"cpu": "5", "memory": "10418Mi"},
		},
		{
			// Spark's executor Pods add the Python workers' memory (PySpark) and the off-heap
			// memory: driver 1 cpu, 1024 + 409 = 1433Mi; executors 3 × (2 cpu, 4096 + 1638 + 512
			// + 1024 = 7270Mi)
			name: "executors count Python and off-heap memory",
			app: volcanoApp(pythonApp, withConf("spark.executor.pyspark.memory", "512m",
				"spark.memory.offHeap.enabled", "true", "spark.memory.offHeap.size", "1g")),
			wantResources: map[string]any{"cpu": "7", "memory": "23243Mi"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, Options{VolcanoPodGroups: true})
			require.NotNil(t, objs.PodGroup)
			pg := objs.PodGroup.Object
			assert.Equal(t, "scheduling.volcano.sh/v1beta1", pg["apiVersion"])
			assert.Equal(t, "PodGroup", pg["kind"])
			md := pg["metadata"].(map[string]any)
			assert.Equal(t, "spark-pi-pg", md["name"])
			assert.Equal(t, testNamespace, md["namespace"])
			spec := pg["spec"].(map[string]any)
			assert.Equal(t, int64(1), spec["minMember"])
			assert.Equal(t, tt.wantResources, spec["minResources"])
			assert.Equal(t, tt.wantQueue, spec["queue"])
			assert.Equal(t, tt.wantPriority, spec["priorityClassName"])

			assert.Same(t, objs.PodGroup, objs.List()[0], "the group comes first")
			assert.Equal(t, "spark-pi-pg", objs.DriverPod.Annotations["scheduling.k8s.io/group-name"])
			assert.Equal(t, "volcano", objs.DriverPod.Spec.SchedulerName)
			props := sparkProps(t, objs)
			assert.Equal(t, "spark-pi-pg", props["spark.kubernetes.executor.annotation.scheduling.k8s.io/group-name"])
			assert.Equal(t, "volcano", executorTemplatePod(t, objs).Spec.SchedulerName)
		})
	}
}

func TestVolcanoNeedsPodGroupsDeclared(t *testing.T) {
	err := buildErr(t, volcanoApp(), Options{})
	assert.Contains(t, err.Error(), "metacontroller.volcanoPodGroups=true")

	objs := build(t, newApp(), Options{VolcanoPodGroups: true})
	assert.Nil(t, objs.PodGroup, "only volcano applications get a group")
}

func TestCoschedulingPodGroup(t *testing.T) {
	kube := Options{KubeSchedulerNames: []string{"scheduler-plugins-scheduler"}, SchedulerPluginsPodGroups: true}
	withDefault := kube
	withDefault.DefaultBatchScheduler = "scheduler-plugins-scheduler"
	tests := []struct {
		name          string
		app           *v1beta2.SparkApplication
		opts          Options
		wantResources map[string]any
	}{
		{
			name: "spec.batchScheduler names a kube-scheduler",
			app: volcanoApp(func(app *v1beta2.SparkApplication) {
				app.Spec.BatchScheduler = ptr.To("scheduler-plugins-scheduler")
			}),
			opts: kube,
			// as for Volcano: the containers Spark sizes, overhead included, not "1g" parsed as a quantity
			wantResources: map[string]any{"cpu": "7", "memory": "14923Mi"},
		},
		{
			name: "the operator default applies to an application that names none",
			app: volcanoApp(func(app *v1beta2.SparkApplication) {
				app.Spec.BatchScheduler = nil
				app.Spec.Executor.Instances = ptr.To[int32](1)
			}),
			opts:          withDefault,
			wantResources: map[string]any{"cpu": "3", "memory": "5913Mi"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, tt.opts)
			require.NotNil(t, objs.PodGroup)
			pg := objs.PodGroup.Object
			assert.Equal(t, "scheduling.x-k8s.io/v1alpha1", pg["apiVersion"])
			assert.Equal(t, "PodGroup", pg["kind"])
			assert.Equal(t, "pi-pg", pg["metadata"].(map[string]any)["name"], "Kubeflow's name: <app>-pg")
			spec := pg["spec"].(map[string]any)
			assert.Equal(t, map[string]any{"minMember": int64(1), "minResources": tt.wantResources}, spec)

			assert.Same(t, objs.PodGroup, objs.List()[0], "the group comes first")
			assert.Equal(t, "pi-pg", objs.DriverPod.Labels["scheduling.x-k8s.io/pod-group"])
			assert.Equal(t, "scheduler-plugins-scheduler", objs.DriverPod.Spec.SchedulerName)
			assert.Equal(t, "pi-pg", sparkProps(t, objs)["spark.kubernetes.executor.label.scheduling.x-k8s.io/pod-group"])
			assert.Equal(t, "scheduler-plugins-scheduler", executorTemplatePod(t, objs).Spec.SchedulerName)
		})
	}
}

func TestCoschedulingNeedsPodGroupsDeclared(t *testing.T) {
	app := newApp(func(app *v1beta2.SparkApplication) { app.Spec.BatchScheduler = ptr.To("scheduler-plugins-scheduler") })
	err := buildErr(t, app, Options{KubeSchedulerNames: []string{"scheduler-plugins-scheduler"}})
	assert.Contains(t, err.Error(), "metacontroller.schedulerPluginsPodGroups=true")

	objs := build(t, app, Options{SchedulerPluginsPodGroups: true})
	assert.Nil(t, objs.PodGroup, "a scheduler not listed as a kube-scheduler gets no group")
	assert.Equal(t, "scheduler-plugins-scheduler", objs.DriverPod.Spec.SchedulerName, "but is still the Pods' scheduler")
}

func TestDefaultBatchScheduler(t *testing.T) {
	objs := build(t, newApp(), Options{DefaultBatchScheduler: "yunikorn"})
	assert.Equal(t, "yunikorn", objs.DriverPod.Spec.SchedulerName)
	assert.Contains(t, objs.DriverPod.Annotations, "yunikorn.apache.org/task-groups", "the default scheduler's integration applies")

	objs = build(t, newApp(func(app *v1beta2.SparkApplication) { app.Spec.BatchScheduler = ptr.To("volcano") }),
		Options{DefaultBatchScheduler: "yunikorn", VolcanoPodGroups: true})
	assert.Equal(t, "volcano", objs.DriverPod.Spec.SchedulerName, "the spec wins over the default")
	assert.NotContains(t, objs.DriverPod.Annotations, "yunikorn.apache.org/task-groups")
}

// TestPodSetsExecutorMemory: the executor pod set a queue (Kueue) admits asks for what Spark's
// executor Pods ask for, the Python workers' and the off-heap memory included.
func TestPodSetsExecutorMemory(t *testing.T) {
	objs := build(t, newApp(pythonApp, withVersion("4.0.1"), withConf("spark.executor.pyspark.memory", "512m",
		"spark.memory.offHeap.enabled", "true", "spark.memory.offHeap.size", "268435456")), Options{PodSets: true})
	require.Len(t, objs.PodSets, 2)
	exec := objs.PodSets[1]
	require.Equal(t, "executor", exec.Name)
	var spark *corev1.Container
	for i := range exec.Template.Spec.Containers {
		if exec.Template.Spec.Containers[i].Name == sparkpod.ExecutorContainerName {
			spark = &exec.Template.Spec.Containers[i]
		}
	}
	require.NotNil(t, spark)
	// 1024 + max(0.4 × 1024, 384) = 1433, + 512 (PySpark) + 256 (off-heap, in bytes when bare).
	assert.Equal(t, "2201Mi", spark.Resources.Requests.Memory().String())
}
