package stack

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/ociimage"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/realnode"
)

// clusterDNS is kube-dns's address, the tenth of the Service network as kubeadm picks it.
var clusterDNS = netip.MustParseAddr("10.0.0.10")

// startRealNode starts the real node (Options.RealNode) joined to the control plane, with the
// charts' images imported, and returns what imports the Spark images: they are large, so they go
// in while the charts install.
//
// The node lives in a network namespace of its own, on the process kubelet's bridge (o.Network)
// at the address after the host's: the host's address is the API server's as the node sees it,
// where a relay hands connections to the API server on loopback.
func (s *Stack) startRealNode(ctx, runCtx context.Context, o Options, chartImages map[string]prockubelet.Image) (func(context.Context) error, error) {
	_, port, err := net.SplitHostPort(s.APIAddress)
	if err != nil {
		return nil, err
	}
	apiPort, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	if err := o.Network.Forward(runCtx, apiPort, s.APIAddress); err != nil {
		return nil, err
	}
	server := "https://" + net.JoinHostPort(o.Network.Gateway.String(), port)
	nodeIP := netip.PrefixFrom(o.Network.Gateway.Next(), o.Network.Subnet.Bits())
	p, now := s.control.pki, s.control.now
	kubeconfigs := map[string]string{}
	for name, req := range map[string]certRequest{
		"kubelet-client": {commonName: "system:node:" + o.NodeName, organizations: []string{"system:nodes"}},
		"kube-proxy":     {commonName: "system:kube-proxy"},
		"node-admin":     {commonName: "kubernetes-admin", organizations: []string{"system:masters"}},
	} {
		req.name, req.client = name, true
		cert, err := p.issue(req, now, certValidity)
		if err != nil {
			return nil, err
		}
		kubeconfigs[name] = filepath.Join(o.Dir, name+".kubeconfig")
		if err := writeKubeconfig(kubeconfigs[name], server, p.caPEM, cert); err != nil {
			return nil, err
		}
	}
	serving, err := p.issue(certRequest{
		name: "kubelet", commonName: o.NodeName, server: true, dnsNames: []string{o.NodeName}, ips: []net.IP{nodeIP.Addr().AsSlice()},
	}, now, certValidity)
	if err != nil {
		return nil, err
	}
	s.Node, err = realnode.Start(ctx, realnode.Config{
		Dir: filepath.Join(o.Dir, "node"), LogDir: s.LogDir, BinDir: o.RealNode,
		LayerCache: filepath.Join(filepath.Dir(o.RealNode), "layers"),
		NodeName:   o.NodeName, Bridge: o.Network.Bridge, Gateway: o.Network.Gateway, NodeIP: nodeIP,
		ServiceCIDR: netip.MustParsePrefix(serviceCIDR), ClusterDNS: clusterDNS,
		KubeletKubeconfig: kubeconfigs["kubelet-client"], ProxyKubeconfig: kubeconfigs["kube-proxy"], AdminKubeconfig: kubeconfigs["node-admin"],
		CAFile: p.caFile(), ServingCertFile: serving.CertFile, ServingKeyFile: serving.KeyFile,
		Taints: o.NodeTaints, Random: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0)), Logf: o.Logf,
	})
	if err != nil {
		return nil, fmt.Errorf("the real node: %w", err)
	}
	if o.SparkhooksImage != "" {
		ref := o.sparkhooksImageRef()
		digest, err := s.Node.ImportArchive(ctx, o.SparkhooksImage, ref)
		if err != nil {
			return nil, err
		}
		o.Logf("stack: %s is the image of %s (%s)", ref, o.SparkhooksImage, digest)
		chartImages = maps.Clone(chartImages)
		delete(chartImages, ref)
	}
	images, err := containerImages(chartImages, s.Node.BinaryImage)
	if err != nil {
		return nil, err
	}
	if err := s.Node.Import(ctx, images); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		begin := time.Now()
		images, err := containerImages(o.Images.All(), s.Node.SparkImage)
		if err != nil {
			return err
		}
		if err := s.Node.Import(ctx, images); err != nil {
			return err
		}
		o.Logf("stack: the Spark images imported in %s", time.Since(begin).Round(100*time.Millisecond))
		return nil
	}, nil
}

// containerImages makes container images of local ones: one image per layer and configuration,
// under every reference that names it.
func containerImages(images map[string]prockubelet.Image, build func([]string, string, ociimage.Config) (ociimage.Image, error)) ([]ociimage.Image, error) {
	type key struct{ root, config string }
	names := map[key][]string{}
	configs := map[key]ociimage.Config{}
	for ref, image := range images {
		config := ociimage.Config{Entrypoint: image.Entrypoint, Cmd: image.Cmd, Env: image.Env, WorkingDir: image.WorkingDir, User: image.User}
		data, err := json.Marshal(config)
		if err != nil {
			return nil, err
		}
		k := key{image.Root, string(data)}
		names[k] = append(names[k], ref)
		configs[k] = config
	}
	keys := make([]key, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.root, b.root), cmp.Compare(a.config, b.config)) })
	var out []ociimage.Image
	for _, k := range keys {
		image, err := build(names[k], k.root, configs[k])
		if err != nil {
			return nil, fmt.Errorf("the image of %s: %w", k.root, err)
		}
		out = append(out, image)
	}
	return out, nil
}

// waitForRealNode waits until the node's cluster DNS serves.
func (s *Stack) waitForRealNode(ctx context.Context, client kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return s.Node.WaitForDNS(ctx, client)
}
