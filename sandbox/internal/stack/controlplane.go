package stack

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	// serviceCIDR is the Services' cluster IP range, outside the 10.64-10.223 range the process
	// kubelet takes pod networks from; the API server's own Service takes its first address.
	serviceCIDR = "10.0.0.0/16"
	// issuer names the service-account tokens' issuer, as kubeadm configures it.
	issuer = "https://kubernetes.default.svc.cluster.local"
	// certValidity outlives any sandbox; the certificates are made anew at every start.
	certValidity = 365 * 24 * time.Hour
)

// controlPlane is kube-apiserver, kube-controller-manager and kube-scheduler, each a process of
// its own as on a control-plane node, with their certificates and kubeconfigs.
type controlPlane struct {
	pki        *pki
	now        time.Time
	address    string // host:port the API server serves at
	kubeconfig string // cluster-admin (system:masters)
	admin      *restclient.Config

	processes []*process
}

type controlPlaneOptions struct {
	dir     string // state: pki/, kubeconfigs, logs/
	binDir  string // kube-apiserver, kube-controller-manager, kube-scheduler
	etcdURL string
	address string     // host:port; the host must be a loopback address
	nodeIP  netip.Addr // advertised as the API server's address, the address pods reach it at
	now     time.Time
}

// startControlPlane starts the three components and returns once the API server is ready; the
// controllers and the scheduler are started but not awaited (the caller waits for what it needs).
func startControlPlane(ctx context.Context, o controlPlaneOptions) (_ *controlPlane, err error) {
	logDir := filepath.Join(o.dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	p, err := newPKI(filepath.Join(o.dir, "pki"), o.now, certValidity)
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{pki: p, address: o.address, now: o.now}
	defer func() {
		if err != nil {
			cp.stop()
		}
	}()
	host, port, err := net.SplitHostPort(o.address)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", o.address, err)
	}
	serviceIP := net.IPv4(10, 0, 0, 1)
	serving, err := p.issue(certRequest{
		name: "apiserver", commonName: "kube-apiserver", server: true,
		dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		ips:      []net.IP{net.ParseIP(host), serviceIP, o.nodeIP.AsSlice()},
	}, o.now, certValidity)
	if err != nil {
		return nil, err
	}
	kubeletClient, err := p.issue(certRequest{name: "apiserver-kubelet-client", commonName: "kube-apiserver-kubelet-client", organizations: []string{"system:masters"}, client: true}, o.now, certValidity)
	if err != nil {
		return nil, err
	}
	saKey, saPub, err := p.serviceAccountKey()
	if err != nil {
		return nil, err
	}
	caKeyFile := filepath.Join(p.dir, "ca.key")
	if err := writeSignerKey(p, caKeyFile); err != nil {
		return nil, err
	}
	server := "https://" + o.address
	clients := map[string]certRequest{
		"admin":                   {commonName: "kubernetes-admin", organizations: []string{"system:masters"}},
		"kube-controller-manager": {commonName: "system:kube-controller-manager"},
		"kube-scheduler":          {commonName: "system:kube-scheduler"},
	}
	kubeconfigs := map[string]string{}
	for name, req := range clients {
		req.name, req.client = name, true
		cert, err := p.issue(req, o.now, certValidity)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(o.dir, name+".kubeconfig")
		if err := writeKubeconfig(path, server, p.caPEM, cert); err != nil {
			return nil, err
		}
		kubeconfigs[name] = path
	}
	cp.kubeconfig = kubeconfigs["admin"]
	if cp.admin, err = clientcmd.BuildConfigFromFlags("", cp.kubeconfig); err != nil {
		return nil, err
	}

	apiserver, err := startProcess("kube-apiserver", filepath.Join(o.binDir, "kube-apiserver"), []string{
		"--etcd-servers=" + o.etcdURL,
		"--bind-address=" + host,
		"--secure-port=" + port,
		"--advertise-address=" + o.nodeIP.String(),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=Node,RBAC",
		// On top of the default plugins (ServiceAccount, LimitRanger, ResourceQuota, PodSecurity,
		// the admission webhooks, …), as kubeadm enables it.
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--client-ca-file=" + p.caFile(),
		"--tls-cert-file=" + serving.CertFile,
		"--tls-private-key-file=" + serving.KeyFile,
		"--kubelet-client-certificate=" + kubeletClient.CertFile,
		"--kubelet-client-key=" + kubeletClient.KeyFile,
		"--kubelet-certificate-authority=" + p.caFile(),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=" + issuer,
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		// Admission webhooks (and aggregated APIs) are called at their Service's endpoints, not at
		// its cluster IP: no kube-proxy runs on this machine to route cluster IPs.
		"--enable-aggregator-routing=true",
		"--profiling=false",
	}, logDir)
	if err != nil {
		return nil, err
	}
	cp.processes = append(cp.processes, apiserver)
	client, err := kubernetes.NewForConfig(cp.admin)
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := apiserver.waitFor(startCtx, "the API server's /readyz", func(ctx context.Context) error {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}); err != nil {
		return nil, err
	}

	for _, c := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{
			"--kubeconfig=" + kubeconfigs["kube-controller-manager"],
			"--secure-port=0",
			"--leader-elect=false",
			// Each controller acts as a service account of its own, bound to its bootstrap role.
			"--use-service-account-credentials=true",
			"--service-account-private-key-file=" + saKey,
			"--root-ca-file=" + p.caFile(),
			"--cluster-signing-cert-file=" + p.caFile(),
			"--cluster-signing-key-file=" + caKeyFile,
			"--cluster-name=sparkhooks-local",
			"--controllers=*",
			// The node lifecycle controller lifts a new node's not-ready taint at its next pass:
			// every second rather than five, for one node.
			"--node-monitor-period=1s",
			"--profiling=false",
		}},
		{"kube-scheduler", []string{
			"--kubeconfig=" + kubeconfigs["kube-scheduler"],
			"--secure-port=0",
			"--leader-elect=false",
			"--profiling=false",
		}},
	} {
		proc, err := startProcess(c.name, filepath.Join(o.binDir, c.name), c.args, logDir)
		if err != nil {
			return nil, err
		}
		cp.processes = append(cp.processes, proc)
	}
	return cp, nil
}

// exited reports the first component that is no longer running, if any.
func (cp *controlPlane) exited() *process {
	for _, p := range cp.processes {
		select {
		case <-p.exited:
			return p
		default:
		}
	}
	return nil
}

// stop stops the components, the API server last.
func (cp *controlPlane) stop() {
	for i := len(cp.processes) - 1; i >= 0; i-- {
		cp.processes[i].stop(10 * time.Second)
	}
}

func writeSignerKey(p *pki, path string) error {
	data, err := marshalKey(p.caKey)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// writeKubeconfig writes a kubeconfig for server with the client certificate cert.
func writeKubeconfig(path, server string, caPEM []byte, cert certificate) error {
	config := clientcmdapi.NewConfig()
	config.Clusters["sparkhooks-local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	config.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert.CertPEM, ClientKeyData: cert.KeyPEM}
	config.Contexts["sparkhooks-local"] = &clientcmdapi.Context{Cluster: "sparkhooks-local", AuthInfo: "user", Namespace: "default"}
	config.CurrentContext = "sparkhooks-local"
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// freePort returns a port nothing listens on at host, for a component that must be told its port.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
