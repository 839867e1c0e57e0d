package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
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

// ControlPlane is etcd, kube-apiserver, kube-controller-manager and kube-scheduler, each
// component a process of its own as on a control-plane node, with their certificates and
// kubeconfigs. The Stack runs its cluster on one; a tool that needs only the API (crdbench)
// starts one alone.
type ControlPlane struct {
	// Kubeconfig is a cluster-admin (system:masters) kubeconfig file; Admin the same as a client
	// configuration.
	Kubeconfig string
	Admin      *restclient.Config
	// Address is the host:port the API server serves at.
	Address string

	pki        *pki
	now        time.Time
	etcd       *etcd
	components []*component
}

// ControlPlaneOptions say where and how to run a control plane.
type ControlPlaneOptions struct {
	// Dir holds its state: etcd, pki/, kubeconfigs, logs/.
	Dir string
	// KubeBinDir holds kube-apiserver, kube-controller-manager and kube-scheduler
	// (hack/kube/build.sh).
	KubeBinDir string
	// Address is where the API server listens, a loopback host:port; empty or port 0 picks a
	// free port.
	Address string
	// NodeIP is advertised as the API server's address: the kubernetes Service's endpoint, where
	// pods reach it. Its certificate is valid for it.
	NodeIP netip.Addr
	// Now is the time the certificates are issued at.
	Now time.Time
	// APIServerMemoryLimit, when set, is the API server's soft Go memory limit (GOMEMLIMIT, as
	// "250MiB"). Its heap peaks while it builds the OpenAPI documents at start-up; without a limit
	// the Go runtime keeps that peak for good. Empty: the Go default, no limit.
	APIServerMemoryLimit string
}

// StartControlPlane starts etcd and the three components and returns once the API server is
// ready; the controllers and the scheduler are started but not awaited (the caller waits for
// what it needs). On error everything started is stopped again.
func StartControlPlane(ctx context.Context, o ControlPlaneOptions) (_ *ControlPlane, err error) {
	address, err := concreteAddress(o.Address)
	if err != nil {
		return nil, err
	}
	// Refused here, in one line, rather than by kube-apiserver's log after etcd has started.
	l, err := net.Listen("tcp", address)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s is in use: stop what listens there or choose another address", address)
	}
	if err != nil {
		return nil, fmt.Errorf("the API server's address: %w", err)
	}
	l.Close()
	logDir := filepath.Join(o.Dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	p, err := newPKI(filepath.Join(o.Dir, "pki"), o.Now, certValidity)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{pki: p, Address: address, now: o.Now}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()
	// The service-account key (RSA: up to a few hundred milliseconds) is made while etcd starts.
	var saKey, saPub string
	var keys errgroup.Group
	keys.Go(func() (err error) {
		saKey, saPub, err = p.serviceAccountKey()
		return err
	})
	cp.etcd, err = startEtcd(filepath.Join(o.Dir, "etcd"))
	if keyErr := keys.Wait(); err == nil {
		err = keyErr
	}
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", address, err)
	}
	serviceIP := net.IPv4(10, 0, 0, 1)
	serving, err := p.issue(certRequest{
		name: "apiserver", commonName: "kube-apiserver", server: true,
		dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		ips:      []net.IP{net.ParseIP(host), serviceIP, o.NodeIP.AsSlice()},
	}, o.Now, certValidity)
	if err != nil {
		return nil, err
	}
	kubeletClient, err := p.issue(certRequest{name: "apiserver-kubelet-client", commonName: "kube-apiserver-kubelet-client", organizations: []string{"system:masters"}, client: true}, o.Now, certValidity)
	if err != nil {
		return nil, err
	}
	caKeyFile := filepath.Join(p.dir, "ca.key")
	if err := writeSignerKey(p, caKeyFile); err != nil {
		return nil, err
	}
	server := "https://" + address
	clients := map[string]certRequest{
		"admin":                   {commonName: "kubernetes-admin", organizations: []string{"system:masters"}},
		"kube-controller-manager": {commonName: "system:kube-controller-manager"},
		"kube-scheduler":          {commonName: "system:kube-scheduler"},
	}
	kubeconfigs := map[string]string{}
	for name, req := range clients {
		req.name, req.client = name, true
		cert, err := p.issue(req, o.Now, certValidity)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(o.Dir, name+".kubeconfig")
		if err := writeKubeconfig(path, server, p.caPEM, cert); err != nil {
			return nil, err
		}
		kubeconfigs[name] = path
	}
	cp.Kubeconfig = kubeconfigs["admin"]
	if cp.Admin, err = clientcmd.BuildConfigFromFlags("", cp.Kubeconfig); err != nil {
		return nil, err
	}

	var apiserverEnv []string
	if o.APIServerMemoryLimit != "" {
		apiserverEnv = append(os.Environ(), "GOMEMLIMIT="+o.APIServerMemoryLimit)
	}
	apiserver, err := startComponent("kube-apiserver", "kube-apiserver", filepath.Join(o.KubeBinDir, "kube-apiserver"), []string{
		"--etcd-servers=" + cp.etcd.clientURL,
		"--bind-address=" + host,
		"--secure-port=" + port,
		"--advertise-address=" + o.NodeIP.String(),
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
	}, apiserverEnv, logDir)
	if err != nil {
		return nil, err
	}
	cp.components = append(cp.components, apiserver)
	client, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := apiserver.current().waitFor(startCtx, "the API server's /readyz", func(ctx context.Context) error {
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
			// Building a controller's client takes three requests of the controller manager's own
			// client (the account looked up, kube-system looked up, the account created) and its
			// first use two more (a token): about 150 at start, which the default client-side
			// limit (20 a second after a burst of 30) spread over about 5 s before any controller ran:
			// meanwhile the node kept its not-ready taint and no Deployment got its Pods. The limit
			// keeps one client from crowding a shared API server; this one serves one node.
			"--kube-api-qps=100",
			"--kube-api-burst=200",
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
		component, err := startComponent(c.name, c.name, filepath.Join(o.KubeBinDir, c.name), c.args, nil, logDir)
		if err != nil {
			return nil, err
		}
		cp.components = append(cp.components, component)
	}
	if err := createControllerAccounts(startCtx, cp.Admin); err != nil {
		return nil, err
	}
	return cp, nil
}

