package sparkimages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

func TestSparkVersion(t *testing.T) {
	for _, tc := range []struct {
		ref, version, err string
	}{
		{ref: "apache/spark:3.5.3", version: "3.5.3"},
		{ref: "spark:4.0.1-scala2.13-java17-python3-ubuntu", version: "4.0.1"},
		{ref: "apache/spark:4.0.4", version: "4.0.4"},       // Kubeflow's examples, not pinned here
		{ref: "apache/spark:4.2.0-scala", version: "4.2.0"}, // Apache's examples
		{ref: "spark:3.4.0-python3", version: "3.4.0"},
		{ref: "spark:3.5.8-scala2.12-java17-ubuntu", version: "3.5.8"},
		{ref: "apache/spark:4.1.2-java17", version: "4.1.2"},
		{ref: "apache/spark:4.1.2-java17-python3", version: "4.1.2"},
		{ref: "apache/spark:4.1.2-scala-java17", version: "4.1.2"},
		{ref: "apache/spark:9.9.9", version: "9.9.9"}, // build.sh asks the package index
		{ref: "busybox:latest", err: "prepares the images apache/spark and spark only"},
		{ref: "apache/spark:latest", err: `the tag "latest" names no Spark release`},
		{ref: "apache/spark:4.0", err: `the tag "4.0" names no Spark release`},
		{ref: "apache/spark:4.0.01", err: `names no Spark release`},
		{ref: "apache/spark@sha256:0123", err: "known by tag, not by digest"},
		{ref: "apache/spark:3.3.4", err: "prepares Spark 3.4.0 and later"},
		{ref: "apache/spark:2.4.8", err: "prepares Spark 3.4.0 and later"},
		{ref: "apache/spark:4.0.1-r", err: "the R images are not prepared here"},
		{ref: "apache/spark:4.0.1-scala2.13-java17-python3-r-ubuntu", err: "the R images are not prepared here"},
		{ref: "apache/spark:4.1.2-java21", err: "runs Spark on Java 17 only; 4.1.2-java17"},
		{ref: "apache/spark:3.5.0-scala2.12-java11-python3-ubuntu", err: "runs Spark on Java 17 only"},
		{ref: "apache/spark:4.2.0-preview5", err: "not previews"},
		{ref: "apache/spark:4.0.1-scala2.12-java17-ubuntu", err: "prepared with Scala 2.13"},
		{ref: "apache/spark:4.0.1-ubuntu", err: `the tag "4.0.1-ubuntu" is not one of apache/spark's for Java 17`},
	} {
		version, err := sparkVersion(tc.ref)
		if version != tc.version || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("sparkVersion(%q) = %q, %v; want %q, an error with %q", tc.ref, version, err, tc.version, tc.err)
		}
	}
}

// fakeScript is a build.sh that prints what the real one prints and, for version 3.5.3, writes a
// layer and images.json as it does.
const fakeScript = `#!/bin/sh
echo "== spark-images into $SPARK_IMAGES_DIR (JDK 17; pods use python3)"
[ "$SPARK_IMAGES_PROGRESS" = raw ] || { echo "spark-images: no raw progress asked for" >&2; exit 1; }
echo "== download pyspark-$1.tar.gz: pip download --require-hashes -r pyspark-$1.txt"
echo "Progress 0 of 300"
echo "Progress 300 of 300"
if [ "$1" != 3.5.3 ]; then
  echo "spark-images: pip download of pyspark-$1.tar.gz failed: checksum mismatch: the package index served pyspark-$1.tar.gz with sha256 00, pyspark-$1.txt pins 11" >&2
  exit 1
fi
echo "== layer spark-3.5.3: unpack the Spark distribution from pyspark-3.5.3.tar.gz"
mkdir -p "$SPARK_IMAGES_DIR/spark-3.5.3"
echo '{"images": {"apache/spark:3.5.3": {"root": "spark-3.5.3", "size": 1000, "user": "185"}}}' >"$SPARK_IMAGES_DIR/images.json"
`

