package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// helmRunner installs charts with the helm client, as a user does, keeping Helm's own files
// (cache, configuration, repositories) inside the stack's directory.
type helmRunner struct {
	binary, kubeconfig, home, logDir string
}

// installOptions are the values of an install and how helm goes about it.
type installOptions struct {
	valuesFiles, set, setJSON []string
	// wait: until the release's workloads are ready.
	wait bool
	// skipSchemaValidation: values the chart's schema refuses (replicaCount=0 for the hook
	// server that runs on the host instead).
	skipSchemaValidation bool
	// skipCRDs: the chart's crds/ are applied already, as an administrator who manages CRDs
	// apart from releases does.
	skipCRDs bool
}

// install runs helm install.
func (h helmRunner) install(ctx context.Context, release, chart, namespace string, o installOptions) error {
	args := []string{"install", release, chart, "--namespace", namespace, "--create-namespace"}
	if o.wait {
		args = append(args, "--wait", "--timeout", "3m")
	}
	if o.skipSchemaValidation {
		args = append(args, "--skip-schema-validation")
	}
	if o.skipCRDs {
		args = append(args, "--skip-crds")
	}
	for _, f := range o.valuesFiles {
		args = append(args, "--values", f)
	}
	for _, s := range o.set {
		args = append(args, "--set", s)
	}
	for _, s := range o.setJSON {
		args = append(args, "--set-json", s)
	}
	if _, err := h.run(ctx, args...); err != nil {
		return fmt.Errorf("installing the chart %s: %w", chart, err)
	}
	return nil
}

func (h helmRunner) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.binary, append([]string{"--kubeconfig", h.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(h.home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(h.home, "config"),
		"HELM_DATA_HOME="+filepath.Join(h.home, "data"),
	)
	out, err := cmd.CombinedOutput()
	if log, openErr := os.OpenFile(filepath.Join(h.logDir, "helm.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); openErr == nil {
		fmt.Fprintf(log, "$ helm %s\n%s\n", strings.Join(args, " "), out)
		log.Close()
	}
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// upgrade runs helm upgrade on an installed release with the chart's current defaults and the
// values set at install, but for setJSON; skipSchemaValidation as at install.
func (h helmRunner) upgrade(ctx context.Context, release, chart, namespace string, setJSON []string, skipSchemaValidation bool) error {
	args := []string{"upgrade", release, chart, "--namespace", namespace, "--reset-then-reuse-values", "--wait", "--timeout", "3m"}
	if skipSchemaValidation {
		args = append(args, "--skip-schema-validation")
	}
	for _, s := range setJSON {
		args = append(args, "--set-json", s)
	}
	if _, err := h.run(ctx, args...); err != nil {
		return fmt.Errorf("upgrading the release %s: %w", release, err)
	}
	return nil
}

// uninstall runs helm uninstall and waits until the release's resources are gone. Helm leaves
// the CRDs of the chart's crds/ in place, and with them every custom resource.
func (h helmRunner) uninstall(ctx context.Context, release, namespace string) error {
	if _, err := h.run(ctx, "uninstall", release, "--namespace", namespace, "--wait", "--timeout", "3m"); err != nil {
		return fmt.Errorf("uninstalling the release %s: %w", release, err)
	}
	return nil
}
