//go:build e2e

package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// SparkImages is the directory of the Spark images make spark-images prepared
// (SPARK_IMAGES_DIR, else the checkout's .cache/spark-images) and their table, its JVMs quick
// to start (QuickStartJVMs).
func SparkImages(repoRoot string) (dir string, table *prockubelet.ImageTable, err error) {
	dir = os.Getenv("SPARK_IMAGES_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot, ".cache", "spark-images")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", nil, err
	}
	table, err = prockubelet.LoadImageTable(filepath.Join(dir, "images.json"))
	if err != nil {
		return "", nil, fmt.Errorf("%w\nPrepare the local Spark images first: make spark-images", err)
	}
	return dir, QuickStartJVMs(table), nil
}

// quickStartEnv has a JVM compile with C1 only, the one way the suites' images differ from the
// stock ones: their applications are short, and on two cores the C2 compiler threads of a dozen
// JVMs cost about 40 % of their CPU (a SparkPi driver in local mode here: 8.4 CPU-seconds by
// default, 5.0 with C1 only; with 1000 tasks 15.3 and 9.5).
const quickStartEnv = "JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1"

// QuickStartJVMs is table with quickStartEnv in every image's environment.
func QuickStartJVMs(table *prockubelet.ImageTable) *prockubelet.ImageTable {
	images := table.All()
	for ref, image := range images {
		image.Env = append(slices.Clone(image.Env), quickStartEnv)
		images[ref] = image
	}
	return prockubelet.NewImageTable(images)
}

// QuickStartSource is an image source whose images' JVMs start as QuickStartJVMs' do.
type QuickStartSource struct{ prockubelet.ImageSource }

// Pull pulls ref from the source and adds quickStartEnv to its environment.
func (q QuickStartSource) Pull(ctx context.Context, ref string, progress func(prockubelet.Progress)) (prockubelet.Image, error) {
	image, err := q.ImageSource.Pull(ctx, ref, progress)
	image.Env = append(slices.Clone(image.Env), quickStartEnv)
	return image, err
}