func TestBuilderPull(t *testing.T) {
	script := filepath.Join(t.TempDir(), "build.sh")
	if err := os.WriteFile(script, []byte(fakeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var logged []string
	b := &Builder{Script: script, Dir: dir, Logf: func(format string, args ...any) {
		logged = append(logged, fmt.Sprintf(format, args...))
	}}
	for _, tc := range []struct {
		ref      string
		wantErr  string
		wantRoot string
	}{
		{ref: "apache/spark:3.5.3", wantRoot: filepath.Join(dir, "spark-3.5.3")},
		{ref: "spark:3.5.3-python3", wantErr: "spark:3.5.3-python3: not found: Spark 3.5.3 is prepared, but not under this tag"},
		{ref: "apache/spark:4.0.1", wantErr: "pip download of pyspark-4.0.1.tar.gz failed: checksum mismatch: the package index served pyspark-4.0.1.tar.gz with sha256 00, pyspark-4.0.1.txt pins 11"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			var steps []prockubelet.Progress
			image, err := b.Pull(context.Background(), tc.ref, func(p prockubelet.Progress) { steps = append(steps, p) })
			if got := errString(err); !strings.HasPrefix(got, tc.wantErr) || (tc.wantErr == "") != (err == nil) {
				t.Fatalf("Pull: %v, want %q", err, tc.wantErr)
			}
			if image.Root != tc.wantRoot {
				t.Errorf("root %q, want %q", image.Root, tc.wantRoot)
			}
			version, _ := sparkVersion(tc.ref)
			download := "download pyspark-" + version + ".tar.gz"
			want := []prockubelet.Progress{
				{Step: download},
				{Step: download, Done: 0, Total: 300}, {Step: download, Done: 300, Total: 300},
			}
			if !reflect.DeepEqual(steps[:len(want)], want) {
				t.Errorf("progress = %+v, want it to begin with %+v", steps, want)
			}
		})
	}
	if len(logged) == 0 || strings.Contains(strings.Join(logged, "\n"), "Progress") {
		t.Errorf("logged %q: want the script's lines but pip's progress", logged)
	}
}

func TestBuilderPullIsCancelled(t *testing.T) {
	script := filepath.Join(t.TempDir(), "build.sh")
	// A download that never ends, in a child of the script: cancelling must stop both.
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 600 &\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := (&Builder{Script: script, Dir: t.TempDir()}).Pull(ctx, "apache/spark:3.5.3", func(prockubelet.Progress) {})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled pull: %v, want context.Canceled", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fakeOperatorScript is a kubeflow-operator.sh that, for the release directory it is given,
// writes a layer and its image table as the real one does for version 2.5.2.
const fakeOperatorScript = `#!/bin/sh
echo "== layer kubeflow-spark-operator-2.5.2: spark-4.0.1 (hard links), /usr/bin/spark-operator, tini, entrypoint.sh"
[ -f "$1/spark-operator" ] || { echo "spark-images: $1 has no spark-operator: it is not a Kubeflow Spark Operator release" >&2; exit 1; }
mkdir -p "$SPARK_IMAGES_DIR/kubeflow-spark-operator-2.5.2"
echo '{"images": {"ghcr.io/kubeflow/spark-operator/controller:2.5.2": {"root": "kubeflow-spark-operator-2.5.2", "entrypoint": ["/usr/bin/entrypoint.sh"], "user": "185"}}}' >"$SPARK_IMAGES_DIR/kubeflow-spark-operator-2.5.2.json"
`

func TestBuilderPullsKubeflowOperator(t *testing.T) {
	scripts := t.TempDir()
	for name, content := range map[string]string{"build.sh": fakeScript, kubeflowOperatorScript: fakeOperatorScript} {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	release := t.TempDir()
	if err := os.WriteFile(filepath.Join(release, "spark-operator"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, release, ref string
		wantErr, wantRoot  string
	}{
		{name: "the release's version", release: release, ref: "ghcr.io/kubeflow/spark-operator/controller:2.5.2", wantRoot: filepath.Join(dir, "kubeflow-spark-operator-2.5.2")},
		{name: "another version", release: release, ref: "ghcr.io/kubeflow/spark-operator/controller:2.4.0", wantErr: "ghcr.io/kubeflow/spark-operator/controller:2.4.0: not found: the release " + release + " is of another version"},
		{name: "not a release", release: t.TempDir(), ref: "ghcr.io/kubeflow/spark-operator/controller:2.5.2", wantErr: "is not a Kubeflow Spark Operator release"},
		{name: "no release given", ref: "ghcr.io/kubeflow/spark-operator/controller:2.5.2", wantErr: "prepares the images apache/spark and spark only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Builder{Script: filepath.Join(scripts, "build.sh"), Dir: dir, KubeflowOperator: tc.release}
			var steps []prockubelet.Progress
			image, err := b.Pull(context.Background(), tc.ref, func(p prockubelet.Progress) { steps = append(steps, p) })
			if got := errString(err); !strings.Contains(got, tc.wantErr) || (tc.wantErr == "") != (err == nil) {
				t.Fatalf("Pull: %v, want %q", err, tc.wantErr)
			}
			if image.Root != tc.wantRoot {
				t.Errorf("root %q, want %q", image.Root, tc.wantRoot)
			}
			if err == nil && (len(steps) == 0 || !strings.HasPrefix(steps[0].Step, "layer kubeflow-spark-operator-2.5.2")) {
				t.Errorf("progress = %+v, want the script's step", steps)
			}
		})
	}
}
