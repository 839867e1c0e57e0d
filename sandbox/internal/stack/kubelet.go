package stack

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// startKubelet starts the process kubelet as the node NodeName: it authenticates as
// system:node:<name> (so the Node authorizer and NodeRestriction judge it as a kubelet) and serves
// the kubelet API (logs, port forwarding) to the API server on the node's address.
func (s *Stack) startKubelet(ctx context.Context, o Options, images *prockubelet.ImageTable) (*prockubelet.Kubelet, error) {
	p := s.control.pki
	now := s.control.now
	identity, err := p.issue(certRequest{
		name: "kubelet-client", commonName: "system:node:" + o.NodeName, organizations: []string{"system:nodes"}, client: true,
	}, now, certValidity)
	if err != nil {
		return nil, err
	}
	serving, err := p.issue(certRequest{
		name: "kubelet", commonName: o.NodeName, server: true,
		dnsNames: []string{o.NodeName}, ips: []net.IP{o.Network.Gateway.AsSlice()},
	}, now, certValidity)
	if err != nil {
		return nil, err
	}
	servingPair, err := serving.tlsCertificate()
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(o.Dir, "kubelet.kubeconfig")
	if err := writeKubeconfig(kubeconfig, "https://"+s.APIAddress, p.caPEM, identity); err != nil {
		return nil, err
	}
	cfg := restclient.CopyConfig(s.Admin)
	cfg.TLSClientConfig = restclient.TLSClientConfig{CAData: p.caPEM, CertData: identity.CertPEM, KeyData: identity.KeyPEM}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kubelet, err := prockubelet.New(prockubelet.Config{
		Client: client, NodeName: o.NodeName, NodeIP: o.Network.Gateway, Images: images, Network: o.Network,
		StateDir: filepath.Join(o.Dir, "kubelet"), APIServer: s.APIAddress,
		ServingCert: servingPair, ClientCAs: p.certPool(), Capacity: o.Capacity, RegisterWithTaints: o.NodeTaints, Logf: o.Logf,
	})
	if err != nil {
		return nil, fmt.Errorf("the kubelet: %w", err)
	}
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		if err := kubelet.Run(ctx); err != nil {
			o.Logf("kubelet: %v", err)
		}
	}()
	return kubelet, nil
}
