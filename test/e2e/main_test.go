//go:build e2e

// Package e2e runs sparkhooks end to end: the real hook server binary, driven by a
// CompositeController contract controller (a test helper standing in for Metacontroller), against
// a real API server with the project's CRDs, with kubectl as the user. See internal/localcluster and test/e2e/harness.
//
// Run with `make e2e` (go test -tags e2e ./test/e2e/...).
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sparkhooks/sparkhooks/internal/localcluster"
)

// repoRoot is the module root, relative to this package's directory (where go test runs).
const repoRoot = "../.."

var (
	sparkApplications          = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}
	scheduledSparkApplications = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "scheduledsparkapplications"}
)

// suite is what TestMain starts once for all tests: the cluster and the sparkhooks server.
// Tests only read it; each test works in a namespace of its own.
type suite struct {
	env    *localcluster.Env
	hooks  *localcluster.HookServer
	binary string // the sparkhooks binary, for tests that start one of their own
	logDir string
}

var shared suite

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sparkhooks-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// SPARKHOOKS_E2E_KEEP=1 keeps the work directory (logs, kubeconfig) after the run.
	keep := os.Getenv("SPARKHOOKS_E2E_KEEP") == "1"
	defer func() {
		if !keep {
			os.RemoveAll(dir)
		}
	}()
	shared.logDir = dir
	if _, err := exec.LookPath("kubectl"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: kubectl is needed on PATH (Debian/Ubuntu: apt-get install kubectl):", err)
		return 1
	}
	logFile, err := os.Create(filepath.Join(dir, "apiserver.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer logFile.Close()
	localcluster.RedirectLogs(logFile)

	// SPARKHOOKS_E2E_BINARY runs a prebuilt binary (a release, say) instead of building this tree.
	binary := os.Getenv("SPARKHOOKS_E2E_BINARY")
	if binary == "" {
		binary = filepath.Join(dir, "sparkhooks")
		// Under go test -race the server is built with the race detector too: the hooks
		// answering concurrent calls are what the suite should check for races most. The
		// build is bounded by go test's -timeout only, as a cold race build takes minutes.
		args := []string{"build", "-o", binary}
		if raceEnabled {
			args = append(args, "-race")
		}
		if out, err := exec.Command("go", append(args, repoRoot+"/cmd/sparkhooks")...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building sparkhooks: %v\n%s", err, out)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := localcluster.StartEnv(ctx, localcluster.EnvOptions{
		Dir:         dir,
		CRDDir:      filepath.Join(repoRoot, "crds"),
		GCResources: []schema.GroupVersionResource{sparkApplications, scheduledSparkApplications},
		Logf:        func(format string, args ...any) { fmt.Fprintf(logFile, format+"\n", args...) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the cluster:", err)
		return 1
	}
	defer env.Stop()
	hooks, err := localcluster.StartHookServer(ctx, binary, filepath.Join(dir, "sparkhooks.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting sparkhooks:", err)
		return 1
	}
	shared.env, shared.hooks, shared.binary = env, hooks, binary

	code := m.Run()
	if err := hooks.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stopping sparkhooks:", err)
		code = 1
	}
	if code != 0 {
		printTail(filepath.Join(dir, "sparkhooks.log"), 40)
		if !keep {
			fmt.Fprintln(os.Stderr, "e2e: set SPARKHOOKS_E2E_KEEP=1 to keep the logs and kubeconfig of a run")
		}
	}
	if keep {
		fmt.Fprintf(os.Stderr, "e2e: work directory kept: %s\n", dir)
	}
	return code
}

func printTail(path string, n int) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	var lines []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	fmt.Fprintf(os.Stderr, "--- last lines of %s ---\n%s\n", filepath.Base(path), strings.Join(lines, "\n"))
}
