package children

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Volcano's names.
const (
	volcanoScheduler         = "volcano"
	volcanoGroupAnnotation   = "scheduling.k8s.io/group-name"
	volcanoPodGroupVersion   = "scheduling.volcano.sh/v1beta1"
	volcanoPodGroupKind      = "PodGroup"
	volcanoPodGroupAPIPrefix = "spark-"
)

// volcano wants gang scheduling: a PodGroup that holds the driver and its executors, which
// Volcano admits only when the whole group fits, as the Kubeflow operator creates it. The
// group exists before the driver asks for a node because Metacontroller creates the children
// of one sync together and Volcano holds a Pod whose group is missing.
func (b *builder) volcano() error {
	if b.batchScheduler() != volcanoScheduler {
		return nil
	}
	if !b.opts.VolcanoPodGroups {
		return buildErrorf("the batch scheduler is volcano, but the sparkhooks controller does not manage Volcano PodGroups: install it with the Helm value metacontroller.volcanoPodGroups=true (or metacontroller/volcano/), or set another spec.batchScheduler")
	}
	name := boundedName(volcanoPodGroupAPIPrefix+b.app.Name, "-pg", maxSubdomainName)
	spec := map[string]any{"minMember": int64(1)}
	minResources, err := b.gangResources()
	if err != nil {
		return err
	}
	if len(minResources) > 0 {
		spec["minResources"] = minResources
	}
	if opts := b.spec.BatchSchedulerOptions; opts != nil {
		if opts.Queue != nil && *opts.Queue != "" {
			spec["queue"] = *opts.Queue
		}
		if opts.PriorityClassName != nil && *opts.PriorityClassName != "" {
			spec["priorityClassName"] = *opts.PriorityClassName
		}
	}
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": volcanoPodGroupVersion,
		"kind":       volcanoPodGroupKind,
		"metadata": map[string]any{
			"name":      name,
			"namespace": b.namespace(),
			"labels":    map[string]any{sparkpod.LabelAppName: b.app.Name, sparkpod.LabelAppSelector: b.sub.AppID},
		},
		"spec": spec,
	}}
	b.objs.PodGroup = pg
	b.conf.set("spark.kubernetes.driver.annotation."+volcanoGroupAnnotation, name)
	b.conf.set("spark.kubernetes.executor.annotation."+volcanoGroupAnnotation, name)
	return nil
}

// The scheduler-plugins coscheduling plugin's names.
const (
	coschedulingPodGroupVersion = "scheduling.x-k8s.io/v1alpha1"
	coschedulingPodGroupLabel   = "scheduling.x-k8s.io/pod-group"
)

// coscheduling gang-schedules an application on a kube-scheduler profile with the
// scheduler-plugins coscheduling plugin, as the Kubeflow operator does: a PodGroup named
// <app>-pg that the driver and the executors join through the pod-group label. Unlike
// Kubeflow's, minResources is what Spark will request (memory overhead included, "1g" read as
// Spark reads it), not the spec's strings parsed as Kubernetes quantities.
func (b *builder) coscheduling() error {
	scheduler := b.batchScheduler()
	if scheduler == "" || !slices.Contains(b.opts.KubeSchedulerNames, scheduler) {
		return nil
	}
	if !b.opts.SchedulerPluginsPodGroups {
		return buildErrorf("the batch scheduler is %s, a kube-scheduler, but the sparkhooks controller does not manage scheduler-plugins PodGroups: install it with the Helm value metacontroller.schedulerPluginsPodGroups=true (or metacontroller/scheduler-plugins/), or set another spec.batchScheduler", scheduler)
	}
	name := boundedName(b.app.Name, "-pg", maxSubdomainName)
	spec := map[string]any{"minMember": int64(1)}
	minResources, err := b.gangResources()
	if err != nil {
		return err
	}
	if len(minResources) > 0 {
		spec["minResources"] = minResources
	}
	b.objs.PodGroup = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": coschedulingPodGroupVersion,
		"kind":       "PodGroup",
		"metadata": map[string]any{
			"name":      name,
			"namespace": b.namespace(),
			"labels":    map[string]any{sparkpod.LabelAppName: b.app.Name, sparkpod.LabelAppSelector: b.sub.AppID},
		},
		"spec": spec,
	}}
	b.conf.set("spark.kubernetes.driver.label."+coschedulingPodGroupLabel, name)
	b.conf.set("spark.kubernetes.executor.label."+coschedulingPodGroupLabel, name)
	return nil
}

// batchScheduler is the application's batch scheduler: the spec's, else the operator default.
func (b *builder) batchScheduler() string {
	if bs := b.spec.BatchScheduler; bs != nil && *bs != "" {
		return *bs
	}
	return b.opts.DefaultBatchScheduler
}

// gangResources is what the whole application asks for at start: batchSchedulerOptions.resources
// when given, else the driver's and the initial executors' cpu and memory as Spark computes them.
func (b *builder) gangResources() (map[string]any, error) {
	if opts := b.spec.BatchSchedulerOptions; opts != nil && len(opts.Resources) > 0 {
		out := make(map[string]any, len(opts.Resources))
		for name, q := range opts.Resources {
			out[string(name)] = q.String()
		}
		return out, nil
	}
	cpu := resource.Quantity{}
	mem := resource.Quantity{}
	for _, role := range []struct {
		name  string
		count int64
	}{{"driver", 1}, {"executor", b.initialExecutors()}} {
		if role.count == 0 {
			continue
		}
		cores, err := b.roleCPU(role.name)
		if err != nil {
			return nil, err
		}
		mib, err := containerMemoryMiB(b.conf, role.name, b.version)
		if err != nil {
			return nil, buildErrorf("%s memory: %v", role.name, err)
		}
		if role.name == sparkpod.RoleExecutor {
			// Spark's executor Pods also ask for the Python workers' and the off-heap memory.
			extra, err := b.executorExtraMemoryMiB()
			if err != nil {
				return nil, err
			}
			mib += extra
		}
		for i := int64(0); i < role.count; i++ {
			cpu.Add(cores)
			mem.Add(*resource.NewQuantity(mib*v1beta2.MiB, resource.BinarySI))
		}
	}
	return map[string]any{string(corev1.ResourceCPU): cpu.String(), string(corev1.ResourceMemory): mem.String()}, nil
}

// roleCPU is the CPU request Spark puts on a role's container.
func (b *builder) roleCPU(role string) (resource.Quantity, error) {
	s := firstNonEmpty(b.conf.get("spark.kubernetes."+role+".request.cores"), b.conf.get("spark."+role+".cores"), "1")
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return q, buildErrorf("%s CPU request %q is not a quantity", role, s)
	}
	return q, nil
}

// initialExecutors is how many executors Spark asks for at start.
func (b *builder) initialExecutors() int64 {
	if da := b.spec.DynamicAllocation; da != nil && da.Enabled {
		n := int64(0)
		for _, v := range []*int32{da.InitialExecutors, da.MinExecutors} {
			if v != nil && int64(*v) > n {
				n = int64(*v)
			}
		}
		return n
	}
	n, err := strconv.ParseInt(strings.TrimSpace(firstNonEmpty(b.conf.get("spark.executor.instances"), "2")), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
