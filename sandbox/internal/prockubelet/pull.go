package prockubelet

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ImageSource prepares images the table does not have yet, as a registry serves a kubelet's pull.
type ImageSource interface {
	// Pull prepares the image ref names (normalized as Docker Hub's short names: "spark:3.5.3",
	// "apache/spark:4.0.1") and returns it, reporting its steps to progress. Its error says why
	// in words a user can act on: it becomes the pod's ErrImagePull message.
	Pull(ctx context.Context, ref string, progress func(Progress)) (Image, error)
}

// Progress is what a pull is doing: a step, and for a download the bytes so far and in all
// (Total 0 when unknown).
type Progress struct {
	Step        string
	Done, Total int64
}

// PullReport is a pull's progress as the kubelet reports it, for a terminal to show.
type PullReport struct {
	// Image is the reference pulled; Pod is the pod (namespace/name) that asked for it first.
	Image, Pod string
	Progress
	// Elapsed is the time since the pull began.
	Elapsed time.Duration
	// Finished marks the last report of a pull; then Err is its failure, or Size the image's.
	Finished bool
	Size     int64
	Err      error
}

// imageStore is the kubelet's images: the table, and the pulls of what it lacks. Pods that name
// an image being pulled wait for that pull; pulls run one at a time, as a kubelet's
// serializeImagePulls (its default) runs them.
type imageStore struct {
	// ctx is the kubelet's lifetime: a pull outlives the pod that asked for it (others may be
	// waiting, and a download stopped half-way is lost) but not the kubelet.
	ctx    context.Context
	source ImageSource
	report func(PullReport)
	now    func() time.Time

	mu     sync.Mutex
	table  *ImageTable
	pulls  map[string]*pull
	serial sync.Mutex
}

// pull is one pull in flight; done is closed when image or err is set.
type pull struct {
	done  chan struct{}
	image Image
	err   error
	// took is how long the pull itself ran, without waiting for others.
	took time.Duration
}

func newImageStore(ctx context.Context, table *ImageTable, source ImageSource, report func(PullReport), now func() time.Time) *imageStore {
	if report == nil {
		report = func(PullReport) {}
	}
	return &imageStore{ctx: ctx, source: source, report: report, now: now, table: table, pulls: map[string]*pull{}}
}

// lookup finds an image that is present.
func (s *imageStore) lookup(ref string) (Image, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.table.Lookup(ref)
}

// errNoSource is a pull's error when nothing can prepare images: the table is all there is.
type errNoSource string

func (e errNoSource) Error() string {
	return fmt.Sprintf("%s: not found in the local image table", string(e))
}

// pull returns the image ref names, pulling it if it is not present, and how long the pull took
// itself. It returns early, with errPodEnding, if ending is closed first; the pull goes on for
// the pods still waiting and for the next pod that names the image. pod names the pod asking.
func (s *imageStore) pull(ref, pod string, ending <-chan struct{}) (Image, time.Duration, error) {
	image, p, err := s.join(ref, pod)
	if p == nil {
		return image, 0, err
	}
	return p.wait(ending)
}

// wait returns the pull's outcome once it has one, or errPodEnding once ending is closed.
func (p *pull) wait(ending <-chan struct{}) (Image, time.Duration, error) {
	select {
	case <-p.done:
		return p.image, p.took, p.err
	case <-ending:
		return Image{}, 0, errPodEnding
	}
}

// join returns the image if it is present, else the pull to wait for: the one in flight, or a
// new one.
func (s *imageStore) join(ref, pod string) (Image, *pull, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if image, ok := s.table.Lookup(ref); ok {
		return image, nil, nil
	}
	if s.source == nil {
		return Image{}, nil, errNoSource(ref)
	}
	key := normalizeImage(ref)
	p, ok := s.pulls[key]
	if !ok {
		p = &pull{done: make(chan struct{})}
		s.pulls[key] = p
		go s.run(key, pod, p)
	}
	return Image{}, p, nil
}

// run pulls key for p once the pulls before it have finished.
func (s *imageStore) run(key, pod string, p *pull) {
	s.serial.Lock()
	began := s.now()
	image, err := s.source.Pull(s.ctx, key, func(progress Progress) {
		s.report(PullReport{Image: key, Pod: pod, Progress: progress, Elapsed: s.now().Sub(began)})
	})
	p.took = s.now().Sub(began)
	s.serial.Unlock()
	s.report(PullReport{Image: key, Pod: pod, Elapsed: p.took, Finished: true, Size: image.Size, Err: err})

	s.mu.Lock()
	if err == nil {
		s.table = s.table.With(map[string]Image{key: image})
	}
	delete(s.pulls, key)
	s.mu.Unlock()
	p.image, p.err = image, err
	close(p.done)
}
