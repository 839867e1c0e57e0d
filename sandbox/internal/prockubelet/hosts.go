package prockubelet

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// clusterDomain is the DNS suffix of the cluster, as kubelets are usually configured.
const clusterDomain = "cluster.local"

// renderHosts is the /etc/hosts of one pod: what cluster DNS would answer for it, written out.
// A pod's resolver searches <ns>.svc.cluster.local, svc.cluster.local and cluster.local, so each
// Service appears under every name that search list makes resolvable from the pod's namespace.
// Headless Services name their ready endpoints; other Services name one ready pod they select,
// standing in for the cluster IP that kube-proxy would forward (ports are not remapped).
func renderHosts(self *corev1.Pod, selfIP, apiServerIP string, services []*corev1.Service, pods []*corev1.Pod) string {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file (process kubelet).\n")
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	hostname, fqdn := podHostnames(self)
	if selfIP != "" {
		names := []string{}
		if fqdn != "" {
			names = append(names, fqdn)
		}
		names = append(names, hostname)
		fmt.Fprintf(&b, "%s\t%s\n", selfIP, strings.Join(names, " "))
	}
	if apiServerIP != "" {
		fmt.Fprintf(&b, "%s\t%s\n", apiServerIP, strings.Join(serviceNames(self.Namespace, "default", "kubernetes"), " "))
	}

	type entry struct{ ip, names string }
	var entries []entry
	for _, svc := range services {
		if svc.Spec.Type == corev1.ServiceTypeExternalName || len(svc.Spec.Selector) == 0 {
			continue
		}
		selector := labels.SelectorFromSet(svc.Spec.Selector)
		var endpoints []*corev1.Pod
		for _, pod := range pods {
			if pod.Namespace != svc.Namespace || pod.Status.PodIP == "" || pod.DeletionTimestamp != nil || !selector.Matches(labels.Set(pod.Labels)) {
				continue
			}
			if pod.Status.Phase != corev1.PodRunning || (!podReady(pod) && !svc.Spec.PublishNotReadyAddresses) {
				continue
			}
			endpoints = append(endpoints, pod)
		}
		slices.SortFunc(endpoints, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		if len(endpoints) == 0 {
			continue
		}
		names := strings.Join(serviceNames(self.Namespace, svc.Namespace, svc.Name), " ")
		headless := svc.Spec.ClusterIP == corev1.ClusterIPNone
		if !headless {
			endpoints = endpoints[:1]
		}
		for _, pod := range endpoints {
			entries = append(entries, entry{pod.Status.PodIP, names})
			if headless && pod.Spec.Subdomain == svc.Name {
				podName, _ := podHostnames(pod)
				entries = append(entries, entry{pod.Status.PodIP, strings.Join(serviceNames(self.Namespace, svc.Namespace, podName+"."+svc.Name), " ")})
			}
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := strings.Compare(a.names, b.names); c != 0 {
			return c
		}
		return strings.Compare(a.ip, b.ip)
	})
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\t%s\n", e.ip, e.names)
	}
	return b.String()
}

// serviceNames are the names under which name (a Service, or host.service) in namespace resolves
// from a pod in fromNamespace: the fully qualified ones, and the short ones its search list allows.
func serviceNames(fromNamespace, namespace, name string) []string {
	names := []string{
		name + "." + namespace + ".svc." + clusterDomain,
		name + "." + namespace + ".svc",
		name + "." + namespace,
	}
	if fromNamespace == namespace {
		names = append(names, name)
	}
	return names
}

// podHostnames returns the pod's hostname and, when it has a subdomain, its fully qualified name.
func podHostnames(pod *corev1.Pod) (string, string) {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	if len(hostname) > 63 {
		hostname = strings.TrimRight(hostname[:63], "-.")
	}
	if pod.Spec.Subdomain == "" {
		return hostname, ""
	}
	return hostname, fmt.Sprintf("%s.%s.%s.svc.%s", hostname, pod.Spec.Subdomain, pod.Namespace, clusterDomain)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
