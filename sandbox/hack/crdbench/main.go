//go:build e2e

// Command crdbench measures what the CRDs cost a user of kubectl: it starts the stack's control
// plane (the real kube-apiserver on an embedded etcd, sandbox/internal/stack) with the CRDs of a
// directory applied, then runs
// `kubectl create -f` of one file holding N copies of a SparkApplication, in a fresh namespace
// per run, and reports kubectl's wall time and CPU time (user + system).
//
// kubectl's default validation (--validate=strict) decodes the server's OpenAPI v3 document of
// sparkoperator.k8s.io/v1beta2, which holds both CRDs' schemas, once per object, only to learn
// whether the server checks fields itself (cli-runtime's queryParamVerifierV3.HasSupport). That
// is where the CRDs' size costs kubectl; --validate=false, which skips it, is measured beside it.
// Compare two sets of CRDs by running this once for each directory:
//
//	cd sandbox && go run -tags e2e ./hack/crdbench -kube-bin-dir "$(../hack/kube/build.sh)" -crds ../crds
//	git archive HEAD~1 crds | tar -x -C /tmp/old && go run -tags e2e ./hack/crdbench -kube-bin-dir … -crds /tmp/old/crds
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

func main() {
	crdDir := flag.String("crds", "crds", "directory of the CRDs to apply")
	kubeBinDir := flag.String("kube-bin-dir", os.Getenv("KUBE_BIN_DIR"), "the directory of kube-apiserver and friends (make kube prints it)")
	example := flag.String("f", "examples/spark-pi.yaml", "the SparkApplication to copy")
	n := flag.Int("n", 300, "SparkApplications per kubectl create")
	runs := flag.Int("runs", 3, "runs per validation mode; the median is reported")
	flag.Parse()
	if err := run(*kubeBinDir, *crdDir, *example, *n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "crdbench:", err)
		os.Exit(1)
	}
}

// measurement is one kubectl run.
type measurement struct {
	wall, cpu time.Duration
}

func run(kubeBinDir, crdDir, example string, n, runs int) error {
	if n < 1 || runs < 1 {
		return errors.New("-n and -runs must be at least 1")
	}
	if kubeBinDir == "" {
		return errors.New("no -kube-bin-dir (or KUBE_BIN_DIR): build the control plane with make kube, which prints it")
	}
	crdYAML, crdJSON, err := crdSizes(crdDir)
	if err != nil {
		return err
	}
	apps, err := manyApplications(example, n)
	if err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "crdbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	appsFile := filepath.Join(dir, "apps.yaml")
	if err := os.WriteFile(appsFile, apps, 0o600); err != nil {
		return err
	}
	ctx := context.Background()
	// The kubernetes Service's endpoint; nothing here reaches it.
	advertised := netip.MustParseAddr("192.0.2.1")
	cp, err := stack.StartControlPlane(ctx, stack.ControlPlaneOptions{Dir: dir, KubeBinDir: kubeBinDir, NodeIP: advertised, Now: time.Now()})
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer cp.Stop()
	if err := cp.ApplyCRDs(ctx, crdDir); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return err
	}
	openAPI, err := publishedOpenAPI(ctx, client)
	if err != nil {
		return err
	}
	fmt.Printf("CRDs in %s: %d bytes of YAML, %d bytes of JSON; OpenAPI v3 of sparkoperator.k8s.io/v1beta2: %d bytes\n",
		crdDir, crdYAML, crdJSON, len(openAPI))
	fmt.Printf("kubectl create -f of %d SparkApplications (%s), median of %d runs:\n", n, example, runs)
	for _, validate := range []string{"strict", "false"} {
		var all []measurement
		for range runs {
			ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			m, err := kubectlCreate(ctx, cp.Kubeconfig, ns.Name, appsFile, validate, n)
			if err != nil {
				return err
			}
			all = append(all, m)
		}
		m := median(all)
		fmt.Printf("  --validate=%-6s wall %6.2fs  kubectl CPU %6.2fs  (%.1f ms CPU per application)\n",
			validate, m.wall.Seconds(), m.cpu.Seconds(), float64(m.cpu.Milliseconds())/float64(n))
	}
	return nil
}

// publishedOpenAPI waits until the API server publishes the CRDs in its OpenAPI v3 document of
// sparkoperator.k8s.io/v1beta2, which it does a moment after they are established, and returns
// that document: a kubectl that found no schema would measure something else.
func publishedOpenAPI(ctx context.Context, client kubernetes.Interface) ([]byte, error) {
	const path = "/openapi/v3/apis/sparkoperator.k8s.io/v1beta2"
	var doc []byte
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		body, err := client.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return false, nil
		}
		doc = body
		return bytes.Contains(body, []byte(`"kind":"SparkApplication"`)) && bytes.Contains(body, []byte(`"kind":"ScheduledSparkApplication"`)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %s to hold both kinds: %w", path, err)
	}
	return doc, nil
}

// crdSizes returns the bytes of the CRD files in dir, as written and as compact JSON (what the
// API server stores).
func crdSizes(dir string) (yamlBytes, jsonBytes int, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return 0, 0, err
	}
	if len(files) == 0 {
		return 0, 0, fmt.Errorf("no CRDs in %s", dir)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return 0, 0, err
		}
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", file, err)
		}
		yamlBytes += len(data)
		jsonBytes += len(j)
	}
	return yamlBytes, jsonBytes, nil
}

// manyApplications returns n copies of the SparkApplication in file as one YAML stream, named
// <name>-0 to <name>-(n-1).
func manyApplications(file string, n int) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var app map[string]any
	if err := yaml.Unmarshal(data, &app); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	metadata, ok := app["metadata"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: no metadata", file)
	}
	name, _ := metadata["name"].(string)
	var out bytes.Buffer
	for i := range n {
		metadata["name"] = fmt.Sprintf("%s-%d", name, i)
		doc, err := yaml.Marshal(app)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return out.Bytes(), nil
}

func kubectlCreate(ctx context.Context, kubeconfig, namespace, file, validate string, want int) (measurement, error) {
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "--namespace", namespace,
		"create", "--validate="+validate, "-o", "name", "-f", file)
	// The same cache directory as ApplyCRDs's kubectl, so that every run finds discovery and the
	// OpenAPI document cached, as a user's kubectl would.
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(filepath.Dir(kubeconfig), "kubectl-cache"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		return measurement{}, fmt.Errorf("kubectl create --validate=%s: %w: %s", validate, err, strings.TrimSpace(stderr.String()))
	}
	if created := bytes.Count(out, []byte("\n")); created != want {
		return measurement{}, fmt.Errorf("kubectl create --validate=%s created %d objects, not %d", validate, created, want)
	}
	return measurement{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

// median returns the run with the median CPU time.
func median(ms []measurement) measurement {
	sorted := slices.SortedFunc(slices.Values(ms), func(a, b measurement) int { return int(a.cpu - b.cpu) })
	return sorted[len(sorted)/2]
}
