//go:build e2e

package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/klogsink"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// Suite is what every suite's TestMain prepares before it starts a cluster: its preconditions
// checked, a work directory, and the cluster log that client-go's klog output and the suite's
// own lines go to, so that the test output holds only the tests'.
type Suite struct {
	// Name starts the suite's messages ("e2e", "spark e2e").
	Name string
	// Dir is the work directory, removed by Close unless SPARKHOOKS_E2E_KEEP=1.
	Dir string
	// KubeBinDir and Helm are the control plane's binaries and Helm that make e2e names.
	KubeBinDir, Helm string

	keep    bool
	logMu   sync.Mutex
	logFile *os.File
}

// Prepare checks what every suite needs (root for the process kubelet's namespaces, kubectl on
// PATH, KUBE_BIN_DIR and HELM) and makes the work directory with its cluster.log.
func Prepare(name string) (*Suite, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%s: the process kubelet needs root (mount and network namespaces)", name)
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		return nil, fmt.Errorf("%s: kubectl is needed on PATH (Debian/Ubuntu: apt-get install kubectl): %w", name, err)
	}
	s := &Suite{Name: name, KubeBinDir: os.Getenv("KUBE_BIN_DIR"), Helm: os.Getenv("HELM"), keep: os.Getenv("SPARKHOOKS_E2E_KEEP") == "1"}
	if s.KubeBinDir == "" || s.Helm == "" {
		return nil, fmt.Errorf("%s: KUBE_BIN_DIR and HELM must name the control plane and Helm (make kube, make helm): make e2e sets them", name)
	}
	dir, err := os.MkdirTemp("", "sparkhooks-"+strings.ReplaceAll(name, " ", "-")+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.Dir = dir
	if s.logFile, err = os.Create(filepath.Join(dir, "cluster.log")); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	klogsink.Redirect(s.logFile)
	return s, nil
}

// Logf writes a timestamped line to the cluster log; the cluster's parts log through it.
func (s *Suite) Logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.logFile, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
}

// Close ends the suite with its exit code: the work directory is removed, or kept and named
// with SPARKHOOKS_E2E_KEEP=1, which a failed run suggests.
func (s *Suite) Close(code int) int {
	s.logFile.Close()
	switch {
	case s.keep:
		fmt.Fprintf(os.Stderr, "%s: work directory kept: %s\n", s.Name, s.Dir)
		return code
	case code != 0:
		fmt.Fprintf(os.Stderr, "%s: set SPARKHOOKS_E2E_KEEP=1 to keep the logs (cluster.log, cluster/logs/, pod logs) of a run\n", s.Name)
	}
	os.RemoveAll(s.Dir)
	return code
}

// BuildSparkhooks builds the operator of repoRoot into the work directory. Under go test -race
// the server is built with the race detector too: the hooks answering concurrent calls are what
// the suites should check for races most. The build is bounded by go test's -timeout only, as
// a cold race build takes minutes.
func (s *Suite) BuildSparkhooks(repoRoot string, race bool) (string, error) {
	binary := filepath.Join(s.Dir, "sparkhooks")
	args := []string{"build", "-C", repoRoot, "-o", binary}
	if race {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, "./cmd/sparkhooks")...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: building sparkhooks: %w\n%s", s.Name, err, out)
	}
	return binary, nil
}

// NewNetwork makes the process kubelet's pod network, its addresses drawn at random so that two
// suites side by side do not collide.
func NewNetwork(ctx context.Context) (*prockubelet.Network, error) {
	return prockubelet.NewNetwork(ctx, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))))
}
