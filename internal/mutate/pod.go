package mutate

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// sparkContainerNames are the names Spark gives its own container, per role. Older Kubeflow
// executor templates used "executor".
var sparkContainerNames = map[string][]string{
	sparkpod.RoleDriver:   {"spark-kubernetes-driver"},
	sparkpod.RoleExecutor: {"spark-kubernetes-executor", "executor"},
}

// podEditor changes a decoded pod and records every change as a patch operation against the pod
// JSON the API server holds.
type podEditor struct {
	pod   *corev1.Pod
	role  string
	spark int // index of the Spark container; -1 when the pod has none
	patch patch
}

func newPodEditor(pod *corev1.Pod) *podEditor {
	role := pod.Labels[sparkpod.LabelSparkRole]
	return &podEditor{pod: pod, role: role, spark: sparkContainerIndex(pod, role)}
}

func sparkContainerIndex(pod *corev1.Pod, role string) int {
	if len(pod.Spec.Containers) == 0 {
		return -1
	}
	for _, name := range sparkContainerNames[role] {
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == name {
				return i
			}
		}
	}
	return 0
}

func (e *podEditor) container() *corev1.Container {
	return &e.pod.Spec.Containers[e.spark]
}

func (e *podEditor) containerPath() string {
	return "/spec/containers/" + strconv.Itoa(e.spark)
}

// hasContainerNamed reports whether any regular or init container is called name: names are unique
// across both lists.
func (e *podEditor) hasContainerNamed(name string) bool {
	for i := range e.pod.Spec.Containers {
		if e.pod.Spec.Containers[i].Name == name {
			return true
		}
	}
	for i := range e.pod.Spec.InitContainers {
		if e.pod.Spec.InitContainers[i].Name == name {
			return true
		}
	}
	return false
}
