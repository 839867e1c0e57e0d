//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// An application with a 5 s time to live is marked Expired by the sync hook once that has passed
// since it completed, and `sparkhooks gc` deletes it; one without a time to live stays, and a
// second pass has nothing to do.
func TestGCDeletesExpiredApplications(t *testing.T) {
	t.Parallel()
	w := newWorld(t, hooksURL, appController)
	out, err := w.apply(scenarioApp("short-lived", "10", "  timeToLiveSeconds: 5\n") + "---\n" + scenarioApp("kept", "10", ""))
	require.NoError(t, err, out)
	for _, name := range []string{"short-lived", "kept"} {
		_, pod := w.runAttempt(t, name, "")
		require.NoError(t, w.kubelet.Succeed(context.Background(), pod.Name))
		w.check(t, w.waitState(name, "COMPLETED"))
	}
	w.check(t, w.waitApp("short-lived", "the Expired condition", func(app *unstructured.Unstructured) bool {
		return conditionStatus(app, "Expired") == "True"
	}))

	first := runGC(t, w.ns)
	assert.Equal(t, gcSummary{Listed: 2, Expired: 1, Deleted: 1}, first)
	// The deletion waits for the finalize hook, through the contract controller.
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		_, err := w.app("short-lived")
		return apierrors.IsNotFound(err), nil
	})
	require.NoError(t, err, "the expired application is gone: %s", w.appSummary("short-lived"))

	kept, err := w.app("kept")
	require.NoError(t, err, "the application without a time to live stays")
	assert.Nil(t, kept.GetDeletionTimestamp(), "the application without a time to live is not being deleted")
	assert.Equal(t, gcSummary{Listed: 1}, runGC(t, w.ns), "a second pass finds nothing expired")
}

// gcSummary is the count gc logs at the end of a pass.
type gcSummary struct {
	Listed  int `json:"listed"`
	Expired int `json:"expired"`
	Deleted int `json:"deleted"`
	Skipped int `json:"skipped"`
}

// runGC runs one `sparkhooks gc` pass over namespace with the suite's kubeconfig and returns the
// counts it logged.
func runGC(t *testing.T, namespace string) gcSummary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, shared.binary, "gc", "--kubeconfig", shared.stack.Kubeconfig, "--namespaces", namespace)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "sparkhooks gc:\n%s", out)
	scanner := bufio.NewScanner(bytes.NewReader(out))
	for scanner.Scan() {
		var line struct {
			Msg string `json:"msg"`
			gcSummary
		}
		if json.Unmarshal(scanner.Bytes(), &line) == nil && line.Msg == "gc pass done" {
			return line.gcSummary
		}
	}
	t.Fatalf("sparkhooks gc logged no summary:\n%s", out)
	return gcSummary{}
}
