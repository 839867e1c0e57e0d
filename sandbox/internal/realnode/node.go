// Package realnode runs a real Kubernetes node on this machine: containerd with runc and the CNI
// bridge, the kubelet and kube-proxy of the pinned Kubernetes (hack/node/build.sh builds them
// all), and CoreDNS as the cluster DNS, joined to a control plane that runs elsewhere on the
// machine. The node has a network namespace of its own, as if it were a machine of its own, so
// that its rules and bridges are its own and go with it. Images come from this machine, not
// from a registry: the node imports them into containerd (package ociimage).
package realnode

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/ociimage"
)

// The images of the node itself, under names of this project: the upstream ones live in a
// registry this node never reaches.
const (
	PauseImage   = "sparkhooks/pause:1"
	CoreDNSImage = "coredns/coredns:1.15.0"
)

//go:embed coredns.yaml
var corednsManifests string

// Config says how the node joins the cluster.
type Config struct {
	// Dir holds the node's state: containerd's, the kubelet's, CNI's.
	Dir string
	// LogDir gets one log per daemon.
	LogDir string
	// BinDir is what hack/node/build.sh prints.
	BinDir string
	// LayerCache keeps the layers of large images (the Spark images') between runs.
	LayerCache string
	NodeName   string
	// Bridge is the host's bridge the node is joined to, Gateway the host's address on it (where
	// the API server is reached) and NodeIP the node's.
	Bridge  string
	Gateway netip.Addr
	NodeIP  netip.Prefix
	// ServiceCIDR is the cluster's Service network and ClusterDNS the address of kube-dns in it.
	ServiceCIDR netip.Prefix
	ClusterDNS  netip.Addr
	// KubeletKubeconfig authenticates the kubelet as system:node:<NodeName>, ProxyKubeconfig
	// kube-proxy as system:kube-proxy, AdminKubeconfig installs CoreDNS; all name the API server
	// at an address the node reaches (Gateway).
	KubeletKubeconfig, ProxyKubeconfig, AdminKubeconfig string
	// CAFile verifies the API server's clients of the kubelet API; ServingCertFile and
	// ServingKeyFile are the kubelet's serving pair, valid for NodeIP.
	CAFile, ServingCertFile, ServingKeyFile string
	Taints                                  []corev1.Taint
	Random                                  *rand.Rand
	Logf                                    func(format string, args ...any)
}

// Node is a running node.
type Node struct {
	// PodCIDR is the pods' network.
	PodCIDR netip.Prefix
	// CgroupRoot is the cgroup under which the kubelet puts its pods, in every hierarchy.
	CgroupRoot string

	config     Config
	network    *network
	containerd *containerd
	kubelet    *daemon
	proxy      *daemon
	runLayers  ociimage.LayerCache
}

