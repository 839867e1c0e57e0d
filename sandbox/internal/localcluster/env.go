package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Env is the whole in-process cluster: etcd, the API server with the CRDs applied, and the
// garbage collector. Controllers and kubelets are started per test, per namespace.
type Env struct {
	Dir  string
	API  *APIServer
	etcd *Etcd
	stop context.CancelFunc
	done chan struct{}
}

// EnvOptions configure StartEnv.
type EnvOptions struct {
	// Dir holds etcd's data, certificates and the kubeconfig.
	Dir string
	// CRDDir is applied with kubectl once the API server is up.
	CRDDir string
	// GCResources are watched by the garbage collector, besides the built-in kinds.
	GCResources []schema.GroupVersionResource
	// Address is where the API server listens; empty is a free loopback port.
	Address string
	// ServingIPs are addresses besides loopback the API server's certificate is valid for (the
	// address pods reach it at).
	ServingIPs []net.IP
	// Logf receives background errors (garbage collector).
	Logf func(format string, args ...any)
}

// StartEnv starts the cluster. On error everything started so far is stopped again.
func StartEnv(ctx context.Context, opts EnvOptions) (env *Env, err error) {
	etcd, err := StartEtcd(opts.Dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			etcd.Stop()
		}
	}()
	api, err := StartAPIServer(ctx, opts.Dir, etcd.ClientURL, opts.Address, opts.ServingIPs...)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			api.Stop()
		}
	}()
	if opts.CRDDir != "" {
		if err := applyCRDs(ctx, api, opts.CRDDir); err != nil {
			return nil, err
		}
	}
	gcResources := []schema.GroupVersionResource{}
	for _, kind := range builtinKinds() {
		if kind.namespaced && kind.gvr.Resource != "events" {
			gcResources = append(gcResources, kind.gvr)
		}
	}
	gc, err := NewGarbageCollector(api.ClientConfig(), append(gcResources, opts.GCResources...))
	if err != nil {
		return nil, err
	}
	gc.Errorf = opts.Logf
	client, err := kubernetes.NewForConfig(api.ClientConfig())
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var controllers sync.WaitGroup
	controllers.Add(2)
	go func() {
		defer controllers.Done()
		if err := gc.Run(runCtx); err != nil && opts.Logf != nil {
			opts.Logf("garbage collector stopped: %v", err)
		}
	}()
	go func() {
		defer controllers.Done()
		if err := runDefaultServiceAccounts(runCtx, client, opts.Logf); err != nil && opts.Logf != nil {
			opts.Logf("service-account controller stopped: %v", err)
		}
	}()
	go func() {
		controllers.Wait()
		close(done)
	}()
	return &Env{Dir: opts.Dir, API: api, etcd: etcd, stop: cancel, done: done}, nil
}

// applyCRDs applies the CRDs in dir with kubectl, as a user would, and waits until the API server
// serves them. It reads their status itself: `kubectl wait --for=condition=Established` fails at
// once ("accessor error" on .status.conditions) when it reads a CRD the API server has not given
// any condition yet, which happened under -race.
func applyCRDs(ctx context.Context, api *APIServer, dir string) error {
	out, err := Kubectl(ctx, api.Kubeconfig, "apply", "-o", "name", "-f", dir)
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
	client, err := apiextensionsclientset.NewForConfig(api.ClientConfig())
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := waitEstablished(ctx, client, name); err != nil {
			return err
		}
	}
	return nil
}

// waitEstablished polls the CRD name until its Established condition is True.
func waitEstablished(ctx context.Context, client apiextensionsclientset.Interface, name string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established {
				last = fmt.Sprintf("Established=%s: %s", c.Status, c.Message)
				return c.Status == apiextensionsv1.ConditionTrue, nil
			}
		}
		last = "no Established condition yet"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CustomResourceDefinition %s to be established (%s): %w", name, last, err)
	}
	return nil
}

// Stop stops the garbage collector, the API server and etcd, in that order.
func (e *Env) Stop() {
	e.stop()
	<-e.done
	e.API.Stop()
	e.etcd.Stop()
}

// CreateNamespace creates a namespace with a random suffix and returns its name.
func (e *Env) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	client, err := kubernetes.NewForConfig(e.API.ClientConfig())
	if err != nil {
		return "", err
	}
	name := prefix + "-" + rand.String(5)
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return name, nil
}

// Kubectl runs the installed kubectl against kubeconfig and returns its combined output; a
// failure's error carries that output.
func Kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	// kubectl caches discovery under $HOME; a fresh cluster per run must not see a stale cache.
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(filepath.Dir(kubeconfig), "kubectl-cache"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return string(out), fmt.Errorf("kubectl %s: exit %d: %s", strings.Join(args, " "), exitErr.ExitCode(), strings.TrimSpace(string(out)))
		}
		return string(out), fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}