// createControllerAccounts creates in kube-system the service account of every controller the
// RBAC bootstrap binds a role to (the subjects of the system:controller:* ClusterRoleBindings),
// while kube-controller-manager starts. It gets, and failing that creates, each controller's
// account before it builds the next controller: three round trips each, about a hundred in a row,
// while the API server is busy taking in the charts' CRDs; that held the node's not-ready taint
// for seconds. Made here at once, each is one request for it. Nine of the 44 bindings are for
// controllers this cluster does not run (cloud, feature-gated): their accounts exist unused.
func createControllerAccounts(ctx context.Context, admin *restclient.Config) error {
	cfg := restclient.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 100, 200
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	bindings, err := client.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the controllers' role bindings: %w", err)
	}
	var accounts errgroup.Group
	accounts.SetLimit(8)
	for _, b := range bindings.Items {
		if !strings.HasPrefix(b.Name, "system:controller:") {
			continue
		}
		for _, subject := range b.Subjects {
			if subject.Kind != rbacv1.ServiceAccountKind || subject.Namespace != metav1.NamespaceSystem {
				continue
			}
			accounts.Go(func() error {
				account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: subject.Name, Namespace: subject.Namespace}}
				_, err := client.CoreV1().ServiceAccounts(subject.Namespace).Create(ctx, account, metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("creating the service account of %s: %w", b.Name, err)
				}
				return nil
			})
		}
	}
	return accounts.Wait()
}

// exited reports the first component that is no longer running, if any.
func (cp *ControlPlane) exited() *process {
	for _, c := range cp.components {
		p := c.current()
		select {
		case <-p.exited:
			return p
		default:
		}
	}
	return nil
}

// Stop stops the components, the API server last, then etcd.
func (cp *ControlPlane) Stop() {
	for i := len(cp.components) - 1; i >= 0; i-- {
		cp.components[i].stop(10 * time.Second)
	}
	if cp.etcd != nil {
		cp.etcd.stop()
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

// ApplyCRDs applies the CRDs in dir with kubectl, as an administrator does, and waits until the
// API server serves them. It reads their status itself: `kubectl wait
// --for=condition=Established` fails at once ("accessor error" on .status.conditions) when it
// reads a CRD the API server has not given any condition yet.
func (cp *ControlPlane) ApplyCRDs(ctx context.Context, dir string) error {
	out, err := kubectl.Run(ctx, cp.Kubeconfig, "apply", "-o", "name", "-f", dir)
	if err != nil {
		return fmt.Errorf("applying CRDs: %w", err)
	}
	var names []string
	for line := range strings.Lines(out) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "customresourcedefinition.apiextensions.k8s.io/"); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("kubectl apply -f %s applied no CustomResourceDefinition: %s", dir, strings.TrimSpace(out))
	}
	client, err := apiextensionsclientset.NewForConfig(cp.Admin)
	if err != nil {
		return err
	}
	for _, name := range names {
		var last string
		err := pollUntil(ctx, "CustomResourceDefinition "+name+" to be established", func(ctx context.Context) error {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
				if c.Type == apiextensionsv1.Established {
					last = c.Message
				}
			}
			return fmt.Errorf("not established yet: %s", last)
		}, cp.exited)
		if err != nil {
			return err
		}
	}
	return nil
}
