package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/internal/localcluster"
	"github.com/sparkhooks/sparkhooks/internal/prockubelet"
)

// nodeName is the sandbox's one node.
const nodeName = "sparkhooks-local"

// parents are the kinds the registrations manage, for the garbage collector.
var parents = []schema.GroupVersionResource{
	{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"},
	{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "scheduledsparkapplications"},
	{Group: "sparkoperator.k8s.io", Version: "v1alpha1", Resource: "sparkconnects"},
	{Group: "spark.apache.org", Version: "v1", Resource: "sparkclusters"},
}

// check turns what would fail half-way into one line up front: each says what to do.
func (o *options) check() error {
	if _, err := exec.LookPath("kubectl"); err != nil {
		return errors.New("kubectl is not on PATH: install it (Debian: apt-get install kubectl) and start again")
	}
	if o.sparkhooks == "" {
		self, err := os.Executable()
		if err == nil {
			o.sparkhooks = filepath.Join(filepath.Dir(self), "sparkhooks")
		}
		if _, err := os.Stat(o.sparkhooks); err != nil {
			if path, err := exec.LookPath("sparkhooks"); err == nil {
				o.sparkhooks = path
			}
		}
	}
	if info, err := os.Stat(o.sparkhooks); err != nil || info.IsDir() {
		return fmt.Errorf("no sparkhooks binary at %q: build it (make build) or pass --sparkhooks", o.sparkhooks)
	}
	for _, dir := range []struct{ flag, path string }{{"--registrations", o.registrations}, {"--crds", o.crds}} {
		if info, err := os.Stat(dir.path); err != nil || !info.IsDir() {
			return fmt.Errorf("%s %s is not a directory: start it from the repository root (make run) or pass %s", dir.flag, dir.path, dir.flag)
		}
	}
	o.forcedSimulation = o.simulate
	if !o.simulate {
		if _, err := os.Stat(filepath.Join(o.images, "images.json")); err != nil {
			o.simulate = true
		} else if os.Geteuid() != 0 {
			return errors.New("running pods needs root (mount and network namespaces): start it as root (sudo make run), or pass --simulate to play pod phases without running them")
		}
	}
	return nil
}

// sandbox is what runSandbox started, stopped in reverse order.
type sandbox struct {
	stops []func()
}

func (s *sandbox) onStop(f func()) { s.stops = append(s.stops, f) }

func (s *sandbox) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

func runSandbox(ctx context.Context, o *options, stdout, stderr io.Writer) (err error) {
	started := time.Now()
	var sb sandbox
	defer sb.stop()

	dir, err := dataDir(o)
	if err != nil {
		return err
	}
	if !o.keepData {
		sb.onStop(func() { os.RemoveAll(dir) })
	}
	unlock, err := lockDataDir(dir)
	if err != nil {
		return err
	}
	sb.onStop(unlock)
	logFile, err := os.OpenFile(filepath.Join(dir, "sandbox.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	sb.onStop(func() { logFile.Close() })
	localcluster.RedirectLogs(logFile)
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(logFile, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}

	startCtx, cancelStart := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelStart()
	var network *prockubelet.Network
	var servingIPs []net.IP
	egress := ""
	if !o.simulate {
		random := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
		if network, err = prockubelet.NewNetwork(startCtx, random); err != nil {
			return err
		}
		sb.onStop(func() { _ = network.Close() })
		servingIPs = []net.IP{network.Gateway.AsSlice()}
		if err := network.EnableEgress(startCtx, "/etc/resolv.conf"); err != nil {
			egress = fmt.Sprintf("  (pods have no outbound access: %v)\n", err)
		}
	}
	env, err := localcluster.StartEnv(startCtx, localcluster.EnvOptions{
		Dir: filepath.Join(dir, "cluster"), CRDDir: o.crds, Address: o.apiAddr, ServingIPs: servingIPs,
		GCResources: parents, Logf: logf,
	})
	if err != nil {
		if strings.Contains(err.Error(), "address already in use") {
			return fmt.Errorf("%s is in use: stop what listens there or pass another --api-addr", o.apiAddr)
		}
		return fmt.Errorf("starting the API server: %w", err)
	}
	sb.onStop(env.Stop)
	// As the chart does: applications that name no service account run as the spark account
	// the sandbox gives the default namespace.
	hooks, err := localcluster.StartHookServer(startCtx, o.sparkhooks, filepath.Join(dir, "sparkhooks.log"), "--default-service-account", "spark")
	if err != nil {
		return fmt.Errorf("starting %s: %w", o.sparkhooks, err)
	}
	sb.onStop(func() { _ = hooks.Stop() })

	runCtx, stopRunning := context.WithCancel(context.Background())
	var running sync.WaitGroup
	sb.onStop(func() {
		stopRunning()
		running.Wait()
	})
	goRun := func(name string, f func(context.Context) error) {
		running.Add(1)
		go func() {
			defer running.Done()
			if err := f(runCtx); err != nil {
				logf("%s: %v", name, err)
			}
		}()
	}
	cfg := env.API.ClientConfig()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mode := ""
	if o.simulate {
		sim := &localcluster.SimulatedKubelet{Client: client, NodeName: nodeName, StartDelay: time.Second, RunTime: 5 * time.Second, Logf: logf}
		env.API.SetLogSource(sim.Logs)
		goRun("kubelet", sim.Run)
		mode = "SIMULATED: pods' phases are played, nothing is executed."
		if !o.forcedSimulation {
			mode += fmt.Sprintf(" No Spark images in %s: prepare them (make spark-images) and start again to run Spark.", o.images)
		}
	} else {
		images, err := prockubelet.LoadImageTable(filepath.Join(o.images, "images.json"))
		if err != nil {
			return err
		}
		kubelet, err := prockubelet.New(prockubelet.Config{
			Client: client, NodeName: nodeName, Images: images, Network: network, StateDir: filepath.Join(dir, "kubelet"),
			APIServer: env.API.Address, CACert: env.API.ServingCA, Tokens: env.API, Logf: logf,
		})
		if err != nil {
			return err
		}
		env.API.SetLogSource(kubelet.Logs)
		// Pods are on a bridge this machine routes to: port forwarding dials their IPs.
		env.API.SetPortDialer(localcluster.PodIPDialer(client))
		goRun("kubelet", kubelet.Run)
		mode = fmt.Sprintf("EXECUTED: pods run as local processes on the images in %s, on the pod network %s.", o.images, network.Subnet)
	}
	statefulSets, err := localcluster.NewStatefulSetController(cfg, logf)
	if err != nil {
		return err
	}
	goRun("statefulset controller", func(ctx context.Context) error { statefulSets.Run(ctx); return nil })
	names, err := startControllers(o.registrations, hooks.URL, cfg, logf, goRun)
	if err != nil {
		return err
	}
	if err := setUpJobNamespace(startCtx, client, metav1.NamespaceDefault); err != nil {
		return err
	}
	kubeconfig := env.API.Kubeconfig
	if o.kubeconfig != "" {
		if err := copyFile(env.API.Kubeconfig, o.kubeconfig); err != nil {
			return fmt.Errorf("writing the kubeconfig: %w", err)
		}
		kubeconfig = o.kubeconfig
	}
	abs, _ := filepath.Abs(kubeconfig)
	fmt.Fprintf(stdout, `sparkhooks-local is up in %s (API server https://%s; state and logs in %s).
Mode: %s
%sControllers: %s, run by a local stand-in for Metacontroller (docs/local.md), calling %s.

  export KUBECONFIG=%s
  kubectl apply -f examples/spark-pi.yaml
  kubectl get sparkapp -w

Then: kubectl logs spark-pi-driver. Ctrl-C stops everything.
`, time.Since(started).Round(100*time.Millisecond), env.API.Address, dir, mode, egress, strings.Join(names, ", "), o.sparkhooks, abs)
	<-ctx.Done()
	fmt.Fprintln(stdout, "sparkhooks-local: stopping")
	return nil
}

func dataDir(o *options) (string, error) {
	if !o.keepData {
		return os.MkdirTemp("", "sparkhooks-local-")
	}
	dir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("--data-dir: %w", err)
	}
	return dir, nil
}

// lockDataDir keeps two sandboxes off one data dir: etcd would refuse the second half-way.
func lockDataDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another sparkhooks-local: stop it or pass another --data-dir", dir)
	}
	return func() { f.Close() }, nil
}

// startControllers runs one contract controller per CompositeController registration in dir.
func startControllers(dir, hookURL string, cfg *restclient.Config, logf func(string, ...any), goRun func(string, func(context.Context) error)) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*-controller.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var names []string
	for _, file := range files {
		cc, err := localcluster.LoadCompositeController(file, hookURL)
		if err != nil {
			return nil, err
		}
		ctl, err := localcluster.NewContractController(cfg, cc, localcluster.ControllerOptions{Logf: logf})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		goRun(cc.Metadata.Name, ctl.Run)
		names = append(names, cc.Metadata.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no CompositeController registration (*-controller.yaml) in %s", dir)
	}
	return names, nil
}

// setUpJobNamespace makes what the chart makes in a job namespace: the spark service account
// and its Role (stored; this API server does not enforce RBAC).
func setUpJobNamespace(ctx context.Context, client kubernetes.Interface, ns string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "spark", Namespace: ns}}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "sparkhooks-spark-driver", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete", "deletecollection"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "services", "persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "create", "delete", "deletecollection"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "sparkhooks-spark-driver", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	for _, create := range []func() error{
		func() error {
			_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
			return err
		},
	} {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("setting up namespace %s for Spark: %w", ns, err)
		}
	}
	return nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}
