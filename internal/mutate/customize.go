package mutate

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Mutation kinds, the label values of sparkhooks_mutations_total{kind}.
const (
	kindEnv                   = "env"
	kindEnvFrom               = "envFrom"
	kindVolumes               = "volumes"
	kindVolumeMounts          = "volumeMounts"
	kindPorts                 = "ports"
	kindHostNetwork           = "hostNetwork"
	kindHostAliases           = "hostAliases"
	kindInitContainers        = "initContainers"
	kindSidecars              = "sidecars"
	kindDNSConfig             = "dnsConfig"
	kindPriorityClassName     = "priorityClassName"
	kindSchedulerName         = "schedulerName"
	kindNodeSelector          = "nodeSelector"
	kindAffinity              = "affinity"
	kindTolerations           = "tolerations"
	kindGPU                   = "gpu"
	kindMemoryLimit           = "memoryLimit"
	kindSecurityContext       = "securityContext"
	kindPodSecurityContext    = "podSecurityContext"
	kindTerminationGrace      = "terminationGracePeriodSeconds"
	kindLifecycle             = "lifecycle"
	kindShareProcessNamespace = "shareProcessNamespace"
	kindLabels                = "labels"
	kindAnnotations           = "annotations"
	kindYuniKorn              = "yunikorn"
	kindVolcano               = "volcano"
)

// Comparisons use equality.Semantic: the API server's encoding drops empty lists and maps, so a
// value the webhook wrote earlier can come back with nil where it had empty.

