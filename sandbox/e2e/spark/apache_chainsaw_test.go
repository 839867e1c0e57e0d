//go:build e2e

package spark

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// apacheE2E is every test of the Apache Spark Kubernetes Operator 1.0.0's own e2e suite
// (tests/e2e, Kyverno Chainsaw) with what it does against sparkhooks here: an empty why passes
// and runs in make e2e unless slow; otherwise why is the reason it fails or cannot apply, which
// docs/apache.md repeats. make e2e-apache (SPARKHOOKS_APACHE_E2E=all) runs them all and fails
// when a test's result is not the one recorded, either way.
var apacheE2E = []struct {
	dir string
	why string
	// values are chart values (--set-json) the test runs with, as Apache's CI configures its
	// operator for it; they are reset to the chart's defaults after it.
	values []string
	// slow passes but mostly waits (Apache's own sleeps and timeouts): make e2e-apache runs it,
	// make e2e does not.
	slow bool
}{
	{dir: "driver-start-timeout"},
	{dir: "resource-retain-on-failure"},
	{dir: "state-transition"},
	{dir: "resource-retain-duration", slow: true}, // 50 s, of which 40 s its retain duration and TTL
	{dir: "spark-versions"},
	{dir: "python"},
	// Apache's CI runs it with its operator's reconciler.labelSelector foo=bar,keyx=valuey
	// (tests/e2e/helm/selector-config-values.yaml); the chart's equivalent is set for it alone.
	{dir: "resource-selector", values: []string{`apacheSparkApplication.labelSelector={"matchLabels":{"foo":"bar","keyx":"valuey"}}`}, slow: true}, // 129 s, of which 120 s its sleeps
	{dir: "watched-namespaces", why: "configures Apache's operator (its hot-reloaded namespace list, read from its log) and installs its Helm chart"},
	{dir: "watched-namespaces-file", why: "configures Apache's operator (its namespace list from a file, read from its log)"},
	{dir: "pi-java25", why: "names apache/spark:4.2.0-scala-java25; the sandbox's images run Java 17 only"},
	{dir: "pi-with-comet", why: "downloads the Comet jar from the network in an init container and loads its plugin"},
	{dir: "pi-with-gluten", why: "needs the Gluten jar and its native libraries"},
}

// chainsawConfig is the configuration the suite runs with: one test at a time (they share the
// namespace default and the machine's two cores), and Apache's own timeouts, which every step
// that waits sets itself.
const chainsawConfig = `apiVersion: chainsaw.kyverno.io/v1alpha2
kind: Configuration
metadata:
  name: sparkhooks
spec:
  execution:
    parallel: 1
  timeouts:
    apply: 30s
    assert: 60s
    cleanup: 120s
    delete: 120s
    error: 60s
    exec: 120s
`

// TestApacheChainsaw runs the Apache operator's own e2e suite with chainsaw, unchanged, against
// this cluster: the real control plane and Metacontroller, sparkhooks' chart, real Spark.
// Apache's applications name Spark 4.2.0 (apache/spark:4.2.0, -scala), which the sandbox's
// image source prepares as any release (make e2e prepares it ahead: hack/spark-images/build.sh
// 4.2.0).
func TestApacheChainsaw(t *testing.T) {
	release := os.Getenv("APACHE_SPARK_OPERATOR")
	if release == "" {
		t.Skip("APACHE_SPARK_OPERATOR names no Apache Spark Kubernetes Operator 1.0.0 source tree (make sets it when ../shared/apache-spark-kubernetes-operator/1.0.0 exists)")
	}
	chainsaw := os.Getenv("SPARKHOOKS_CHAINSAW")
	if chainsaw == "" {
		t.Fatal("SPARKHOOKS_CHAINSAW is not set: hack/chainsaw/build.sh builds chainsaw, make e2e exports it")
	}
	all := os.Getenv("SPARKHOOKS_APACHE_E2E") == "all"
	config := filepath.Join(t.TempDir(), "chainsaw.yaml")
	if err := os.WriteFile(config, []byte(chainsawConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, test := range apacheE2E {
		if (test.why != "" || test.slow) && !all {
			continue
		}
		t.Run(test.dir, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			if len(test.values) > 0 {
				withChartValues(ctx, t, test.values)
			}
			cmd := exec.CommandContext(ctx, chainsaw, "test", "--no-color", "--config", config,
				"--test-dir", filepath.Join(release, "tests", "e2e", test.dir))
			// Chainsaw and the suite's scripts (kubectl, jq) work on this cluster.
			cmd.Env = append(os.Environ(), "KUBECONFIG="+shared.stack.Kubeconfig)
			started := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(started).Round(time.Second)
			passed := err == nil && !strings.Contains(string(out), "- Passed  tests 0\n")
			// Chainsaw ran the test, which failed (not chainsaw refusing its flags or the files).
			failed := err != nil && strings.Contains(string(out), "Done with failures.")
			switch {
			case !passed && !failed:
				t.Errorf("chainsaw %s ran no test (%v):\n%s", test.dir, err, harness.Tail(string(out), 40))
			case failed && test.why == "":
				t.Errorf("chainsaw %s failed after %s: %v\n%s", test.dir, took, err, harness.Tail(string(out), 80))
			case passed && test.why != "":
				t.Errorf("chainsaw %s passed in %s, recorded as failing (%s): update apacheE2E and docs/apache.md", test.dir, took, test.why)
			case failed:
				t.Logf("chainsaw %s fails as recorded (%s) after %s; its first error:\n%s", test.dir, test.why, took, firstError(string(out)))
			default:
				t.Logf("chainsaw %s passed in %s", test.dir, took)
			}
		})
	}
}

// withChartValues upgrades the chart with values (--set-json) for the rest of the test and back
// to the chart's defaults after it. Only Metacontroller applies a parent's label selector; the
// stand-in runs every parent.
func withChartValues(ctx context.Context, t *testing.T, values []string) {
	t.Helper()
	if os.Getenv("METACONTROLLER_BIN") == "" {
		t.Skip("needs Metacontroller (METACONTROLLER_BIN): the stand-in ignores parentResource.labelSelector")
	}
	if err := shared.stack.SetChartValues(ctx, values...); err != nil {
		t.Fatalf("helm upgrade with %v: %v", values, err)
	}
	t.Cleanup(func() {
		reset := make([]string, 0, len(values))
		for _, v := range values {
			key, _, _ := strings.Cut(v, "=")
			reset = append(reset, key+"=null")
		}
		if err := shared.stack.SetChartValues(context.Background(), reset...); err != nil {
			t.Errorf("helm upgrade back to the chart's defaults: %v", err)
		}
	})
}

// firstError is the first error chainsaw reported in out: the lines after its first "=== ERROR".
func firstError(out string) string {
	_, after, found := strings.Cut(out, "=== ERROR")
	if !found {
		return harness.Tail(strings.TrimSpace(out), 15)
	}
	lines := strings.SplitN(strings.TrimSpace(after), "\n", 4)
	return strings.Join(lines[:min(len(lines), 3)], "\n")
}
