package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/localcluster"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
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
	o.forcedSimulation = o.simulate
	if !o.simulate {
		if _, err := os.Stat(filepath.Join(o.images, "images.json")); err != nil {
			o.simulate = true
			o.simulationReason = fmt.Sprintf("No Spark images in %s: prepare them (make spark-images) and start again to run Spark.", o.images)
		} else if os.Geteuid() != 0 {
			return errors.New("running pods needs root (mount and network namespaces): start it as root (sudo make run), or pass --simulate to play pod phases without running them")
		}
	}
	dirs := []struct{ flag, path string }{{"--registrations", o.registrations}, {"--crds", o.crds}}
	if !o.simulate {
		dirs = []struct{ flag, path string }{{"--chart", o.chart}}
	}
	for _, dir := range dirs {
		if info, err := os.Stat(dir.path); err != nil || !info.IsDir() {
			return fmt.Errorf("%s %s is not a directory: start it from the repository root (make run) or pass %s", dir.flag, dir.path, dir.flag)
		}
	}
	if o.simulate {
		return nil
	}
	if _, err := os.Stat(filepath.Join(o.kubeBinDir, "kube-apiserver")); o.kubeBinDir == "" || err != nil {
		return fmt.Errorf("no kube-apiserver in --kube-bin-dir %q: build the control plane (make kube prints its directory) and pass it", o.kubeBinDir)
	}
	if info, err := os.Stat(o.helm); o.helm == "" || err != nil || info.IsDir() {
		return fmt.Errorf("no helm at --helm %q: build it (make helm prints its path) and pass it", o.helm)
	}
	if o.metacontroller != "" {
		if _, err := os.Stat(o.metacontroller); err != nil {
			return fmt.Errorf("--metacontroller: %w", err)
		}
		if o.metacontrollerChart == "" {
			o.metacontrollerChart = filepath.Join(filepath.Dir(o.metacontroller), "helm", "metacontroller")
		}
	}
	return nil
}

// kubeVersion is the control plane's version, the name of the directory make kube builds it in.
func (o *options) kubeVersion() string {
	return filepath.Base(o.kubeBinDir)
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
	startCtx, cancelStart := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelStart()
	var up string
	if o.simulate {
		up, err = startSimulated(startCtx, o, dir, &sb, logf)
	} else {
		up, err = startCluster(startCtx, o, dir, &sb, logf)
	}
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if o.kubeconfig != "" {
		if err := copyFile(kubeconfig, o.kubeconfig); err != nil {
			return fmt.Errorf("writing the kubeconfig: %w", err)
		}
		kubeconfig = o.kubeconfig
	}
	abs, _ := filepath.Abs(kubeconfig)
	fmt.Fprintf(stdout, `sparkhooks-local is up in %s (state and logs in %s).
%s
  export KUBECONFIG=%s
  kubectl apply -f examples/spark-pi.yaml
  kubectl get sparkapp -w

Then: kubectl logs spark-pi-driver. Ctrl-C stops everything.
`, time.Since(started).Round(100*time.Millisecond), dir, up, abs)
	if o.readyFile != "" {
		if err := os.WriteFile(o.readyFile, []byte(abs+"\n"), 0o644); err != nil {
			return fmt.Errorf("writing the ready file: %w", err)
		}
		sb.onStop(func() { os.Remove(o.readyFile) })
	}
	<-ctx.Done()
	fmt.Fprintln(stdout, "sparkhooks-local: stopping")
	return nil
}

