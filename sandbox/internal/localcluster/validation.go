package localcluster

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules below are the part of Kubernetes' own validation (k8s.io/kubernetes/pkg/apis/core/
// validation, which is not importable) that a generated Spark pod, ConfigMap, Service or Ingress
// can plausibly break. They keep the harness from accepting an object a real cluster refuses;
// they do not try to be complete.

// defaultTerminationGracePeriod is the API server's default for pods without one.
const defaultTerminationGracePeriod = 30

// maxConfigMapBytes is the API server's limit on the data of a ConfigMap.
const maxConfigMapBytes = 1 << 20

func validatePod(pod *corev1.Pod) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, field.Required(spec.Child("containers"), ""))
	}
	volumes := sets.New[string]()
	for i, v := range pod.Spec.Volumes {
		path := spec.Child("volumes").Index(i).Child("name")
		errs = append(errs, dns1123Label(path, v.Name)...)
		if volumes.Has(v.Name) {
			errs = append(errs, field.Duplicate(path, v.Name))
		}
		volumes.Insert(v.Name)
	}
	names := sets.New[string]()
	errs = append(errs, validateContainers(spec.Child("initContainers"), pod.Spec.InitContainers, volumes, names)...)
	errs = append(errs, validateContainers(spec.Child("containers"), pod.Spec.Containers, volumes, names)...)
	switch pod.Spec.RestartPolicy {
	case "", corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(spec.Child("restartPolicy"), pod.Spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	if sa := pod.Spec.ServiceAccountName; sa != "" {
		for _, msg := range validation.IsDNS1123Subdomain(sa) {
			errs = append(errs, field.Invalid(spec.Child("serviceAccountName"), sa, msg))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(pod.Spec.NodeSelector, spec.Child("nodeSelector"))...)
	return errs
}

func validateContainers(path *field.Path, containers []corev1.Container, volumes, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i, c := range containers {
		cPath := path.Index(i)
		errs = append(errs, dns1123Label(cPath.Child("name"), c.Name)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cPath.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(cPath.Child("image"), ""))
		}
		errs = append(errs, validatePorts(cPath.Child("ports"), c.Ports)...)
		errs = append(errs, validateEnv(cPath.Child("env"), c.Env)...)
		mountPaths := sets.New[string]()
		for j, m := range c.VolumeMounts {
			mPath := cPath.Child("volumeMounts").Index(j)
			if !volumes.Has(m.Name) {
				errs = append(errs, field.NotFound(mPath.Child("name"), m.Name))
			}
			if m.MountPath == "" {
				errs = append(errs, field.Required(mPath.Child("mountPath"), ""))
			}
			if mountPaths.Has(m.MountPath) {
				errs = append(errs, field.Invalid(mPath.Child("mountPath"), m.MountPath, "must be unique"))
			}
			mountPaths.Insert(m.MountPath)
		}
		errs = append(errs, validateResources(cPath.Child("resources"), c.Resources)...)
	}
	return errs
}

func validatePorts(path *field.Path, ports []corev1.ContainerPort) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		pPath := path.Index(i)
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				errs = append(errs, field.Invalid(pPath.Child("name"), p.Name, msg))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(pPath.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
			errs = append(errs, field.Invalid(pPath.Child("containerPort"), p.ContainerPort, msg))
		}
	}
	return errs
}

func validateEnv(path *field.Path, env []corev1.EnvVar) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		// The API server accepts any printable ASCII name without '=' (relaxed env var names).
		if e.Name == "" {
			errs = append(errs, field.Required(path.Index(i).Child("name"), ""))
			continue
		}
		for _, msg := range validation.IsRelaxedEnvVarName(e.Name) {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), e.Name, msg))
		}
	}
	return errs
}

func validateResources(path *field.Path, res corev1.ResourceRequirements) field.ErrorList {
	var errs field.ErrorList
	for name, request := range res.Requests {
		limit, ok := res.Limits[name]
		if ok && request.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), request.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}

