package mutate

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// podFacts are what rules match on and what placeholders expand to, taken from the pod as it
// arrived.
type podFacts struct {
	namespace string
	role      string
	appID     string
	appName   string
}

func (f *podFacts) lookup(name string) string {
	switch name {
	case placeholderAppID:
		return f.appID
	case placeholderAppName:
		return f.appName
	case placeholderNamespace:
		return f.namespace
	case placeholderRole:
		return f.role
	}
	return ""
}

// matching returns the rules that select the pod, in file order.
func (p *Policy) matching(facts *podFacts, podLabels map[string]string) []*compiledRule {
	if p == nil {
		return nil
	}
	var out []*compiledRule
	for i := range p.rules {
		r := &p.rules[i]
		if r.role != "" && r.role != facts.role {
			continue
		}
		if r.namespaces != nil && !slices.Contains(r.namespaces, facts.namespace) {
			continue
		}
		if r.selector != nil && !r.selector.Matches(labels.Set(podLabels)) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// applySettings sets what s asks for. With enforce false a field the pod already has is left
// alone; the API server's own default scheduler name counts as unset.
func (e *podEditor) applySettings(s *compiledSettings, enforce bool, facts *podFacts) {
	spec := &e.pod.Spec
	if s.schedulerName != "" && (enforce || spec.SchedulerName == "" || spec.SchedulerName == defaultSchedulerName) {
		e.setSchedulerName(kindSchedulerName, s.schedulerName)
	}
	if s.priorityClassName != "" && (enforce || spec.PriorityClassName == "") {
		e.setPriorityClassName(s.priorityClassName)
	}
	e.setEntries(s.labels, &e.pod.Labels, "/metadata/labels", enforce, true, facts)
	e.setEntries(s.annotations, &e.pod.Annotations, "/metadata/annotations", enforce, false, facts)
	e.setEntries(s.nodeSelector, &spec.NodeSelector, "/spec/nodeSelector", enforce, true, facts)
	for _, t := range s.tolerations {
		e.addToleration(kindTolerations, t)
	}
}

func (e *podEditor) setEntries(entries []entry, m *map[string]string, path string, enforce, labelValues bool, facts *podFacts) {
	for _, en := range entries {
		if en.driverOnly && facts.role != sparkpod.RoleDriver {
			continue
		}
		if _, has := (*m)[en.key]; has && !enforce {
			continue
		}
		value := en.value
		if en.template && strings.Contains(en.value, "{{") {
			var ok bool
			if value, ok = expand(en.value, facts.lookup); !ok {
				continue
			}
			// Static values were validated with the policy; expanded ones can only be checked here.
			if labelValues && len(validation.IsValidLabelValue(value)) > 0 {
				// An expanded value that is not a valid label value would only make the API server
				// refuse the pod.
				continue
			}
		}
		setKey(&e.patch, en.kind, m, path, en.key, value)
	}
}

// violations lists what the rule's guardrails forbid in the pod.
func (r *compiledRule) violations(pod *corev1.Pod, namespace string) []string {
	g := r.guardrails
	if g == nil || slices.Contains(g.ExemptNamespaces, namespace) {
		return nil
	}
	var out []string
	if g.DenyPrivileged {
		for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range list {
				if sc := list[i].SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
					out = append(out, fmt.Sprintf("container %q is privileged", list[i].Name))
				}
			}
		}
	}
	if g.DenyHostPath {
		for i := range pod.Spec.Volumes {
			if hp := pod.Spec.Volumes[i].HostPath; hp != nil {
				out = append(out, fmt.Sprintf("volume %q mounts host path %q", pod.Spec.Volumes[i].Name, hp.Path))
			}
		}
	}
	if g.DenyHostNetwork && pod.Spec.HostNetwork {
		out = append(out, "the pod uses the host network")
	}
	if len(g.AllowedServiceAccounts) > 0 {
		sa := serviceAccountName(pod)
		if !slices.Contains(g.AllowedServiceAccounts, sa) {
			out = append(out, fmt.Sprintf("service account %q is not one of %s", sa, strings.Join(g.AllowedServiceAccounts, ", ")))
		}
	}
	return out
}

func serviceAccountName(pod *corev1.Pod) string {
	switch {
	case pod.Spec.ServiceAccountName != "":
		return pod.Spec.ServiceAccountName
	case pod.Spec.DeprecatedServiceAccount != "":
		return pod.Spec.DeprecatedServiceAccount
	}
	// The ServiceAccount admission plugin, which runs before webhooks, would have set "default".
	return "default"
}
