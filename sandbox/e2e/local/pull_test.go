//go:build e2e

package local

import (
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestImagesArePulledOnDemand is a first `make run` on a machine without Spark images: the
// sandbox starts with an empty image directory and an empty download cache, pip reads a package
// index on loopback holding the pinned sdist of the Spark that examples/spark-pi.yaml names (and
// a corrupt one of another version), and SparkPi runs: its driver waits in ContainerCreating
// while the image is prepared (Pulling, Pulled with the time and size), runs and succeeds. A pod
// naming the same image meanwhile waits for that one download. The corrupt sdist ends in
// ErrImagePull with the checksum mismatch as the reason.
func TestImagesArePulledOnDemand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the sandbox runs pods in namespaces: this test needs root")
	}
	version := exampleSparkVersion(t)
	corrupt := otherPinnedVersion(t, version)
	index := packageIndex(t, version, corrupt)
	server := httptest.NewServer(http.FileServer(http.Dir(index)))
	defer server.Close()

	sandbox, hooks := build(t)
	images := sharedTempDir(t)
	readyFile := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(sandbox, "--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--images", images, "--ready-file", readyFile)
	// Only the loopback index: no pip configuration of this machine, an empty download cache.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PIP_") }),
		"PIP_CONFIG_FILE="+os.DevNull, "PIP_INDEX_URL="+server.URL+"/simple/", "SPARK_DOWNLOADS_DIR="+t.TempDir())
	s := launch(t, cmd, readyFile)
	stopped := false
	defer func() {
		if !stopped {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			<-s.exited
		}
	}()
	t.Logf("up after %s:\n%s", s.upAfter.Round(100*time.Millisecond), s.output)
	if !strings.Contains(s.output.String(), "Spark images: none in "+images) {
		t.Fatalf("the banner does not say that no Spark image is ready:\n%s", s.output)
	}

	image := "apache/spark:" + version
	applied := time.Now()
	if out, err := s.kubectl("apply", "-f", "examples/spark-pi.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	if out, err := s.kubectl("run", "same-image", "--image", image, "--restart", "Never", "--command", "--", "/bin/true"); err != nil {
		t.Fatalf("kubectl run: %v\n%s", err, out)
	}
	states, pulling := s.followDriver(t, 6*time.Minute)
	t.Logf("kubectl get pods while the image was pulled:\n%s", pulling)
	t.Logf("the driver went %s", strings.Join(states, " -> "))
	if !isSubsequence([]string{"Pending ContainerCreating", "Running", "Succeeded"}, states) {
		t.Errorf("the driver went %q, want Pending ContainerCreating, Running, Succeeded", states)
	}
	state, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "jsonpath={.status.applicationState.state}")
	for deadline := time.Now().Add(time.Minute); state != "COMPLETED" && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		state, _ = s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "jsonpath={.status.applicationState.state}")
	}
	logs, err := s.kubectl("logs", "spark-pi-driver")
	if state != "COMPLETED" || err != nil || !strings.Contains(logs, "Pi is roughly 3.1") {
		t.Fatalf("spark-pi is %q; kubectl logs spark-pi-driver: %v, no Pi line in\n%s", state, err, harness.Tail(logs, 20))
	}
	t.Logf("from kubectl apply to the Pi line: %s", time.Since(applied).Round(time.Second))

	pulled := regexp.MustCompile(`^Successfully pulled image "` + regexp.QuoteMeta(image) + `" in [0-9hmsµ.]+ \([0-9hmsµ.]+ including waiting\)\. Image size: [1-9][0-9]+ bytes\.$`)
	for _, pod := range []string{"spark-pi-driver", "same-image"} {
		events := s.events(t, pod)
		t.Logf("events of %s:\n%s", pod, strings.Join(events, "\n"))
		if !slices.Contains(events, "Pulling\tPulling image \""+image+"\"") || !slices.ContainsFunc(events, func(e string) bool {
			reason, message, _ := strings.Cut(e, "\t")
			return reason == "Pulled" && pulled.MatchString(message)
		}) {
			t.Errorf("%s has no Pulling and Pulled events with the time and size", pod)
		}
	}
	if n := strings.Count(s.output.String(), "Pulled "+image+" in "); n != 1 {
		t.Errorf("the terminal shows %d pulls of %s, want one for both pods:\n%s", n, image, s.output)
	}

	s.checkChecksumMismatch(t, "apache/spark:"+corrupt)
	_, pulls, _ := strings.Cut(s.output.String(), "Ctrl-C stops everything.\n")
	t.Logf("the terminal:\n%s", pulls)
	stopped = true
	s.stopAndCheckNothingIsLeft(t)
}

