package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// pullPrinter shows the kubelet's image pulls on the sandbox's terminal, one line per pull: on a
// terminal that line is rewritten as the pull goes, elsewhere (a log, a pipe) a line is printed
// per step and per tenth of a download.
type pullPrinter struct {
	w   io.Writer
	tty bool

	mu sync.Mutex
	// shown is the last line printed of each pull; downloaded the size of its download.
	shown      map[string]string
	downloaded map[string]int64
}

func newPullPrinter(w io.Writer) *pullPrinter {
	return &pullPrinter{w: w, tty: isTerminal(w), shown: map[string]string{}, downloaded: map[string]int64{}}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

func (p *pullPrinter) report(r prockubelet.PullReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Finished {
		line := p.finished(r)
		if p.tty {
			fmt.Fprintf(p.w, "\r\033[K%s\n", line)
		} else {
			fmt.Fprintln(p.w, line)
		}
		delete(p.shown, r.Image)
		delete(p.downloaded, r.Image)
		return
	}
	if r.Total > 0 {
		p.downloaded[r.Image] = r.Total
	}
	line, key := progressLine(r)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	// Elsewhere only what changed: a new step, or the download's next tenth.
	if p.shown[r.Image] != key {
		p.shown[r.Image] = key
		fmt.Fprintln(p.w, line)
	}
}

// progressLine is the line of a pull in progress, and what identifies it apart from the time.
func progressLine(r prockubelet.PullReport) (line, key string) {
	what := r.Step
	if len(what) > 90 {
		what = what[:87] + "..."
	}
	key = what
	if r.Total > 0 {
		what = fmt.Sprintf("%s %s of %s", what, megabytes(r.Done), megabytes(r.Total))
		key = fmt.Sprintf("%s %d", r.Step, 10*r.Done/r.Total)
	}
	return fmt.Sprintf("Pulling %s for %s: %s (%s)", r.Image, r.Pod, what, r.Elapsed.Round(time.Second)), key
}

func (p *pullPrinter) finished(r prockubelet.PullReport) string {
	if r.Err != nil {
		return fmt.Sprintf("Failed to pull %s after %s: %v (kubectl describe pod -n %s)", r.Image, r.Elapsed.Round(time.Second), r.Err, podRef(r.Pod))
	}
	from := "from the download cache"
	if n := p.downloaded[r.Image]; n > 0 {
		from = megabytes(n) + " downloaded"
	}
	return fmt.Sprintf("Pulled %s in %s: %s, image %s.", r.Image, r.Elapsed.Round(time.Second), from, megabytes(r.Size))
}

// podRef turns namespace/name into kubectl's "namespace name".
func podRef(pod string) string {
	if namespace, name, ok := strings.Cut(pod, "/"); ok {
		return namespace + " " + name
	}
	return pod
}

func megabytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
