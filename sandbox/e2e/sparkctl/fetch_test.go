//go:build e2e

package sparkctl

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

var podNetwork = regexp.MustCompile(`on the pod network (\S+)\.`)

// nodeAddress is this machine's address on the sandbox's pod network (the pods' status.hostIP),
// where a server on the machine is reachable from pods, as a node's address is in a cluster.
func nodeAddress(t *testing.T, s *sandbox) string {
	t.Helper()
	m := podNetwork.FindStringSubmatch(s.output.String())
	if m == nil {
		t.Fatalf("the sandbox names no pod network:\n%s", s.output)
	}
	subnet, err := netip.ParsePrefix(m[1])
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipnet.IP); ok && subnet.Contains(ip.Unmap()) {
				return ip.Unmap().String()
			}
		}
	}
	t.Fatalf("no address of this machine is on the pod network %s", subnet)
	return ""
}

// stagedPi is SparkPi on Spark 4.0 from a local build of the examples jar, with the GCS connector
// on the driver's and executors' classpath and pointed at the emulator. A user's image carries
// the connector in /opt/spark/jars; here a hostPath volume puts the cached jar there.
const stagedPi = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: staged-pi
spec:
  type: Scala
  mode: cluster
  sparkVersion: 4.0.1
  image: apache/spark:4.0.1
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: %[1]s
  arguments: ["20"]
  hadoopConf:
    fs.gs.storage.root.url: http://%[2]s/
    fs.gs.auth.type: UNAUTHENTICATED
  volumes:
    - name: gcs-connector
      hostPath: {path: %[3]s, type: File}
  driver:
    cores: 1
    memory: 1g
    serviceAccount: spark
    volumeMounts:
      - {name: gcs-connector, mountPath: /opt/spark/jars/%[4]s, readOnly: true}
  executor:
    instances: 1
    cores: 1
    memory: 1g
    volumeMounts:
      - {name: gcs-connector, mountPath: /opt/spark/jars/%[4]s, readOnly: true}
`

// TestStagedJarRunsFromGCS: kubectl spark create --upload-to gs:// stages a local build of the
// SparkPi jar to a GCS emulator, and real Spark's driver fetches it from there through the Cloud
// Storage connector and runs it. The jar is staged under a name no image carries, so the driver's
// "Added JAR" line can only name the copy it fetched.
func TestStagedJarRunsFromGCS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the sandbox runs pods in namespaces: this test needs root")
	}
	examples := filepath.Join(imagesDir(), "spark-4.0.1", "opt", "spark", "examples", "jars", "spark-examples_2.13-4.0.1.jar")
	jar, err := os.ReadFile(examples)
	if err != nil {
		t.Fatalf("no Spark 4.0.1 image layer (make spark-images): %v", err)
	}
	connector := harness.Fixture(t, "GCS_CONNECTOR_JAR")
	s := startSandbox(t, "--images", imagesDir())
	if !strings.Contains(s.output.String(), "pods as local processes") {
		t.Fatalf("the sandbox does not execute pods:\n%s", s.output)
	}
	host := gcsServer(t, nodeAddress(t, s), "spark-deps")

	dir := t.TempDir()
	local := filepath.Join(dir, "target", "pi-build-42.jar")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, jar, 0o644); err != nil {
		t.Fatal(err)
	}
	app := writeFile(t, filepath.Join(dir, "staged-pi.yaml"), fmt.Sprintf(stagedPi, local, host, connector, filepath.Base(connector)))

	create := s.command("spark", "create", "-f", app, "--upload-to", "gs://spark-deps/ci", "--follow")
	create.Env = append(create.Env, "STORAGE_EMULATOR_HOST="+host)
	var stdout, stderr bytes.Buffer
	create.Stdout, create.Stderr = &stdout, &stderr
	begin := time.Now()
	if err := create.Start(); err != nil {
		t.Fatal(err)
	}
	// Spark 4 under the race detector on a busy machine.
	timer := time.AfterFunc(4*time.Minute, func() { _ = create.Process.Kill() })
	err = create.Wait()
	timer.Stop()
	t.Logf("create --upload-to gs:// --follow of SparkPi: %s", time.Since(begin).Round(100*time.Millisecond))
	if r := (result{stdout.String(), stderr.String(), create.ProcessState.ExitCode()}); err != nil || !strings.Contains(r.stderr, "staged-pi: COMPLETED") {
		t.Fatalf("create --upload-to gs:// --follow (killed after 4 minutes if still running): %v\n%s", err, r)
	}
	remote := "gs://spark-deps/ci/spark-app-dependencies/default/staged-pi/pi-build-42.jar"
	if got := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/staged-pi", "{.spec.mainApplicationFile}"); got != remote {
		t.Errorf("mainApplicationFile = %q, want %q", got, remote)
	}
	if got, code := gcsObject(t, host, "spark-deps", strings.TrimPrefix(remote, "gs://spark-deps/")); code != http.StatusOK || got != string(jar) {
		t.Errorf("%s: %d, %d bytes (the local jar has %d)", remote, code, len(got), len(jar))
	}
	log := s.spark(t, "log", "staged-pi").stdout
	for _, want := range []*regexp.Regexp{
		// SparkSubmit in the driver pod downloads spark.jars (the main jar among them) with
		// Hadoop's file systems and copies them to its working directory.
		regexp.MustCompile(`Files ` + regexp.QuoteMeta(remote) + ` from \S+ to \S+/pi-build-42\.jar`),
		regexp.MustCompile(`Added JAR file:/\S+/pi-build-42\.jar at spark://`),
		regexp.MustCompile(`Pi is roughly 3\.1`),
	} {
		if line := want.FindString(log); line == "" {
			t.Errorf("the driver log has no line matching %q:\n%s", want, log)
		} else {
			t.Logf("driver: %s", line)
		}
	}
}