// Start starts the node: its network, containerd with the node's own images, the kubelet (which
// registers the Node), kube-proxy, and CoreDNS's objects. It returns without waiting for the
// Node to be Ready. On error, what was started is stopped.
func Start(ctx context.Context, c Config) (_ *Node, err error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	n := &Node{config: c, runLayers: ociimage.LayerCache{Dir: filepath.Join(c.Dir, "layers")}}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	for _, d := range []string{c.Dir, c.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if n.network, err = newNetwork(ctx, networkConfig{bridge: c.Bridge, nodeIP: c.NodeIP, gateway: c.Gateway, service: c.ServiceCIDR}, c.Random, c.Logf); err != nil {
		return nil, err
	}
	n.PodCIDR = n.network.podCIDR
	n.CgroupRoot = "/sparkhooks-" + strings.TrimPrefix(n.network.name, "skn-")
	if err := createCgroupRoot(n.CgroupRoot); err != nil {
		return nil, err
	}
	if n.containerd, err = startContainerd(n.network, c.BinDir, c.Dir, c.LogDir, PauseImage); err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := n.containerd.ready(startCtx); err != nil {
		return nil, err
	}
	system, err := n.systemImages()
	if err != nil {
		return nil, err
	}
	if err := n.containerd.importImages(ctx, system); err != nil {
		return nil, err
	}
	if n.kubelet, err = n.startKubelet(); err != nil {
		return nil, err
	}
	if n.proxy, err = n.startProxy(); err != nil {
		return nil, err
	}
	if err := n.applyCoreDNS(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

func (c *Config) check() error {
	for _, b := range []string{"kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "ctr", "runc", "coredns", "pause", "rootfs.tar", "cni/bridge", "cni/host-local", "cni/loopback"} {
		if _, err := os.Stat(filepath.Join(c.BinDir, b)); err != nil {
			return fmt.Errorf("the real node: no %s in %q (hack/node/build.sh prints the directory)", b, c.BinDir)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("the real node needs root (network namespaces, mounts, cgroups)")
	}
	if c.Random == nil || c.Logf == nil {
		return errors.New("realnode: Random and Logf are required")
	}
	return nil
}

func (n *Node) startKubelet() (*daemon, error) {
	c := n.config
	dir := filepath.Join(c.Dir, "kubelet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	configFile := filepath.Join(c.Dir, "kubelet.yaml")
	if err := writeYAML(configFile, kubeletConfig(c, dir, n.containerd.socket, n.CgroupRoot)); err != nil {
		return nil, err
	}
	return startDaemon(n.network, c.LogDir, "kubelet", filepath.Join(c.BinDir, "kubelet"),
		"--config="+configFile,
		"--kubeconfig="+c.KubeletKubeconfig,
		"--root-dir="+filepath.Join(dir, "root"),
		"--hostname-override="+c.NodeName,
		"--node-ip="+c.NodeIP.Addr().String(),
	)
}

func (n *Node) startProxy() (*daemon, error) {
	c := n.config
	configFile := filepath.Join(c.Dir, "kube-proxy.yaml")
	if err := writeYAML(configFile, kubeProxyConfig(c, n.PodCIDR.String())); err != nil {
		return nil, err
	}
	return startDaemon(n.network, c.LogDir, "kube-proxy", filepath.Join(c.BinDir, "kube-proxy"), "--config="+configFile)
}

func (n *Node) applyCoreDNS(ctx context.Context) error {
	var manifests strings.Builder
	if err := template.Must(template.New("coredns").Parse(corednsManifests)).Execute(&manifests, map[string]string{
		"Image": CoreDNSImage, "ClusterIP": n.config.ClusterDNS.String(),
	}); err != nil {
		return err
	}
	file := filepath.Join(n.config.Dir, "coredns.yaml")
	if err := os.WriteFile(file, []byte(manifests.String()), 0o644); err != nil {
		return err
	}
	if _, err := kubectl.Run(ctx, n.config.AdminKubeconfig, "apply", "--server-side", "-f", file); err != nil {
		return fmt.Errorf("installing CoreDNS: %w", err)
	}
	return nil
}

// WaitForDNS waits until CoreDNS serves: pods resolve names from then on.
func (n *Node) WaitForDNS(ctx context.Context, client kubernetes.Interface) error {
	return n.kubelet.waitFor(ctx, "CoreDNS to be available", func(ctx context.Context) error {
		d, err := client.AppsV1().Deployments(metav1.NamespaceSystem).Get(ctx, "coredns", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("%d of %d replicas available", d.Status.AvailableReplicas, d.Status.Replicas)
	})
}

// Stop stops the node and removes what it left on the machine: the kubelet and kube-proxy first,
// then every pod through the CRI, containerd, the mounts under the node's directory, the links
// in /var/log/containers, the node's cgroups and its network namespace with all its rules.
func (n *Node) Stop() {
	logf := n.config.Logf
	for _, d := range []*daemon{n.kubelet, n.proxy} {
		if d != nil {
			d.stop(10 * time.Second)
		}
	}
	if n.containerd != nil {
		if n.containerd.running() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := removePods(ctx, n.containerd.socket); err != nil {
				logf("realnode: %v", err)
			}
			cancel()
		}
		n.containerd.stop(10 * time.Second)
	}
	if err := unmountUnder(n.config.Dir); err != nil {
		logf("realnode: %v", err)
	}
	removeContainerLogLinks(filepath.Join(n.config.Dir, "kubelet", "pod-logs"))
	if n.CgroupRoot != "" {
		if err := removeCgroupRoot(n.CgroupRoot); err != nil {
			logf("realnode: %v", err)
		}
	}
	if n.network != nil {
		n.network.close()
	}
}
