// Package kubectl runs the installed kubectl against a sandbox's kubeconfig, with a discovery
// cache of that cluster's own.
package kubectl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Run runs the installed kubectl against kubeconfig and returns its combined output; a
// failure's error carries that output.
func Run(ctx context.Context, kubeconfig string, args ...string) (string, error) {
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
