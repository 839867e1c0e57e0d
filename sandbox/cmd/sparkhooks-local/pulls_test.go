package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

func TestPullPrinter(t *testing.T) {
	const image, pod = "apache/spark:3.5.3", "default/spark-pi-driver"
	step := func(s string, done, total int64, elapsed time.Duration) prockubelet.PullReport {
		return prockubelet.PullReport{Image: image, Pod: pod, Progress: prockubelet.Progress{Step: s, Done: done, Total: total}, Elapsed: elapsed}
	}
	download := "download pyspark-3.5.3.tar.gz"
	for _, tc := range []struct {
		name    string
		reports []prockubelet.PullReport
		want    []string
	}{{
		name: "downloaded",
		reports: []prockubelet.PullReport{
			step(download, 0, 0, 0),
			step(download, 0, 300e6, time.Second),
			step(download, 10e6, 300e6, 2*time.Second), // the same tenth: not shown again
			step(download, 150e6, 300e6, 3*time.Second),
			step("layer spark-3.5.3: unpack the Spark distribution", 0, 0, 4*time.Second),
			{Image: image, Pod: pod, Elapsed: 20 * time.Second, Finished: true, Size: 348e6},
		},
		want: []string{
			"Pulling apache/spark:3.5.3 for default/spark-pi-driver: download pyspark-3.5.3.tar.gz (0s)",
			"Pulling apache/spark:3.5.3 for default/spark-pi-driver: download pyspark-3.5.3.tar.gz 0.0 MB of 300.0 MB (1s)",
			"Pulling apache/spark:3.5.3 for default/spark-pi-driver: download pyspark-3.5.3.tar.gz 150.0 MB of 300.0 MB (3s)",
			"Pulling apache/spark:3.5.3 for default/spark-pi-driver: layer spark-3.5.3: unpack the Spark distribution (4s)",
			"Pulled apache/spark:3.5.3 in 20s: 300.0 MB downloaded, image 348.0 MB.",
		},
	}, {
		name: "from the download cache",
		reports: []prockubelet.PullReport{
			{Image: image, Pod: pod, Elapsed: 7 * time.Second, Finished: true, Size: 348e6},
		},
		want: []string{"Pulled apache/spark:3.5.3 in 7s: from the download cache, image 348.0 MB."},
	}, {
		name: "failed",
		reports: []prockubelet.PullReport{
			{Image: image, Pod: pod, Elapsed: 2 * time.Second, Finished: true, Err: errors.New("checksum mismatch")},
		},
		want: []string{"Failed to pull apache/spark:3.5.3 after 2s: checksum mismatch (kubectl describe pod -n default spark-pi-driver)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			p := newPullPrinter(&out)
			for _, r := range tc.reports {
				p.report(r)
			}
			if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
