package children

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// roleSpec gathers what a role's customization reads, driver and executor alike, so that one
// function serves both (the Kubeflow operator has two near-copies here).
type roleSpec struct {
	role              string
	pod               *v1beta2.SparkPodSpec
	ports             []v1beta2.Port
	lifecycle         *corev1.Lifecycle
	priorityClassName *string
	metricsExposed    bool
}

func (b *builder) driverRole() roleSpec {
	d := &b.spec.Driver
	exposed := b.spec.Monitoring != nil && b.spec.Monitoring.ExposeDriverMetrics
	return roleSpec{sparkpod.RoleDriver, &d.SparkPodSpec, d.Ports, d.Lifecycle, d.PriorityClassName, exposed}
}

func (b *builder) executorRole() roleSpec {
	e := &b.spec.Executor
	exposed := b.spec.Monitoring != nil && b.spec.Monitoring.ExposeExecutorMetrics
	return roleSpec{sparkpod.RoleExecutor, &e.SparkPodSpec, e.Ports, e.Lifecycle, e.PriorityClassName, exposed}
}

// customization is what the Kubeflow operator's webhook would do to a role's Pods, as data:
// the same fields, in the same order of application.
func (b *builder) customization(r roleSpec) *sparkpod.Customization {
	ps := r.pod
	c := &sparkpod.Customization{
		Version:                       sparkpod.CustomizationVersion,
		Env:                           ps.Env,
		EnvFrom:                       ps.EnvFrom,
		Lifecycle:                     r.lifecycle,
		SecurityContext:               ps.SecurityContext,
		PodSecurityContext:            ps.PodSecurityContext,
		HostAliases:                   ps.HostAliases,
		InitContainers:                ps.InitContainers,
		Sidecars:                      ps.Sidecars,
		DNSConfig:                     ps.DNSConfig,
		NodeSelector:                  ps.NodeSelector,
		Affinity:                      ps.Affinity,
		Tolerations:                   ps.Tolerations,
		TerminationGracePeriodSeconds: ps.TerminationGracePeriodSeconds,
		HostNetwork:                   ps.HostNetwork != nil && *ps.HostNetwork,
		ShareProcessNamespace:         ps.ShareProcessNamespace != nil && *ps.ShareProcessNamespace,
	}
	if ps.GPU.Requested() {
		c.GPU = &sparkpod.GPUSpec{Name: ps.GPU.Name, Quantity: ps.GPU.Quantity}
	}
	if r.priorityClassName != nil {
		c.PriorityClassName = *r.priorityClassName
	}
	// The operator's default batch scheduler names the scheduler too: Kubeflow builds its
	// PodGroup but leaves the Pods on the default scheduler, which then ignores the group.
	switch {
	case b.batchScheduler() != "":
		c.SchedulerName = b.batchScheduler()
	case ps.SchedulerName != nil:
		c.SchedulerName = *ps.SchedulerName
	}
	if bs := b.spec.BatchSchedulerOptions; bs != nil && bs.PriorityClassName != nil && c.PriorityClassName == "" {
		c.PriorityClassName = *bs.PriorityClassName
	}

	if cm := b.spec.HadoopConfigMap; cm != nil && *cm != "" {
		c.Volumes = append(c.Volumes, configMapVolume("hadoop-configmap-volume", *cm))
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "hadoop-configmap-volume", MountPath: hadoopConfDir, ReadOnly: true})
		c.Env = appendEnv(c.Env, corev1.EnvVar{Name: "HADOOP_CONF_DIR", Value: hadoopConfDir})
	}
	if cm := b.spec.SparkConfigMap; cm != nil && *cm != "" {
		c.Volumes = append(c.Volumes, configMapVolume("spark-configmap-volume", *cm))
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "spark-configmap-volume", MountPath: userSparkConfDir, ReadOnly: true})
		if r.role == sparkpod.RoleExecutor {
			// The driver's SPARK_CONF_DIR is set with its properties file (confVolume); the
			// executors read their log4j2.properties and the like from the same place.
			c.Env = appendEnv(c.Env, corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: userSparkConfDir})
		}
	}
	for _, cm := range ps.ConfigMaps {
		name := configMapVolumeName(cm.Name)
		c.Volumes = append(c.Volumes, configMapVolume(name, cm.Name))
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: cm.Path, ReadOnly: true})
	}
	for _, m := range ps.VolumeMounts {
		// Executors get their local directories from Spark's volume properties; a second
		// copy in the template would be a duplicate volume.
		if r.role == sparkpod.RoleExecutor && strings.HasPrefix(m.Name, localDirPrefix) {
			continue
		}
		if vol := b.volume(m.Name); vol != nil {
			if !hasVolumeNamed(c.Volumes, vol.Name) {
				c.Volumes = append(c.Volumes, *vol)
			}
			c.VolumeMounts = append(c.VolumeMounts, m)
		}
	}
	for _, p := range r.ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: corev1.Protocol(p.Protocol)})
	}
	vols, mounts, ports := b.metricsCustomization(r.metricsExposed)
	c.Volumes = append(c.Volumes, vols...)
	c.VolumeMounts = append(c.VolumeMounts, mounts...)
	c.Ports = append(c.Ports, ports...)
	return c
}

// appendEnv adds e unless the list names it already; it never changes the caller's slice.
func appendEnv(list []corev1.EnvVar, e corev1.EnvVar) []corev1.EnvVar {
	for _, x := range list {
		if x.Name == e.Name {
			return list
		}
	}
	out := make([]corev1.EnvVar, 0, len(list)+1)
	return append(append(out, list...), e)
}

func hasVolumeNamed(list []corev1.Volume, name string) bool {
	for i := range list {
		if list[i].Name == name {
			return true
		}
	}
	return false
}

// configMapVolumeName is <configMap>-vol when that is a valid volume name (a DNS-1123 label),
// and otherwise the sanitised, cut and hash-suffixed form, so that ConfigMaps with dots, capitals
// or long names can be mounted. Kubeflow's rule (#3099) only replaces dots and cuts; ours also
// maps every other character a label refuses, and hashes the full name so that app.config and
// app-config never share a volume.
func configMapVolumeName(configMap string) string { return boundedVolumeName(configMap, "-vol") }
