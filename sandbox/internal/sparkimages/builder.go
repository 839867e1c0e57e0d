// Package sparkimages prepares the sandbox's Spark images when a pod first names one (a pull, for
// the process kubelet's prockubelet.ImageSource), with the pinned, checksummed steps of `make
// spark-images`: hack/spark-images/build.sh, for that image's Spark version only. With a Kubeflow
// Spark Operator release, it also prepares that operator's image (kubeflow-operator.sh, next to
// build.sh): a Spark layer with the operator's binary, which Kubeflow's chart runs.
package sparkimages

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// Builder prepares images with build.sh.
type Builder struct {
	// Script is hack/spark-images/build.sh.
	Script string
	// Dir is the image directory it prepares (SPARK_IMAGES_DIR): the layers and images.json.
	Dir string
	// Logf receives the script's output, line by line.
	Logf func(format string, args ...any)
	// KubeflowOperator is a Kubeflow Spark Operator release (its binary, entrypoint.sh and
	// chart/); empty: its image is not prepared here.
	KubeflowOperator string
}

// KubeflowOperatorImage is the repository of the image Kubeflow's chart runs its controller and
// webhook from, tagged with the chart's appVersion.
const KubeflowOperatorImage = "ghcr.io/kubeflow/spark-operator/controller"

// kubeflowOperatorScript prepares KubeflowOperatorImage; it lives next to build.sh.
const kubeflowOperatorScript = "kubeflow-operator.sh"

// Pull prepares the image ref names: build.sh builds the layer of its Spark version (downloading
// its sdist through pip, checked against the pinned sha256 or the one the package index lists, if
// it is not in the download cache) and lists it in images.json.
func (b *Builder) Pull(ctx context.Context, ref string, progress func(prockubelet.Progress)) (prockubelet.Image, error) {
	if tag, ok := strings.CutPrefix(ref, KubeflowOperatorImage+":"); ok && b.KubeflowOperator != "" {
		return b.pullKubeflowOperator(ctx, ref, tag, progress)
	}
	version, err := sparkVersion(ref)
	if err != nil {
		return prockubelet.Image{}, err
	}
	if err := b.build(ctx, b.Script, []string{version}, progress); err != nil {
		return prockubelet.Image{}, err
	}
	table, err := prockubelet.LoadImageTable(filepath.Join(b.Dir, "images.json"))
	if err != nil {
		return prockubelet.Image{}, err
	}
	image, ok := table.Lookup(ref)
	if !ok {
		return prockubelet.Image{}, fmt.Errorf("%s: not found: Spark %s is prepared, but not under this tag (hack/spark-images/README.md lists the tags)", ref, version)
	}
	return image, nil
}

