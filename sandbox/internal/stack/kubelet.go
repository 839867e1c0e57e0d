package stack

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/simkubelet"
)

// nodeCredentials are what a kubelet authenticates with and serves its API with: a client as
// system:node:<name> (so the Node authorizer and NodeRestriction judge it as a kubelet) and a
// serving certificate for the node's address, which kube-apiserver checks.
type nodeCredentials struct {
	client  kubernetes.Interface
	serving tls.Certificate
}

func (s *Stack) nodeCredentials(o Options) (nodeCredentials, error) {
	p, now := s.control.pki, s.control.now
	identity, err := p.issue(certRequest{
		name: "kubelet-client", commonName: "system:node:" + o.NodeName, organizations: []string{"system:nodes"}, client: true,
	}, now, certValidity)
	if err != nil {
		return nodeCredentials{}, err
	}
	serving, err := p.issue(certRequest{
		name: "kubelet", commonName: o.NodeName, server: true,
		dnsNames: []string{o.NodeName}, ips: []net.IP{s.NodeIP.AsSlice()},
	}, now, certValidity)
	if err != nil {
		return nodeCredentials{}, err
	}
	servingPair, err := serving.tlsCertificate()
	if err != nil {
		return nodeCredentials{}, err
	}
	if err := writeKubeconfig(filepath.Join(o.Dir, "kubelet.kubeconfig"), "https://"+s.APIAddress, p.caPEM, identity); err != nil {
		return nodeCredentials{}, err
	}
	cfg := restclient.CopyConfig(s.Admin)
	cfg.TLSClientConfig = restclient.TLSClientConfig{CAData: p.caPEM, CertData: identity.CertPEM, KeyData: identity.KeyPEM}
	// A kubelet's client limits (kubeAPIQPS, kubeAPIBurst), not client-go's 5 a second: every
	// change of a pod's status is two requests (read, write), and with a pod's Events, volumes
	// and token a starting pod spent its first burst and then waited 200 ms a request.
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nodeCredentials{}, err
	}
	return nodeCredentials{client: client, serving: servingPair}, nil
}

// startProcessKubelet starts the process kubelet as the node NodeName, serving the kubelet API
// (logs, port forwarding) on the pod network's gateway, running images.
func (s *Stack) startProcessKubelet(ctx context.Context, o Options, images *prockubelet.ImageTable) error {
	creds, err := s.nodeCredentials(o)
	if err != nil {
		return err
	}
	kubelet, err := prockubelet.New(prockubelet.Config{
		Client: creds.client, NodeName: o.NodeName, NodeIP: s.NodeIP, Images: images, ImageSource: o.ImageSource, PullReport: o.PullReport, Network: o.Network,
		StateDir: filepath.Join(o.Dir, "kubelet"), APIServer: s.APIAddress,
		ServingCert: creds.serving, ClientCAs: s.control.pki.certPool(), Capacity: o.Capacity, RegisterWithTaints: o.NodeTaints, Logf: o.Logf,
	})
	if err != nil {
		return fmt.Errorf("the kubelet: %w", err)
	}
	s.Kubelet = kubelet
	s.running.Go(func() {
		if err := kubelet.Run(ctx); err != nil {
			s.fail(fmt.Errorf("the kubelet stopped: %w", err))
		}
	})
	return nil
}

// startSimulatedKubelet starts the simulated kubelet as the node NodeName, serving the kubelet
// API (logs) on the node's address.
func (s *Stack) startSimulatedKubelet(ctx context.Context, o Options) error {
	creds, err := s.nodeCredentials(o)
	if err != nil {
		return err
	}
	kubelet, err := simkubelet.New(simkubelet.Config{
		Client: creds.client, NodeName: o.NodeName, NodeIP: s.NodeIP, ServingCert: creds.serving, ClientCAs: s.control.pki.certPool(),
		Capacity: o.Capacity, Taints: o.NodeTaints, StateDir: filepath.Join(o.Dir, "kubelet"),
		StartDelay: o.Simulated.StartDelay, RunTime: o.Simulated.RunTime, Logf: o.Logf,
	})
	if err != nil {
		return err
	}
	s.running.Go(func() {
		if err := kubelet.Run(ctx); err != nil {
			s.fail(fmt.Errorf("the simulated kubelet stopped: %w", err))
		}
	})
	return nil
}

// HostIP returns an IPv4 address of this machine that is neither loopback nor link-local, from
// the first interface that is up and has one: the address a simulated node's endpoints can be
// published at.
func HostIP() (netip.Addr, error) {
	interfaces, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("listing this machine's network interfaces: %w", err)
	}
	for _, iface := range interfaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			prefix, err := netip.ParsePrefix(a.String())
			if err != nil {
				continue
			}
			if ip := prefix.Addr(); ip.Is4() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
				return ip, nil
			}
		}
	}
	return netip.Addr{}, errors.New("this machine has no IPv4 address but loopback, and EndpointSlices refuse loopback: connect it to a network and start again")
}
