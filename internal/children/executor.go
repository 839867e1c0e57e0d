package children

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// executorTemplate shapes the executors. From Spark 3.0 the customizations go into the executor
// pod template, which the driver reads from the ConfigMap at start-up, so that executors need no
// webhook. Older Spark has no templates; there the customization rides on the executors as an
// annotation, for the webhook to apply.
func (b *builder) executorTemplate() error {
	c := b.customization(b.executorRole())
	var memoryLimit *resource.Quantity
	if s := b.spec.Executor.MemoryLimit; s != nil {
		q, err := v1beta2.ParseMemoryLimit(*s)
		if err != nil {
			return buildErrorf("spec.executor.memoryLimit: %v", err)
		}
		memoryLimit = &q
	}
	if !b.version.atLeast(3, 0) {
		c.MemoryLimit = memoryLimit
		if isEmptyCustomization(c) {
			return nil
		}
		value, err := sparkpod.EncodeCustomization(c)
		if err != nil {
			return buildErrorf("spec.executor: %v", err)
		}
		b.conf.set("spark.kubernetes.executor.annotation."+sparkpod.CustomizationAnnotation, value)
		return nil
	}

	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}}
	if t := b.spec.Executor.Template; t != nil {
		pod.ObjectMeta = *t.ObjectMeta.DeepCopy()
		pod.Spec = *t.Spec.DeepCopy()
	}
	pod.OwnerReferences = b.withApplicationOwner(pod.OwnerReferences)
	// The label only steers the merge to the Spark container; Spark sets the real one.
	labels := pod.Labels
	pod.Labels = map[string]string{sparkpod.LabelSparkRole: sparkpod.RoleExecutor}
	spark := &pod.Spec.Containers[ensureSparkContainer(pod, sparkpod.ExecutorContainerName)]
	// As for the driver: an executor's exception is at the end of its log, which Spark deletes
	// with the executor Pod; the kubelet's fallback keeps it in the status the hook reads.
	if spark.TerminationMessagePolicy == "" {
		spark.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	}
	mutate.ApplyCustomization(pod, c)
	pod.Labels = labels
	b.executorPrivilegeEscalation()
	if memoryLimit != nil {
		// Spark sets the executors' memory limit itself, over the template's; the webhook
		// applies this one after Spark.
		value, err := sparkpod.EncodeCustomization(&sparkpod.Customization{MemoryLimit: memoryLimit})
		if err != nil {
			return buildErrorf("spec.executor.memoryLimit: %v", err)
		}
		b.conf.set("spark.kubernetes.executor.annotation."+sparkpod.CustomizationAnnotation, value)
	}
	// JSON is YAML too, and Spark's template loader reads either; it is many times cheaper to
	// write than YAML, and this runs on every sync.
	data, err := json.MarshalIndent(pod, "", "  ")
	if err != nil {
		return fmt.Errorf("encode executor pod template: %w", err)
	}
	b.executorPodTemplate = data
	b.executorPod = pod
	b.conf.set("spark.kubernetes.executor.podTemplateFile", podTemplateDir+"/"+podTemplateFile)
	b.conf.set("spark.kubernetes.executor.podTemplateContainerName", sparkpod.ExecutorContainerName)
	return nil
}

// executorPrivilegeEscalation keeps an explicit spec.executor.securityContext.
// allowPrivilegeEscalation on Spark 4.3, whose executor builder overrides the template's value
// with spark.kubernetes.executor.securityContext.allowPrivilegeEscalation (default false): the
// spec's value becomes that property unless the user set the property.
func (b *builder) executorPrivilegeEscalation() {
	sc := b.spec.Executor.SecurityContext
	if !b.version.atLeast(4, 3) || sc == nil || sc.AllowPrivilegeEscalation == nil {
		return
	}
	if b.conf.get("spark.kubernetes.executor.securityContext.allowPrivilegeEscalation") != "" {
		return
	}
	b.conf.set("spark.kubernetes.executor.securityContext.allowPrivilegeEscalation", strconv.FormatBool(*sc.AllowPrivilegeEscalation))
}

// ensureSparkContainer makes sure a template has the role's Spark container: the one with its
// name, else the first one, which Spark would pick, else a new one.
func ensureSparkContainer(pod *corev1.Pod, name string) int {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return i
		}
	}
	if len(pod.Spec.Containers) > 0 {
		if pod.Spec.Containers[0].Name == "" {
			pod.Spec.Containers[0].Name = name
		}
		return 0
	}
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name})
	return 0
}

func isEmptyCustomization(c *sparkpod.Customization) bool {
	data, err := json.Marshal(c)
	if err != nil {
		return false
	}
	none, _ := json.Marshal(&sparkpod.Customization{Version: c.Version})
	return string(data) == string(none)
}

// withApplicationOwner adds the SparkApplication to an executor template's owner references, as
// a plain (non-controller) owner: Spark makes the driver Pod each executor's controller, and the
// extra reference lets controllers such as Kueue find the application an executor belongs to.
// Nothing is added without a uid (a reference without one is refused) or when it is there.
func (b *builder) withApplicationOwner(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if b.app.UID == "" {
		return refs
	}
	owner := metav1.OwnerReference{
		APIVersion: v1beta2.GroupVersion.String(),
		Kind:       v1beta2.KindSparkApplication,
		Name:       b.app.Name,
		UID:        b.app.UID,
	}
	if b.app.APIVersion != "" && b.app.Kind != "" {
		// An application of another API built as a SparkApplication (the Apache operator's)
		// names its own type.
		owner.APIVersion, owner.Kind = b.app.APIVersion, b.app.Kind
	}
	for _, ref := range refs {
		if ref.UID == owner.UID {
			return refs
		}
	}
	return append(refs, owner)
}