// startCluster starts the real control plane, the process kubelet as its node, and the charts
// (sandbox/internal/stack), and returns what the banner says of them.
func startCluster(ctx context.Context, o *options, dir string, sb *sandbox, logf func(string, ...any)) (string, error) {
	images, err := prockubelet.LoadImageTable(filepath.Join(o.images, "images.json"))
	if err != nil {
		return "", err
	}
	random := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	network, err := prockubelet.NewNetwork(ctx, random)
	if err != nil {
		return "", err
	}
	sb.onStop(func() { _ = network.Close() })
	egress := ""
	if err := network.EnableEgress(ctx, "/etc/resolv.conf"); err != nil {
		egress = fmt.Sprintf("Pods have no outbound access: %v\n", err)
	}
	s, err := stack.Start(ctx, stack.Options{
		Dir: filepath.Join(dir, "cluster"), APIAddress: o.apiAddr, KubeBinDir: o.kubeBinDir, Helm: o.helm,
		Chart: o.chart, ChartSet: []string{"replicaCount=1"}, Sparkhooks: o.sparkhooks,
		Metacontroller: o.metacontroller, MetacontrollerChart: o.metacontrollerChart, MetacontrollerValues: o.metacontrollerValues,
		Images: images, Network: network, NodeName: nodeName, Logf: logf,
		// Spark's examples ask a core per driver and executor: SparkPi alone wants three, more
		// than most laptops' sandboxes have to spare. Nothing limits CPU here, so the node offers
		// more than the machine has and the scheduler places them.
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")},
	})
	if err != nil {
		return "", err
	}
	sb.onStop(s.Stop)
	if err := copyFile(s.Kubeconfig, filepath.Join(dir, "kubeconfig")); err != nil {
		return "", err
	}
	return fmt.Sprintf(`Kubernetes %s: kube-apiserver (https://%s), kube-controller-manager and kube-scheduler; logs in %s.
Node %s: the process kubelet, pods as local processes on the images in %s, on the pod network %s.
%sInstalled with Helm: %s in namespace %s (hooks and webhooks), run by %s.
`, o.kubeVersion(), s.APIAddress, s.LogDir, nodeName, o.images, network.Subnet, egress, o.chart, stack.SparkhooksNamespace, s.Controller), nil
}

// startSimulated starts the in-process stand-in cluster whose kubelet plays pod phases instead of
// running them, for machines where pods cannot run.
func startSimulated(ctx context.Context, o *options, dir string, sb *sandbox, logf func(string, ...any)) (string, error) {
	env, err := localcluster.StartEnv(ctx, localcluster.EnvOptions{
		Dir: filepath.Join(dir, "cluster"), CRDDir: o.crds, Address: o.apiAddr,
		GCResources: parents, Logf: logf,
	})
	if err != nil {
		if strings.Contains(err.Error(), "address already in use") {
			return "", fmt.Errorf("%s is in use: stop what listens there or pass another --api-addr", o.apiAddr)
		}
		return "", fmt.Errorf("starting the API server: %w", err)
	}
	sb.onStop(env.Stop)
	// As the chart does: applications that name no service account run as the spark account
	// the sandbox gives the default namespace.
	hooks, err := localcluster.StartHookServer(ctx, o.sparkhooks, filepath.Join(dir, "sparkhooks.log"), "--default-service-account", "spark")
	if err != nil {
		return "", fmt.Errorf("starting %s: %w", o.sparkhooks, err)
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
		return "", err
	}
	sim := &localcluster.SimulatedKubelet{Client: client, NodeName: nodeName, StartDelay: time.Second, RunTime: 5 * time.Second, Logf: logf}
	env.API.SetLogSource(sim.Logs)
	goRun("kubelet", sim.Run)
	mode := "SIMULATED: pods' phases are played, nothing is executed, on a stand-in API server (docs/local.md)."
	if !o.forcedSimulation {
		mode += " " + o.simulationReason
	}
	statefulSets, err := localcluster.NewStatefulSetController(cfg, logf)
	if err != nil {
		return "", err
	}
	goRun("statefulset controller", func(ctx context.Context) error { statefulSets.Run(ctx); return nil })
	names, err := startControllers(o.registrations, hooks.URL, cfg, logf, goRun)
	if err != nil {
		return "", err
	}
	if err := setUpJobNamespace(ctx, client, metav1.NamespaceDefault); err != nil {
		return "", err
	}
	if err := copyFile(env.API.Kubeconfig, filepath.Join(dir, "kubeconfig")); err != nil {
		return "", err
	}
	return fmt.Sprintf("Mode: %s\nAPI server https://%s. Controllers: %s, run by a local stand-in for Metacontroller, calling %s.\n",
		mode, env.API.Address, strings.Join(names, ", "), o.sparkhooks), nil
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