// applyCustomization merges c into the pod in the order Kubeflow's webhook uses. Lists gain what
// they lack and never a second entry with the same name (or an identical entry, for lists without
// names); single-valued fields take the application's value. Applying the same customization twice
// changes nothing the second time, so a reinvoked webhook is harmless.
func (e *podEditor) applyCustomization(c *sparkpod.Customization) {
	if e.spark >= 0 {
		e.customizeSparkContainer(c)
	}
	spec := &e.pod.Spec
	for _, v := range c.Volumes {
		if !hasVolume(spec.Volumes, v.Name) {
			appendItem(&e.patch, kindVolumes, &spec.Volumes, "/spec/volumes", v)
		}
	}
	if e.spark >= 0 {
		ctr := e.container()
		for _, m := range c.VolumeMounts {
			if !hasMountPath(ctr.VolumeMounts, m.MountPath) {
				appendItem(&e.patch, kindVolumeMounts, &ctr.VolumeMounts, e.containerPath()+"/volumeMounts", m)
			}
		}
		for _, p := range c.Ports {
			if !hasPort(ctr.Ports, p) {
				appendItem(&e.patch, kindPorts, &ctr.Ports, e.containerPath()+"/ports", p)
			}
		}
	}
	if c.HostNetwork {
		if !spec.HostNetwork {
			e.patch.add(kindHostNetwork, "/spec/hostNetwork", true)
			spec.HostNetwork = true
		}
		// Without this a host-network pod resolves through the node's resolv.conf and cannot find
		// the driver Service.
		if spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
			e.patch.add(kindHostNetwork, "/spec/dnsPolicy", corev1.DNSClusterFirstWithHostNet)
			spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
		}
	}
	for _, a := range c.HostAliases {
		if !containsEqual(spec.HostAliases, a) {
			appendItem(&e.patch, kindHostAliases, &spec.HostAliases, "/spec/hostAliases", a)
		}
	}
	for _, ctr := range c.InitContainers {
		if !e.hasContainerNamed(ctr.Name) {
			appendItem(&e.patch, kindInitContainers, &spec.InitContainers, "/spec/initContainers", ctr)
		}
	}
	for _, ctr := range c.Sidecars {
		if !e.hasContainerNamed(ctr.Name) {
			appendItem(&e.patch, kindSidecars, &spec.Containers, "/spec/containers", ctr)
		}
	}
	if c.DNSConfig != nil && !equality.Semantic.DeepEqual(spec.DNSConfig, c.DNSConfig) {
		e.patch.add(kindDNSConfig, "/spec/dnsConfig", c.DNSConfig)
		spec.DNSConfig = c.DNSConfig
	}
	if c.PriorityClassName != "" {
		e.setPriorityClassName(c.PriorityClassName)
	}
	if c.SchedulerName != "" {
		e.setSchedulerName(kindSchedulerName, c.SchedulerName)
	}
	for _, key := range sortedKeys(c.NodeSelector) {
		setKey(&e.patch, kindNodeSelector, &spec.NodeSelector, "/spec/nodeSelector", key, c.NodeSelector[key])
	}
	if c.Affinity != nil && !equality.Semantic.DeepEqual(spec.Affinity, c.Affinity) {
		e.patch.add(kindAffinity, "/spec/affinity", c.Affinity)
		spec.Affinity = c.Affinity
	}
	for _, t := range c.Tolerations {
		e.addToleration(kindTolerations, t)
	}
	if c.MemoryLimit != nil && e.spark >= 0 {
		e.setLimit(kindMemoryLimit, corev1.ResourceMemory, *c.MemoryLimit)
	}
	if c.GPU != nil && e.spark >= 0 {
		e.setLimit(kindGPU, corev1.ResourceName(c.GPU.Name), *resource.NewQuantity(c.GPU.Quantity, resource.DecimalSI))
	}
	if c.SecurityContext != nil && e.spark >= 0 {
		ctr := e.container()
		if !equality.Semantic.DeepEqual(ctr.SecurityContext, c.SecurityContext) {
			e.patch.add(kindSecurityContext, e.containerPath()+"/securityContext", c.SecurityContext)
			ctr.SecurityContext = c.SecurityContext
		}
	}
	if c.PodSecurityContext != nil && !equality.Semantic.DeepEqual(spec.SecurityContext, c.PodSecurityContext) {
		e.patch.add(kindPodSecurityContext, "/spec/securityContext", c.PodSecurityContext)
		spec.SecurityContext = c.PodSecurityContext
	}
	if c.TerminationGracePeriodSeconds != nil && !equality.Semantic.DeepEqual(spec.TerminationGracePeriodSeconds, c.TerminationGracePeriodSeconds) {
		e.patch.add(kindTerminationGrace, "/spec/terminationGracePeriodSeconds", *c.TerminationGracePeriodSeconds)
		spec.TerminationGracePeriodSeconds = c.TerminationGracePeriodSeconds
	}
	if c.Lifecycle != nil && e.spark >= 0 {
		ctr := e.container()
		if !equality.Semantic.DeepEqual(ctr.Lifecycle, c.Lifecycle) {
			e.patch.add(kindLifecycle, e.containerPath()+"/lifecycle", c.Lifecycle)
			ctr.Lifecycle = c.Lifecycle
		}
	}
	if c.ShareProcessNamespace && (spec.ShareProcessNamespace == nil || !*spec.ShareProcessNamespace) {
		e.patch.add(kindShareProcessNamespace, "/spec/shareProcessNamespace", true)
		share := true
		spec.ShareProcessNamespace = &share
	}
}

// customizeSparkContainer adds env and envFrom, first like Kubeflow, so that later steps see them.
func (e *podEditor) customizeSparkContainer(c *sparkpod.Customization) {
	ctr := e.container()
	for _, env := range c.Env {
		if !hasEnv(ctr.Env, env.Name) {
			appendItem(&e.patch, kindEnv, &ctr.Env, e.containerPath()+"/env", env)
		}
	}
	for _, from := range c.EnvFrom {
		if !containsEqual(ctr.EnvFrom, from) {
			appendItem(&e.patch, kindEnvFrom, &ctr.EnvFrom, e.containerPath()+"/envFrom", from)
		}
	}
}

// setSchedulerName sets the scheduler, recording the change under kind.
func (e *podEditor) setSchedulerName(kind, name string) {
	if e.pod.Spec.SchedulerName == name {
		return
	}
	e.patch.add(kind, "/spec/schedulerName", name)
	e.pod.Spec.SchedulerName = name
}

