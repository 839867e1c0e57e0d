package prockubelet

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// computeStatus derives the pod's status from its containers' as the kubelet does; the caller
// holds r.mu. Conditions keep their transition times while their status does not change.
func (r *podRunner) computeStatus(pod *corev1.Pod) corev1.PodStatus {
	s := corev1.PodStatus{
		Phase:                 r.phase(),
		StartTime:             r.status.startTime,
		InitContainerStatuses: cloneStatuses(r.status.init),
		ContainerStatuses:     cloneStatuses(r.status.main),
		QOSClass:              qosClass(pod),
		HostIP:                r.k.cfg.NodeIP.String(),
		HostIPs:               []corev1.HostIP{{IP: r.k.cfg.NodeIP.String()}},
	}
	if r.net != nil {
		s.PodIP = r.net.IP.String()
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	} else if pod.Status.PodIP != "" {
		s.PodIP, s.PodIPs = pod.Status.PodIP, pod.Status.PodIPs
	}
	containersReady := len(r.status.main) > 0
	for _, c := range r.status.main {
		containersReady = containersReady && c.Ready
	}
	terminal := s.Phase == corev1.PodSucceeded || s.Phase == corev1.PodFailed
	conditions := []struct {
		t      corev1.PodConditionType
		ok     bool
		reason string
	}{
		{corev1.PodReadyToStartContainers, r.status.networkReady && !terminal, ""},
		{corev1.PodInitialized, r.status.initialized || len(pod.Spec.InitContainers) == 0, "ContainersNotInitialized"},
		{corev1.ContainersReady, containersReady && !terminal, "ContainersNotReady"},
		{corev1.PodReady, containersReady && !terminal, "ContainersNotReady"},
		{corev1.PodScheduled, true, ""},
	}
	if terminal {
		conditions[3].reason, conditions[2].reason = "PodCompleted", "PodCompleted"
	}
	now := metav1.NewTime(r.k.cfg.Now())
	for _, c := range conditions {
		status := corev1.ConditionFalse
		reason := c.reason
		if c.ok {
			status, reason = corev1.ConditionTrue, ""
		}
		transition := now
		for _, old := range pod.Status.Conditions {
			if old.Type == c.t && old.Status == status {
				transition = old.LastTransitionTime
			}
		}
		s.Conditions = append(s.Conditions, corev1.PodCondition{Type: c.t, Status: status, Reason: reason, LastTransitionTime: transition})
	}
	return s
}

// phase follows the kubelet's rules: Pending until the containers have started, Running while
// any runs or will run again, then Succeeded when all ended with 0 and Failed otherwise.
func (r *podRunner) phase() corev1.PodPhase {
	if r.status.initFailed {
		return corev1.PodFailed
	}
	if !r.status.initialized {
		return corev1.PodPending
	}
	running, started, succeeded, failed := 0, 0, 0, 0
	for _, c := range r.status.main {
		switch {
		case c.State.Running != nil:
			running++
			started++
		case c.State.Terminated != nil && r.status.final[c.Name]:
			started++
			if c.State.Terminated.ExitCode == 0 {
				succeeded++
			} else {
				failed++
			}
		case c.State.Terminated != nil || c.LastTerminationState.Terminated != nil:
			started++
		}
	}
	total := len(r.status.main)
	switch {
	case succeeded+failed == total && total > 0:
		if failed > 0 {
			return corev1.PodFailed
		}
		return corev1.PodSucceeded
	case r.status.terminal:
		// Deleted while running: every container was stopped.
		if failed > 0 || running > 0 {
			return corev1.PodFailed
		}
		return corev1.PodSucceeded
	case started == 0:
		return corev1.PodPending
	}
	return corev1.PodRunning
}

func cloneStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// qosClass is the pod's quality-of-service class, from its containers' requests and limits.
func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits, guaranteed := 0, 0, true
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		requests += len(c.Resources.Requests)
		limits += len(c.Resources.Limits)
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			limit, hasLimit := c.Resources.Limits[name]
			request, hasRequest := c.Resources.Requests[name]
			if !hasLimit || (hasRequest && request.Cmp(limit) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case requests == 0 && limits == 0:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
