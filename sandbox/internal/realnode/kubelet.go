package realnode

import (
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// kubeletConfig is the KubeletConfiguration of the node: as kubeadm writes it for a node that
// joins with certificates (x509 and webhook authentication, webhook authorization, cluster DNS),
// with what this kind of machine needs and a shared machine wants.
func kubeletConfig(c Config, dir, socket, cgroupRoot string) map[string]any {
	taints := c.Taints
	if taints == nil {
		taints = []corev1.Taint{}
	}
	return map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		// cgroup v1 is what the machine has; 1.36 refuses it unless told.
		"failCgroupV1": false,
		// No systemd as PID 1.
		"cgroupDriver": "cgroupfs",
		// The pods' cgroups under a root of this node's own, not the machine's /kubepods, which
		// another node on the same machine would share.
		"cgroupRoot":               cgroupRoot,
		"containerRuntimeEndpoint": "unix://" + socket,
		"address":                  c.NodeIP.Addr().String(),
		"port":                     10250,
		"readOnlyPort":             0,
		"healthzBindAddress":       "127.0.0.1",
		"healthzPort":              10248,
		"tlsCertFile":              c.ServingCertFile,
		"tlsPrivateKeyFile":        c.ServingKeyFile,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": c.CAFile},
		},
		"authorization": map[string]any{"mode": "Webhook"},
		"clusterDNS":    []string{c.ClusterDNS.String()},
		"clusterDomain": "cluster.local",
		// What CoreDNS forwards to, and what pods with dnsPolicy Default get.
		"resolvConf":          "/etc/resolv.conf",
		"podLogsDir":          filepath.Join(dir, "pod-logs"),
		"volumePluginDir":     filepath.Join(dir, "volume-plugins"),
		"registerWithTaints":  taints,
		"failSwapOn":          false,
		"serializeImagePulls": false,
		// The images were imported, not pulled: no registry gives them back once collected.
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		// Absolute thresholds, as the disk is the machine's and shared: the defaults' 10-15 %
		// free would evict pods for what other work on the machine wrote.
		"evictionHard": map[string]string{
			"memory.available":  "100Mi",
			"nodefs.available":  "1Gi",
			"imagefs.available": "1Gi",
			"nodefs.inodesFree": "1%",
		},
	}
}

func writeYAML(path string, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// kubeProxyConfig runs kube-proxy in iptables mode for the node. The conntrack settings are left
// as the machine has them (zeros): setting the table size needs a writable
// /sys/module/nf_conntrack, which a VM does not always give.
func kubeProxyConfig(c Config, podCIDR string) map[string]any {
	return map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]any{"kubeconfig": c.ProxyKubeconfig},
		"mode":               "iptables",
		"hostnameOverride":   c.NodeName,
		"bindAddress":        c.NodeIP.Addr().String(),
		"clusterCIDR":        podCIDR,
		"healthzBindAddress": "127.0.0.1:10256",
		"metricsBindAddress": "127.0.0.1:10249",
		// NodePorts on the node's address only, not on every address of its namespace.
		"nodePortAddresses": []string{"primary"},
		"conntrack": map[string]any{
			"maxPerCore":            0,
			"min":                   0,
			"tcpEstablishedTimeout": "0s",
			"tcpCloseWaitTimeout":   "0s",
		},
	}
}