// setPriorityClassName sets the class and drops the priority value and preemption policy the
// API server derived from the previous class: its Priority admission plugin refuses a pod whose
// priority does not match its class, and derives both again when they are absent.
func (e *podEditor) setPriorityClassName(name string) {
	spec := &e.pod.Spec
	if spec.PriorityClassName == name {
		return
	}
	e.patch.add(kindPriorityClassName, "/spec/priorityClassName", name)
	spec.PriorityClassName = name
	if spec.Priority != nil {
		e.patch.remove(kindPriorityClassName, "/spec/priority")
		spec.Priority = nil
	}
	if spec.PreemptionPolicy != nil {
		e.patch.remove(kindPriorityClassName, "/spec/preemptionPolicy")
		spec.PreemptionPolicy = nil
	}
}

func (e *podEditor) addToleration(kind string, t corev1.Toleration) {
	if !containsEqual(e.pod.Spec.Tolerations, t) {
		appendItem(&e.patch, kind, &e.pod.Spec.Tolerations, "/spec/tolerations", t)
	}
}

// setLimit sets one resource limit on the Spark container.
func (e *podEditor) setLimit(kind string, name corev1.ResourceName, q resource.Quantity) {
	res := &e.container().Resources
	path := e.containerPath() + "/resources"
	if len(res.Limits) == 0 && len(res.Requests) == 0 && len(res.Claims) == 0 {
		// The pod JSON may lack "resources" altogether.
		want := corev1.ResourceRequirements{Limits: corev1.ResourceList{name: q}}
		e.patch.add(kind, path, want)
		*res = want
		return
	}
	if len(res.Limits) == 0 {
		e.patch.add(kind, path+"/limits", corev1.ResourceList{name: q})
		res.Limits = corev1.ResourceList{name: q}
		return
	}
	if cur, ok := res.Limits[name]; ok && cur.Cmp(q) == 0 {
		return
	}
	e.patch.add(kind, path+"/limits/"+pointerToken(string(name)), q)
	res.Limits[name] = q
}

func hasEnv(list []corev1.EnvVar, name string) bool {
	for i := range list {
		if list[i].Name == name {
			return true
		}
	}
	return false
}

func hasVolume(list []corev1.Volume, name string) bool {
	for i := range list {
		if list[i].Name == name {
			return true
		}
	}
	return false
}

// hasMountPath: the API server refuses two mounts at one path, so a mount already there wins.
func hasMountPath(list []corev1.VolumeMount, path string) bool {
	for i := range list {
		if list[i].MountPath == path {
			return true
		}
	}
	return false
}

// hasPort reports a port with the same name, or the same number and protocol.
func hasPort(list []corev1.ContainerPort, p corev1.ContainerPort) bool {
	proto := func(x corev1.Protocol) corev1.Protocol {
		if x == "" {
			return corev1.ProtocolTCP
		}
		return x
	}
	for i := range list {
		if p.Name != "" && list[i].Name == p.Name {
			return true
		}
		if list[i].ContainerPort == p.ContainerPort && proto(list[i].Protocol) == proto(p.Protocol) {
			return true
		}
	}
	return false
}

func containsEqual[T any](list []T, item T) bool {
	for i := range list {
		if equality.Semantic.DeepEqual(list[i], item) {
			return true
		}
	}
	return false
}

// ApplyCustomization merges c into pod exactly as the webhook merges an annotated customization,
// without recording a patch. The sync hook uses it to shape the pods it builds itself (the driver
// Pod and the executor pod template), so that both paths share one set of merge rules. The pod's
// spark-role label selects its Spark container, as for the webhook.
func ApplyCustomization(pod *corev1.Pod, c *sparkpod.Customization) {
	if pod == nil || c == nil {
		return
	}
	e := newPodEditor(pod)
	e.patch.discard = true
	e.applyCustomization(c)
}