// pullKubeflowOperator prepares the Kubeflow Spark Operator's image from the release, whose
// chart's appVersion must be tag: the script writes the image's own table.
func (b *Builder) pullKubeflowOperator(ctx context.Context, ref, tag string, progress func(prockubelet.Progress)) (prockubelet.Image, error) {
	script := filepath.Join(filepath.Dir(b.Script), kubeflowOperatorScript)
	if err := b.build(ctx, script, []string{b.KubeflowOperator}, progress); err != nil {
		return prockubelet.Image{}, err
	}
	table, err := prockubelet.LoadImageTable(filepath.Join(b.Dir, "kubeflow-spark-operator-"+tag+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return prockubelet.Image{}, fmt.Errorf("%s: not found: the release %s is of another version", ref, b.KubeflowOperator)
	}
	if err != nil {
		return prockubelet.Image{}, err
	}
	image, ok := table.Lookup(ref)
	if !ok {
		return prockubelet.Image{}, fmt.Errorf("%s: not found in the table %s prepared", ref, script)
	}
	return image, nil
}

// oldest is the oldest Spark build.sh prepares: 3.4 is the first to support both Java 17 and the
// host's Python 3.11 that pods run here.
var oldest = [3]int{3, 4, 0}

// sparkVersion is the Spark release an image reference names (normalized as Docker Hub's short
// names), when build.sh stands in for it: a tag of apache/spark or spark for Java 17 with Python
// or Scala, as apache/spark-docker tags them. The others are refused before anything is
// downloaded, saying why: R, Java 11 or 21, previews, releases before 3.4.
func sparkVersion(ref string) (string, error) {
	if strings.Contains(ref, "@") {
		return "", fmt.Errorf("%s: not found: images here are known by tag, not by digest", ref)
	}
	name, tag, _ := strings.Cut(ref, ":")
	if name != "apache/spark" && name != "spark" {
		return "", fmt.Errorf("%s: not found: this sandbox prepares the images apache/spark and spark only (hack/spark-images)", ref)
	}
	version, variant, _ := strings.Cut(tag, "-")
	release, err := parseRelease(version)
	if err != nil {
		return "", fmt.Errorf("%s: not found: the tag %q names no Spark release (X.Y.Z)", ref, tag)
	}
	if compareRelease(release, oldest) < 0 {
		return "", fmt.Errorf("%s: not found: this sandbox prepares Spark %d.%d.%d and later, which run on its Java 17 and Python 3.11", ref, oldest[0], oldest[1], oldest[2])
	}
	scala := "2.13"
	if release[0] == 3 {
		scala = "2.12"
	}
	full := "scala" + scala + "-java17"
	switch variant {
	case "", "python3", "scala", "java17", "java17-python3", "scala-java17", full + "-ubuntu", full + "-python3-ubuntu":
		return version, nil
	}
	parts := strings.Split(variant, "-")
	switch {
	case slices.Contains(parts, "r"):
		return "", fmt.Errorf("%s: not found: the R images are not prepared here; %s or %s-scala are", ref, version, version)
	case slices.Contains(parts, "java11") || slices.Contains(parts, "java21"):
		return "", fmt.Errorf("%s: not found: this sandbox runs Spark on Java 17 only; %s-java17 or %s-scala-java17 are prepared", ref, version, version)
	case strings.HasPrefix(variant, "preview") || strings.HasPrefix(variant, "rc"):
		return "", fmt.Errorf("%s: not found: only Spark releases are prepared, not previews", ref)
	case strings.HasPrefix(variant, "scala") && !strings.HasPrefix(variant, "scala-") && !strings.HasPrefix(variant, "scala"+scala+"-"):
		return "", fmt.Errorf("%s: not found: Spark %s is prepared with Scala %s, as its release on PyPI is built", ref, version, scala)
	}
	return "", fmt.Errorf("%s: not found: the tag %q is not one of apache/spark's for Java 17 (%s, %s-python3, %s-scala, %s-java17, %s-%s-python3-ubuntu, ...)", ref, tag, version, version, version, version, version, full)
}

// parseRelease reads a release version X.Y.Z.
func parseRelease(version string) ([3]int, error) {
	var release [3]int
	parts := strings.Split(version, ".")
	if len(parts) != 3 {
		return release, fmt.Errorf("%q is not X.Y.Z", version)
	}
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || strconv.Itoa(n) != part {
			return release, fmt.Errorf("%q is not X.Y.Z", version)
		}
		release[i] = n
	}
	return release, nil
}

func compareRelease(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return 0
}

// build runs script (build.sh or kubeflow-operator.sh) with args, reporting its steps and pip's
// download progress. Its error is the script's last "spark-images: " line, which says why in
// words.
func (b *Builder) build(ctx context.Context, script string, args []string, progress func(prockubelet.Progress)) error {
	cmd := exec.CommandContext(ctx, script, args...)
	dir, err := filepath.Abs(b.Dir)
	if err != nil {
		return err
	}
	cmd.Env = append(os.Environ(), "SPARK_IMAGES_DIR="+dir, "SPARK_IMAGES_PROGRESS=raw")
	// Its own process group, so that stopping the kubelet stops pip, tar and javac with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, in, err := os.Pipe()
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = in, in
	err = cmd.Start()
	in.Close()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("starting %s: %w", script, err)
	}
	logf := b.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	reason := readOutput(out, progress, logf)
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if reason != "" {
			return errors.New(reason)
		}
		return fmt.Errorf("%s %s: %w", script, strings.Join(args, " "), err)
	}
	return nil
}

// readOutput follows build.sh's output: "== <step>" lines and pip's "Progress <done> of <total>"
// lines go to progress, every line but pip's progress to logf. It returns the reason of the last
// "spark-images: <reason>" line, the script's error.
func readOutput(out *os.File, progress func(prockubelet.Progress), logf func(string, ...any)) string {
	step, reason := "", ""
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		line := scanner.Text()
		var done, total int64
		if n, _ := fmt.Sscanf(line, "Progress %d of %d", &done, &total); n == 2 {
			progress(prockubelet.Progress{Step: step, Done: done, Total: total})
			continue
		}
		logf("spark-images: %s", line)
		// Steps are "== <subject>: <action>"; the other "== " lines (where the build goes, how long
		// it took) are no progress.
		if s, ok := strings.CutPrefix(line, "== "); ok && strings.Contains(s, ": ") {
			step = s
			// "download pyspark-3.5.3.tar.gz: pip download ...": the download is the step.
			if what, _, ok := strings.Cut(s, ": pip download"); ok {
				step = what
			}
			progress(prockubelet.Progress{Step: step})
		}
		if r, ok := strings.CutPrefix(line, "spark-images: "); ok {
			reason = r
		}
	}
	return reason
}
