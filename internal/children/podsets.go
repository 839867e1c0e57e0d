package children

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// podSets describes the application to a queue: the driver Pod as built, and the executors as
// Spark will create them from the template and the properties. Only what a queue accounts and
// places by is kept (container resources, scheduling fields), so the pod sets do not change
// from one attempt to the next: a queued Workload's pod sets are immutable.
func (b *builder) podSets() error {
	if !b.opts.PodSets {
		return nil
	}
	if b.executorPod == nil {
		return buildErrorf("queueing with Kueue needs Spark 3.0 or later (executor pod templates)")
	}
	if da := b.spec.DynamicAllocation; da != nil && da.Enabled && da.MaxExecutors == nil {
		return buildErrorf("queueing with Kueue under dynamic allocation needs spec.dynamicAllocation.maxExecutors: Kueue reserves quota for a known number of executors (maxExecutors, of which minExecutors may be admitted on their own under partial admission)")
	}
	exec := b.executorPod.DeepCopy()
	res, err := b.executorResources()
	if err != nil {
		return err
	}
	spark := ensureSparkContainer(exec, sparkpod.ExecutorContainerName)
	c := &exec.Spec.Containers[spark]
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	// Spark sets cpu and memory over the template's; extended resources (GPUs) add up.
	c.Resources.Requests = res.Requests
	for name, q := range res.Limits {
		c.Resources.Limits[name] = q
	}
	count, minCount := b.executorCounts()
	b.objs.PodSets = []kueue.PodSet{{Name: kueue.PodSetDriver, Count: 1, Template: schedulingTemplate(&b.objs.DriverPod.Spec)}}
	if count > 0 {
		b.objs.PodSets = append(b.objs.PodSets, kueue.PodSet{
			Name: kueue.PodSetExecutor, Count: count, MinCount: minCount,
			Template: schedulingTemplate(&exec.Spec),
		})
	}
	return nil
}

// executorCounts are the executors a queue admits: the instances under static allocation; under
// dynamic allocation maxExecutors, of which minExecutors (at least one) is enough to start.
func (b *builder) executorCounts() (count int32, minCount *int32) {
	da := b.spec.DynamicAllocation
	if da == nil || !da.Enabled {
		return int32(b.initialExecutors()), nil
	}
	count = *da.MaxExecutors
	least := int32(1)
	if da.MinExecutors != nil && *da.MinExecutors > least {
		least = *da.MinExecutors
	}
	if least < count {
		minCount = &least
	}
	return count, minCount
}

// executorResources are the requests and limits Spark's BasicExecutorFeatureStep puts on the
// executor container: cores, memory with its overhead, and spark.executor.resource.* amounts.
func (b *builder) executorResources() (corev1.ResourceRequirements, error) {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	cpu, err := b.roleCPU(sparkpod.RoleExecutor)
	if err != nil {
		return res, err
	}
	res.Requests[corev1.ResourceCPU] = cpu
	if limit := b.conf.get("spark.kubernetes.executor.limit.cores"); limit != "" {
		q, err := resource.ParseQuantity(strings.TrimSpace(limit))
		if err != nil {
			return res, buildErrorf("spark.kubernetes.executor.limit.cores %q is not a quantity", limit)
		}
		res.Limits[corev1.ResourceCPU] = q
	}
	mib, err := containerMemoryMiB(b.conf, sparkpod.RoleExecutor, b.version)
	if err != nil {
		return res, buildErrorf("executor memory: %v", err)
	}
	// Spark's executor Pods also ask for the Python workers' and the off-heap memory.
	extra, err := b.executorExtraMemoryMiB()
	if err != nil {
		return res, err
	}
	mib += extra
	mem := *resource.NewQuantity(mib*v1beta2.MiB, resource.BinarySI)
	res.Requests[corev1.ResourceMemory] = mem
	res.Limits[corev1.ResourceMemory] = mem
	if s := b.spec.Executor.MemoryLimit; s != nil {
		q, err := v1beta2.ParseMemoryLimit(*s)
		if err != nil {
			return res, buildErrorf("spec.executor.memoryLimit: %v", err)
		}
		res.Limits[corev1.ResourceMemory] = q
	}
	for _, key := range sortedKeys(prefixed(b.conf, "spark.executor.resource.")) {
		name, ok := strings.CutSuffix(key, ".amount")
		if !ok {
			continue
		}
		vendor := b.conf.get("spark.executor.resource." + name + ".vendor")
		if vendor == "" {
			return res, buildErrorf("spark.executor.resource.%s.amount needs spark.executor.resource.%s.vendor, the Kubernetes resource vendor (for example nvidia.com)", name, name)
		}
		amount := b.conf.get("spark.executor.resource." + key)
		q, err := resource.ParseQuantity(strings.TrimSpace(amount))
		if err != nil {
			return res, buildErrorf("spark.executor.resource.%s: %q is not a quantity", key, amount)
		}
		res.Limits[corev1.ResourceName(vendor+"/"+name)] = q
	}
	return res, nil
}

// schedulingTemplate keeps of a pod spec what a queue reads: each container's name and
// resources, and the fields that decide where the pod may run.
func schedulingTemplate(spec *corev1.PodSpec) corev1.PodTemplateSpec {
	out := corev1.PodSpec{
		NodeSelector:      spec.NodeSelector,
		Affinity:          spec.Affinity,
		Tolerations:       spec.Tolerations,
		PriorityClassName: spec.PriorityClassName,
		RuntimeClassName:  spec.RuntimeClassName,
		Overhead:          spec.Overhead,
	}
	for _, c := range spec.InitContainers {
		out.InitContainers = append(out.InitContainers, corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy})
	}
	for _, c := range spec.Containers {
		out.Containers = append(out.Containers, corev1.Container{Name: c.Name, Resources: c.Resources})
	}
	return corev1.PodTemplateSpec{Spec: out}
}
