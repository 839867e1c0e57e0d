package prockubelet

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeSource prepares images when the test releases them, and records how it was called.
type fakeSource struct {
	release chan error // one value per pull: nil prepares the image, an error fails it

	mu      sync.Mutex
	calls   []string
	running int
	overlap bool // two pulls ran at once
}

func (f *fakeSource) Pull(ctx context.Context, ref string, progress func(Progress)) (Image, error) {
	f.mu.Lock()
	f.calls = append(f.calls, ref)
	f.running++
	f.overlap = f.overlap || f.running > 1
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	progress(Progress{Step: "download", Done: 1, Total: 2})
	select {
	case err := <-f.release:
		if err != nil {
			return Image{}, err
		}
		return Image{Root: "/layers/" + ref, Size: 42}, nil
	case <-ctx.Done():
		return Image{}, ctx.Err()
	}
}

func (f *fakeSource) callsSoFar() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// result is what one pull call returned.
type result struct {
	image Image
	err   error
}

// startPull asks for ref, joining or starting its pull before it returns, and sends what the
// pull returned once it has.
func startPull(s *imageStore, ref, pod string, ending <-chan struct{}) <-chan result {
	out := make(chan result, 1)
	image, p, err := s.join(ref, pod)
	if p == nil {
		out <- result{image, err}
		return out
	}
	go func() {
		image, _, err := p.wait(ending)
		out <- result{image, err}
	}()
	return out
}

func waitCalls(t *testing.T, f *fakeSource, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(f.callsSoFar()) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("the source was called %d times, want %d", len(f.callsSoFar()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func receive(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the pull did not return")
		return result{}
	}
}

func TestPullsOfOneImageShareOneDownload(t *testing.T) {
	source := &fakeSource{release: make(chan error)}
	var mu sync.Mutex
	var reports []PullReport
	store := newImageStore(t.Context(), NewImageTable(nil), source, func(r PullReport) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, r)
	}, time.Now)

	// The same image under two spellings, asked for by two pods.
	first := startPull(store, "spark:3.5.3", "default/a", nil)
	waitCalls(t, source, 1)
	second := startPull(store, "docker.io/library/spark:3.5.3", "default/b", nil)
	source.release <- nil
	for _, r := range []result{receive(t, first), receive(t, second)} {
		if r.err != nil || r.image.Root != "/layers/spark:3.5.3" {
			t.Errorf("pull = %+v, %v; want the one image", r.image, r.err)
		}
	}
	if calls := source.callsSoFar(); len(calls) != 1 || calls[0] != "spark:3.5.3" {
		t.Errorf("the source was called with %q, want once with the normalized reference", calls)
	}
	if _, ok := store.lookup("spark:3.5.3"); !ok {
		t.Error("the pulled image is not present afterwards")
	}
	if image, _, err := store.pull("spark:3.5.3", "default/c", nil); err != nil || image.Root != "/layers/spark:3.5.3" {
		t.Errorf("a present image: %+v, %v", image, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 2 || reports[0].Step != "download" || reports[0].Pod != "default/a" || reports[0].Image != "spark:3.5.3" {
		t.Fatalf("reports = %+v, want the download's progress, then the end", reports)
	}
	if last := reports[1]; !last.Finished || last.Size != 42 || last.Err != nil {
		t.Errorf("the last report = %+v, want finished with the size", last)
	}
}

func TestPullsRunOneAtATime(t *testing.T) {
	source := &fakeSource{release: make(chan error)}
	store := newImageStore(t.Context(), NewImageTable(nil), source, nil, time.Now)
	a := startPull(store, "apache/spark:3.5.3", "default/a", nil)
	b := startPull(store, "apache/spark:4.0.1", "default/b", nil)
	waitCalls(t, source, 1)
	time.Sleep(20 * time.Millisecond) // room for a second pull to start, which it must not
	if calls := source.callsSoFar(); len(calls) != 1 {
		t.Fatalf("calls before the first pull ended: %q", calls)
	}
	source.release <- nil
	source.release <- nil
	receive(t, a)
	receive(t, b)
	if source.overlap {
		t.Error("two pulls ran at once")
	}
}

func TestFailedPullIsEveryWaitersAndTriedAgain(t *testing.T) {
	source := &fakeSource{release: make(chan error, 2)}
	store := newImageStore(t.Context(), NewImageTable(nil), source, nil, time.Now)
	mismatch := errors.New("checksum mismatch")
	first := startPull(store, "apache/spark:3.5.3", "default/a", nil)
	waitCalls(t, source, 1)
	second := startPull(store, "apache/spark:3.5.3", "default/b", nil)
	source.release <- mismatch
	for _, r := range []result{receive(t, first), receive(t, second)} {
		if !errors.Is(r.err, mismatch) {
			t.Errorf("err = %v, want the source's", r.err)
		}
	}
	source.release <- nil
	if r := receive(t, startPull(store, "apache/spark:3.5.3", "default/a", nil)); r.err != nil {
		t.Errorf("the next try: %v", r.err)
	}
	if calls := source.callsSoFar(); len(calls) != 2 {
		t.Errorf("the source was called %d times, want 2 (the failure, the next try)", len(calls))
	}
}

func TestPullOutlivesThePodThatAsked(t *testing.T) {
	source := &fakeSource{release: make(chan error, 1)}
	store := newImageStore(t.Context(), NewImageTable(nil), source, nil, time.Now)
	ending := make(chan struct{})
	asked := startPull(store, "apache/spark:3.5.3", "default/a", ending)
	waitCalls(t, source, 1)
	close(ending)
	if r := receive(t, asked); !errors.Is(r.err, errPodEnding) {
		t.Fatalf("a pod that ended: %v, want errPodEnding", r.err)
	}
	source.release <- nil
	if r := receive(t, startPull(store, "apache/spark:3.5.3", "default/b", nil)); r.err != nil {
		t.Fatal(r.err)
	}
	if calls := source.callsSoFar(); len(calls) != 1 {
		t.Errorf("the source was called %d times, want once: the pull went on", len(calls))
	}
}

func TestPullWithoutSource(t *testing.T) {
	store := newImageStore(t.Context(), NewImageTable(map[string]Image{"apache/spark:3.5.3": {Root: "/a"}}), nil, nil, time.Now)
	for _, tc := range []struct {
		ref, wantErr string
	}{
		{"apache/spark:3.5.3", ""},
		{"apache/spark:9.9.9", "apache/spark:9.9.9: not found in the local image table"},
	} {
		_, _, err := store.pull(tc.ref, "default/a", nil)
		if got := errString(err); got != tc.wantErr {
			t.Errorf("pull(%s) = %q, want %q", tc.ref, got, tc.wantErr)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
