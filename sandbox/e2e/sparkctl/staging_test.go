//go:build e2e

package sparkctl

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// stagingApp is a SparkApplication whose main jar and one extra jar are local files.
const stagingApp = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: %s
spec:
  type: Scala
  mode: cluster
  sparkVersion: 3.5.3
  image: apache/spark:3.5.3
  mainClass: org.example.Main
  mainApplicationFile: %s
  deps:
    jars: [%s, local:///opt/spark/jars/in-image.jar]
  driver: {cores: 1, memory: 512m, serviceAccount: spark}
  executor: {instances: 1, cores: 1, memory: 512m}
`

// testStaging uploads an application's local jars to a real MinIO and a real fake-gcs-server
// with kubectl-spark, through each SDK's standard environment, and checks the objects and the
// URIs the created application names.
func testStaging(t *testing.T, s *sandbox) {
	dir := t.TempDir()
	mainJar := writeFile(t, filepath.Join(dir, "target", "app.jar"), "main jar v1")
	depJar := writeFile(t, filepath.Join(dir, "lib", "dep.jar"), "dependency")

	t.Run("S3 (MinIO)", func(t *testing.T) {
		store := harness.StartMinIO(t, "127.0.0.1", "spark-deps")
		endpoint, client := store.Endpoint, store.Client
		env := []string{"AWS_ENDPOINT_URL_S3=" + endpoint, "AWS_ACCESS_KEY_ID=" + store.AccessKey, "AWS_SECRET_ACCESS_KEY=" + store.SecretKey, "AWS_REGION=us-east-1",
			"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent"}
		app := writeFile(t, filepath.Join(dir, "s3.yaml"), fmt.Sprintf(stagingApp, "staged-s3", mainJar, depJar))
		r := s.kubectl(t, env, "spark", "create", "-f", app, "--upload-to", "s3://spark-deps/team/a")
		if r.code != 0 {
			t.Fatalf("create --upload-to s3: %s", r)
		}
		prefix := "team/a/spark-app-dependencies/default/staged-s3/"
		if got := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/staged-s3", "{.spec.mainApplicationFile}"); got != "s3a://spark-deps/"+prefix+"app.jar" {
			t.Errorf("mainApplicationFile = %q", got)
		}
		if got := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/staged-s3", "{.spec.deps.jars}"); got != fmt.Sprintf(`["s3a://spark-deps/%sdep.jar","local:///opt/spark/jars/in-image.jar"]`, prefix) {
			t.Errorf("deps.jars = %s", got)
		}
		if got := s3Object(t, client, "spark-deps", prefix+"app.jar"); got != "main jar v1" {
			t.Errorf("the staged main jar holds %q", got)
		}
		if got := s3Object(t, client, "spark-deps", prefix+"dep.jar"); got != "dependency" {
			t.Errorf("the staged dependency holds %q", got)
		}
		// A new build of the jar: kept without --override, replaced with it.
		writeFile(t, mainJar, "main jar v2")
		if r := s.kubectl(t, env, "spark", "create", "-f", app, "--upload-to", "s3://spark-deps/team/a", "--delete"); r.code != 0 || !strings.Contains(r.stderr, "exists, kept (--override replaces it)") {
			t.Errorf("create again without --override: %s", r)
		}
		if got := s3Object(t, client, "spark-deps", prefix+"app.jar"); got != "main jar v1" {
			t.Errorf("without --override the object became %q", got)
		}
		if r := s.kubectl(t, env, "spark", "create", "-f", app, "--upload-to", "s3://spark-deps/team/a", "--delete", "--override"); r.code != 0 {
			t.Errorf("create --override: %s", r)
		}
		if got := s3Object(t, client, "spark-deps", prefix+"app.jar"); got != "main jar v2" {
			t.Errorf("with --override the object holds %q", got)
		}
		writeFile(t, mainJar, "main jar v1")
		// Bad credentials: one line, nothing created.
		bad := append(env[:len(env):len(env)], "AWS_SECRET_ACCESS_KEY=wrong")
		app2 := writeFile(t, filepath.Join(dir, "s3-bad.yaml"), fmt.Sprintf(stagingApp, "staged-bad", mainJar, depJar))
		if r := s.kubectl(t, bad, "spark", "create", "-f", app2, "--upload-to", "s3://spark-deps"); r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "StatusCode: 403") {
			t.Errorf("wrong secret key: %s", r)
		}
		if r := s.kubectl(t, nil, "get", "sparkapplications.sparkoperator.k8s.io", "staged-bad"); r.code == 0 {
			t.Errorf("an application whose staging failed was created")
		}
	})

	t.Run("GCS (fake-gcs-server)", func(t *testing.T) {
		host := gcsServer(t, "127.0.0.1", "spark-deps")
		env := []string{"STORAGE_EMULATOR_HOST=" + host}
		app := writeFile(t, filepath.Join(dir, "gcs.yaml"), fmt.Sprintf(stagingApp, "staged-gcs", mainJar, "file://"+depJar))
		r := s.kubectl(t, env, "spark", "create", "-f", app, "--upload-to", "gs://spark-deps")
		if r.code != 0 {
			t.Fatalf("create --upload-to gs: %s", r)
		}
		prefix := "spark-app-dependencies/default/staged-gcs/"
		if got := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/staged-gcs", "{.spec.mainApplicationFile}"); got != "gs://spark-deps/"+prefix+"app.jar" {
			t.Errorf("mainApplicationFile = %q", got)
		}
		if got := s.jsonpath(t, "sparkapplications.sparkoperator.k8s.io/staged-gcs", "{.spec.deps.jars[0]}"); got != "gs://spark-deps/"+prefix+"dep.jar" {
			t.Errorf("deps.jars[0] = %q", got)
		}
		for key, want := range map[string]string{prefix + "app.jar": "main jar v1", prefix + "dep.jar": "dependency"} {
			if got, code := gcsObject(t, host, "spark-deps", key); code != 200 || got != want {
				t.Errorf("gs://spark-deps/%s: %d %q", key, code, got)
			}
		}
		writeFile(t, mainJar, "main jar v2")
		if r := s.kubectl(t, env, "spark", "create", "-f", app, "--upload-to", "gs://spark-deps", "--delete"); r.code != 0 || !strings.Contains(r.stderr, "exists, kept") {
			t.Errorf("create again without --override: %s", r)
		}
		if got, _ := gcsObject(t, host, "spark-deps", prefix+"app.jar"); got != "main jar v1" {
			t.Errorf("without --override the object became %q", got)
		}
		if r := s.kubectl(t, env, "spark", "create", "-f", app, "--upload-to", "gs://spark-deps", "--delete", "--override"); r.code != 0 {
			t.Errorf("create --override: %s", r)
		}
		if got, _ := gcsObject(t, host, "spark-deps", prefix+"app.jar"); got != "main jar v2" {
			t.Errorf("with --override the object holds %q", got)
		}
	})
}
