//go:build e2e

package sparkctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func imagesDir() string {
	if dir := os.Getenv("SPARK_IMAGES_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(".cache", "spark-images")
}

// TestRealSpark: SparkPi run by real Spark on the process kubelet; create --follow prints the
// driver's own log through the API server, Pi line included, and exits 0 once COMPLETED.
func TestRealSpark(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the sandbox runs pods in namespaces: this test needs root")
	}
	if _, err := os.Stat(filepath.Join(imagesDir(), "images.json")); err != nil {
		t.Fatalf("no Spark images (make spark-images): %v", err)
	}
	s := startSandbox(t, "--images", imagesDir())
	if !strings.Contains(s.output.String(), "Mode: EXECUTED") {
		t.Fatalf("the sandbox does not execute pods:\n%s", s.output)
	}
	begin := time.Now()
	r := s.spark(t, "create", "-f", "examples/spark-pi.yaml", "--follow")
	t.Logf("create --follow of SparkPi: %s", time.Since(begin).Round(100*time.Millisecond))
	if !strings.Contains(r.stdout, "Pi is roughly 3.1") {
		t.Fatalf("create --follow printed no Pi line:\n%s", r)
	}
	if !strings.Contains(r.stderr, "spark-pi: COMPLETED") {
		t.Errorf("create --follow did not report COMPLETED:\n%s", r)
	}
	if log := s.spark(t, "log", "spark-pi"); !strings.Contains(log.stdout, "Pi is roughly 3.1") {
		t.Errorf("log spark-pi has no Pi line:\n%s", log)
	}
	status := s.spark(t, "status", "spark-pi")
	for _, want := range []string{"COMPLETED", "spark-pi-driver (Succeeded", "Spark app ID:"} {
		if !strings.Contains(status.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
}
