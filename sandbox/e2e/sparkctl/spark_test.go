//go:build e2e

package sparkctl

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

func imagesDir() string {
	if dir := os.Getenv("SPARK_IMAGES_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(".cache", "spark-images")
}

// TestRealSpark: SparkPi run by real Spark on the process kubelet. create --follow prints the
// driver's own log through the API server, Pi line included, and exits 0 once COMPLETED; while
// it runs, forward reaches the driver's Spark UI through the API server's pods/portforward.
func TestRealSpark(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the sandbox runs pods in namespaces: this test needs root")
	}
	if _, err := os.Stat(filepath.Join(imagesDir(), "images.json")); err != nil {
		t.Fatalf("no Spark images (make spark-images): %v", err)
	}
	s := startSandbox(t, "--images", imagesDir())
	if !strings.Contains(s.output.String(), "pods as local processes") {
		t.Fatalf("the sandbox does not execute pods:\n%s", s.output)
	}
	begin := time.Now()
	follow := s.command("spark", "create", "-f", "examples/spark-pi.yaml", "--follow")
	var followOut, followErr bytes.Buffer
	follow.Stdout, follow.Stderr = &followOut, &followErr
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	go func() { followed <- follow.Wait() }()

	// Like kubectl port-forward, forward ends at the first connection the pod refuses: wait
	// until the driver says its UI listens (read with kubectl spark log itself).
	waitFor(t, 2*time.Minute, "the driver's UI to be up", func() bool {
		r := s.kubectl(t, nil, "spark", "log", "spark-pi")
		return r.code == 0 && strings.Contains(r.stdout, "SparkUI")
	})
	checkForward(t, s)

	select {
	case err := <-followed:
		t.Logf("create --follow of SparkPi: %s", time.Since(begin).Round(100*time.Millisecond))
		r := result{followOut.String(), followErr.String(), follow.ProcessState.ExitCode()}
		if err != nil || !strings.Contains(r.stdout, "Pi is roughly 3.1") || !strings.Contains(r.stderr, "spark-pi: COMPLETED") {
			t.Fatalf("create --follow: %v\n%s", err, r)
		}
	case <-time.After(4 * time.Minute):
		_ = follow.Process.Kill()
		t.Fatalf("create --follow did not end within 4 minutes:\n%s\n%s", followOut.String(), followErr.String())
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

var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 4040`)

// checkForward runs `kubectl spark forward spark-pi 0:4040` and asks the Spark UI's REST API
// for the application through it, then stops it with Ctrl-C.
func checkForward(t *testing.T, s *sandbox) {
	t.Helper()
	fw := s.command("spark", "forward", "spark-pi", "0:4040")
	stdout, err := fw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr harness.LockedBuffer
	fw.Stderr = &stderr
	if err := fw.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	port := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if m := forwarding.FindStringSubmatch(scanner.Text()); m != nil {
				port <- m[1]
			}
		}
		exitErr = fw.Wait()
		close(exited)
	}()
	defer func() {
		_ = fw.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
			if err := exitErr; err != nil {
				t.Errorf("forward did not exit cleanly on Ctrl-C: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			_ = fw.Process.Kill()
			t.Errorf("forward did not stop within 30 s of Ctrl-C")
		}
	}()
	var local string
	select {
	case local = <-port:
	case <-exited:
		t.Fatalf("forward exited: %v\n%s", exitErr, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("forward printed no Forwarding line:\n%s", stderr.String())
	}
	var body string
	waitFor(t, time.Minute, "the Spark UI through the forwarded port", func() bool {
		resp, err := http.Get("http://127.0.0.1:" + local + "/api/v1/applications")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		body = string(data)
		return resp.StatusCode == http.StatusOK && strings.Contains(body, "Spark Pi")
	})
	t.Logf("the Spark UI through kubectl spark forward: %s", strings.Join(strings.Fields(body), " ")[:min(120, len(strings.Join(strings.Fields(body), " ")))])
}