// checkChecksumMismatch runs a pod of image, whose sdist in the index is not the pinned one.
func (s *started) checkChecksumMismatch(t *testing.T, image string) {
	t.Helper()
	if out, err := s.kubectl("run", "mismatch", "--image", image, "--restart", "Never", "--command", "--", "/bin/true"); err != nil {
		t.Fatalf("kubectl run: %v\n%s", err, out)
	}
	reason, message := "", ""
	for deadline := time.Now().Add(2 * time.Minute); reason != "ErrImagePull" && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		out, _ := s.kubectl("get", "pod", "mismatch", "-o", "jsonpath={.status.containerStatuses[0].state.waiting.reason}{\"\\t\"}{.status.containerStatuses[0].state.waiting.message}")
		reason, message, _ = strings.Cut(out, "\t")
	}
	if reason != "ErrImagePull" || !strings.Contains(message, "checksum mismatch") {
		t.Fatalf("the pod of %s waits with %q (%s), want ErrImagePull with the checksum mismatch", image, reason, message)
	}
	t.Logf("ErrImagePull: %s", message)
	events := s.events(t, "mismatch")
	if !slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "Failed\tFailed to pull image \""+image+"\": ") && strings.Contains(e, "checksum mismatch")
	}) || !slices.Contains(events, "Failed\tError: ErrImagePull") {
		t.Errorf("events of the mismatch pod:\n%s\nwant Failed with the checksum mismatch, and Error: ErrImagePull", strings.Join(events, "\n"))
	}
	if !strings.Contains(s.output.String(), "Failed to pull "+image) {
		t.Errorf("the terminal does not show the failed pull:\n%s", s.output)
	}
}

// followDriver polls spark-pi-driver until it has ended and returns the states it was seen in
// (phase, and the reason a container waits), each change once, and `kubectl get pods` as it was
// while the image was pulled.
func (s *started) followDriver(t *testing.T, timeout time.Duration) (states []string, pulling string) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		out, err := s.kubectl("get", "pod", "spark-pi-driver", "-o", "jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.reason}")
		if err != nil {
			continue
		}
		state := strings.TrimSpace(out)
		if len(states) == 0 || states[len(states)-1] != state {
			states = append(states, state)
		}
		if state == "Pending ContainerCreating" && pulling == "" && strings.Contains(s.output.String(), "Pulling apache/spark:") {
			pulling, _ = s.kubectl("get", "pods")
		}
		if state == "Succeeded" || state == "Failed" {
			return states, pulling
		}
	}
	t.Fatalf("spark-pi-driver has not ended within %s; it went %q", timeout, states)
	return nil, ""
}

// events are the reasons and messages of a pod's Events.
func (s *started) events(t *testing.T, pod string) []string {
	t.Helper()
	out, err := s.kubectl("get", "events", "--field-selector", "involvedObject.name="+pod,
		"-o", `jsonpath={range .items[*]}{.reason}{"\t"}{.message}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("kubectl get events: %v\n%s", err, out)
	}
	return strings.Split(strings.TrimSpace(out), "\n")
}

// isSubsequence reports whether want appears in got in order, other elements between.
func isSubsequence(want, got []string) bool {
	for _, g := range got {
		if len(want) > 0 && g == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}

// exampleSparkVersion is the Spark version of the image examples/spark-pi.yaml names.
func exampleSparkVersion(t *testing.T) string {
	t.Helper()
	example, err := os.ReadFile("examples/spark-pi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*image: "?apache/spark:([0-9.]+)`).FindSubmatch(example)
	if m == nil {
		t.Fatal("examples/spark-pi.yaml names no apache/spark image")
	}
	return string(m[1])
}

// otherPinnedVersion is a Spark version build.sh pins other than version.
func otherPinnedVersion(t *testing.T, version string) string {
	t.Helper()
	pins, _ := filepath.Glob("hack/spark-images/pyspark-*.txt")
	for _, pin := range pins {
		if v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(pin), "pyspark-"), ".txt"); v != version {
			return v
		}
	}
	t.Fatalf("hack/spark-images pins no Spark version but %s", version)
	return ""
}

// downloadCache is where hack/spark-images/build.sh keeps its downloads: SPARK_DOWNLOADS_DIR,
// else the user's cache (SPARKHOOKS_CACHE, else XDG_CACHE_HOME/sparkhooks, else ~/.cache/sparkhooks).
func downloadCache(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("SPARK_DOWNLOADS_DIR"); dir != "" {
		return dir
	}
	cache := os.Getenv("SPARKHOOKS_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatalf("finding the download cache: %v", err)
			}
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "sparkhooks")
	}
	return filepath.Join(cache, "downloads")
}

// packageIndex is a package index in a directory, as pip reads one (PEP 503, from the
// directory listings of a file server): the pinned sdist of version and the wheels that make
// build.sh's pip venv, from the download cache `make spark-images` fills, and an sdist of
// corrupt that is not the one pinned.
func packageIndex(t *testing.T, version, corrupt string) string {
	t.Helper()
	downloads := downloadCache(t)
	wheels, _ := filepath.Glob(filepath.Join(downloads, "build-wheels", "*.whl"))
	sdist := filepath.Join(downloads, "pyspark-"+version+".tar.gz")
	if _, err := os.Stat(sdist); err != nil || len(wheels) == 0 {
		t.Fatalf("no pyspark-%s.tar.gz and build wheels in %s: prepare them with make spark-images", version, downloads)
	}
	index := t.TempDir()
	place := func(from string) {
		project := strings.ToLower(strings.SplitN(filepath.Base(from), "-", 2)[0])
		dir := filepath.Join(index, "simple", project)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, filepath.Base(from))
		if os.Link(from, to) == nil {
			return
		}
		if err := copyFile(from, to); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range append(wheels, sdist) {
		place(f)
	}
	bad := filepath.Join(t.TempDir(), "pyspark-"+corrupt+".tar.gz")
	f, err := os.Create(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	place(bad)
	return index
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
