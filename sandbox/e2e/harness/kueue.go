//go:build e2e

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
)

// KueueVersion is the Kueue release whose CRDs the Kueue tests install: the API sparkhooks
// writes (kueue.x-k8s.io/v1beta2), with every schema and CEL rule of the real thing. They come
// from the Go module proxy (go mod download: checksummed by the Go checksum database, cached in
// the module cache), not from the repository.
const KueueVersion = "v0.19.2"

// KueueBinaryEnv names the Kueue controller binary the real-Kueue tests run; make kueue builds
// it (sigs.k8s.io/kueue/cmd/kueue at KueueVersion, in its own module) once per user and prints
// its path, which make e2e exports here.
const KueueBinaryEnv = "SPARKHOOKS_KUEUE_BINARY"

// KueueCRDDir is the directory of Kueue KueueVersion's CRDs, one file each, in the module cache.
func KueueCRDDir() (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/kueue@"+KueueVersion).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kueue@%s: %w", KueueVersion, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kueue@%s: no module directory in %s", KueueVersion, out)
	}
	return filepath.Join(mod.Dir, "config", "components", "crd", "bases"), nil
}

// InstallKueueCRDs installs every CRD of Kueue KueueVersion in the cluster of kubeconfig and
// waits until they are established.
func InstallKueueCRDs(kubeconfig string) error {
	bases, err := KueueCRDDir()
	if err != nil {
		return err
	}
	ctx := context.Background()
	// All of them: Kueue's controller indexes every kind it serves.
	for _, kind := range []string{"workloads", "resourceflavors", "clusterqueues", "localqueues", "admissionchecks", "cohorts",
		"multikueueclusters", "multikueueconfigs", "provisioningrequestconfigs", "topologies", "workloadpriorityclasses"} {
		// Server-side: the Workload CRD (1.4 MB) is too big for kubectl's last-applied annotation.
		file := filepath.Join(bases, "kueue.x-k8s.io_"+kind+".yaml")
		if out, err := kubectl.Run(ctx, kubeconfig, "apply", "--server-side", "-f", file); err != nil {
			return fmt.Errorf("installing %s: %w: %s", file, err, out)
		}
		crd := kind + ".kueue.x-k8s.io"
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			out, err := kubectl.Run(ctx, kubeconfig, "get", "crd/"+crd,
				"-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
			return err == nil && strings.TrimSpace(out) == "True", nil
		}); err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd, err)
		}
	}
	return nil
}

// StartKueue runs the real Kueue controller against the cluster of kubeconfig until the test
// ends, logging to a file in logDir. What it takes to run it there: Kueue's CRDs; no leader
// election; no job integration but batch/job (which it always sets up); no on-demand visibility
// server (an aggregated API server); and, without its internal certificate management (which
// wants the webhook configurations and a Secret of its own Deployment), serving certificates for
// its webhook server, which nothing calls unless a test registers it (Kueue.WebhookURL), and for
// its metrics server at the fixed path
// /etc/kueue/metrics/certs: a tmpfs over /etc in a mount namespace of its own holds them (root,
// as make e2e runs).
func StartKueue(t *testing.T, kubeconfig, logDir string) {
	t.Helper()
	StartKueueWith(t, kubeconfig, logDir, KueueOptions{})
}

// KueueOptions add to what StartKueue runs Kueue with.
type KueueOptions struct {
	// Config is YAML appended to the controller's Configuration (a multiKueue section, say).
	Config string
	// FeatureGates are added to --feature-gates, as Gate=true,Other=false.
	FeatureGates string
	// Frameworks are job integrations set up besides batch/job (integrations.frameworks).
	Frameworks []string
}

// Kueue is a running Kueue controller: where its webhook server listens (on this host) and the
// certificate it serves, its own CA.
type Kueue struct {
	WebhookURL string // https://127.0.0.1:<port>
	CACert     []byte // PEM
}

// StartKueueWith is StartKueue with more configuration.
func StartKueueWith(t *testing.T, kubeconfig, logDir string, o KueueOptions) *Kueue {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the real Kueue controller needs root here (a mount namespace for its fixed certificate path); make e2e runs as root")
	}
	bin := kueueBinary(t)
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certs, 0o755); err != nil {
		t.Fatal(err)
	}
	// The address is in the certificate: the API server calls the webhook by URL when a test
	// registers it.
	out, err := exec.Command("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
		"-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
		"-keyout", filepath.Join(certs, "tls.key"), "-out", filepath.Join(certs, "tls.crt")).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl: %v: %s", err, out)
	}
	port := FreePort(t)
	frameworks, err := json.Marshal(append([]string{"batch/job"}, o.Frameworks...))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: "0"
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: %s
%s`, port, certs, frameworks, o.Config)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// A file of its own: subtests' temporary directories share base names.
	logFile, err := os.CreateTemp(logDir, "kueue-*.log")
	if err != nil {
		t.Fatal(err)
	}
	logPath := logFile.Name()
	script := `mount -t tmpfs tmpfs /etc && mkdir -p /etc/kueue/metrics/certs && cp "$1"/tls.crt "$1"/tls.key /etc/kueue/metrics/certs/ && shift && exec "$@"`
	gates := "VisibilityOnDemand=false"
	if o.FeatureGates != "" {
		gates += "," + o.FeatureGates
	}
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "kueue", certs,
		bin, "--config", config, "--kubeconfig", kubeconfig, "--feature-gates="+gates)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		logFile.Close()
		if t.Failed() {
			if data, err := os.ReadFile(logPath); err == nil {
				lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
				t.Logf("last lines of %s:\n%s", logPath, strings.Join(lines[max(0, len(lines)-30):], "\n"))
			}
		}
	})
	select {
	case <-exited:
		t.Fatalf("Kueue exited at start: %v", waitErr)
	case <-time.After(3 * time.Second):
	}
	ca, err := os.ReadFile(filepath.Join(certs, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	return &Kueue{WebhookURL: fmt.Sprintf("https://127.0.0.1:%d", port), CACert: ca}
}

func kueueBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(KueueBinaryEnv)
	if bin == "" {
		t.Fatalf("%s is not set: make kueue builds the Kueue controller and prints its path, make e2e exports it", KueueBinaryEnv)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("the Kueue controller binary %s is missing: run make kueue (or set %s): %v", abs, KueueBinaryEnv, err)
	}
	return abs
}