// validatePodUpdate enforces pod spec immutability: only the fields a real API server lets an
// update change may differ (images, activeDeadlineSeconds, added tolerations, and the node name
// the scheduler binds once).
func validatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	mutable := pod.Spec.DeepCopy()
	for i := range mutable.Containers {
		if i < len(old.Spec.Containers) {
			mutable.Containers[i].Image = old.Spec.Containers[i].Image
		}
	}
	for i := range mutable.InitContainers {
		if i < len(old.Spec.InitContainers) {
			mutable.InitContainers[i].Image = old.Spec.InitContainers[i].Image
		}
	}
	mutable.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	if len(mutable.Tolerations) >= len(old.Spec.Tolerations) {
		mutable.Tolerations = old.Spec.Tolerations
	}
	if old.Spec.NodeName == "" {
		mutable.NodeName = old.Spec.NodeName
	}
	if !equality.Semantic.DeepEqual(*mutable, old.Spec) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"),
			"pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, "+
				"`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations)")}
	}
	return nil
}

func podGracePeriod(obj runtime.Object, requested *int64) int64 {
	pod := obj.(*corev1.Pod)
	// A pod no kubelet runs, or one that has finished, has nothing to stop: it goes at once.
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0
	}
	if requested != nil {
		return *requested
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return defaultTerminationGracePeriod
}

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for key, value := range cm.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
		}
		size += len(value)
	}
	for key, value := range cm.BinaryData {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
		}
		size += len(value)
	}
	if size > maxConfigMapBytes {
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxConfigMapBytes))
	}
	return errs
}

func validateService(svc *corev1.Service) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	headless := svc.Spec.ClusterIP == corev1.ClusterIPNone
	if len(svc.Spec.Ports) == 0 && !headless && svc.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	if svc.Spec.ClusterIP != "" && !headless {
		errs = append(errs, field.Invalid(spec.Child("clusterIP"), svc.Spec.ClusterIP, "the harness allocates no cluster IPs; leave it empty or None"))
	}
	switch svc.Spec.Type {
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
	default:
		errs = append(errs, field.NotSupported(spec.Child("type"), svc.Spec.Type,
			[]corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName}))
	}
	names := sets.New[string]()
	for i, p := range svc.Spec.Ports {
		pPath := spec.Child("ports").Index(i)
		if len(svc.Spec.Ports) > 1 && p.Name == "" {
			errs = append(errs, field.Required(pPath.Child("name"), "must be set when a service has more than one port"))
		}
		if p.Name != "" {
			errs = append(errs, dns1123Label(pPath.Child("name"), p.Name)...)
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(pPath.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(pPath.Child("port"), p.Port, msg))
		}
		if p.TargetPort.StrVal != "" {
			for _, msg := range validation.IsValidPortName(p.TargetPort.StrVal) {
				errs = append(errs, field.Invalid(pPath.Child("targetPort"), p.TargetPort.StrVal, msg))
			}
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(svc.Spec.Selector, spec.Child("selector"))...)
	return errs
}

func validateIngress(ing *networkingv1.Ingress) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if ing.Spec.DefaultBackend == nil && len(ing.Spec.Rules) == 0 {
		errs = append(errs, field.Invalid(spec, ing.Spec, "either `defaultBackend` or `rules` must be specified"))
	}
	for i, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for j, p := range rule.HTTP.Paths {
			pPath := spec.Child("rules").Index(i).Child("http", "paths").Index(j)
			if p.PathType == nil {
				errs = append(errs, field.Required(pPath.Child("pathType"), "pathType must be specified"))
			}
			if p.Backend.Service != nil {
				errs = append(errs, dns1123Label(pPath.Child("backend", "service", "name"), p.Backend.Service.Name)...)
			}
		}
	}
	return errs
}

func dns1123Label(path *field.Path, value string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}
