// Package eventrec records the Events of answered syncs as events.k8s.io/v1 Events, with
// client-go's events recorder (which folds repeats into series). It stands between the hooks and
// that recorder so that telling the story never costs a sync anything: a hook hands over a
// function that derives the Events, which a worker calls later; a full queue drops the story
// rather than wait, and a rate limit keeps the writes, and the goroutines the recorder starts
// for them, bounded while the API server is slow.
package eventrec

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/events"

	"github.com/sparkhooks/sparkhooks/internal/event"
)

// Derive tells the Events of one answered sync. An alias, so that a Recorder satisfies
// interfaces that spell the function type out (hooks.EventRecorder) without importing this.
type Derive = func() (event.Story, error)

// Options tune a Recorder.
type Options struct {
	// QueueLength is how many answered syncs may wait for their Events to be derived.
	QueueLength int
	// Limiter bounds the Events handed to the recorder, and so the API writes: Run waits on it
	// before each Event. Nil means no bound.
	Limiter Limiter
	// Recorded counts Events by type and reason; Dropped counts stories dropped by hook.
	Recorded *prometheus.CounterVec
	Dropped  *prometheus.CounterVec
	Logger   *slog.Logger
}

// Limiter is the part of client-go's flowcontrol.RateLimiter a Recorder uses (its token bucket
// in production, a fake in tests, so no test measures the wall clock).
type Limiter interface {
	Wait(ctx context.Context) error
}

// Recorder queues stories and records them on one worker.
type Recorder struct {
	rec  events.EventRecorder
	jobs chan job
	opts Options
}

type job struct {
	hook   string
	derive Derive
}

// New returns a Recorder writing through rec; Run starts its worker.
func New(rec events.EventRecorder, opts Options) *Recorder {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Recorder{
		rec:  rec,
		jobs: make(chan job, max(opts.QueueLength, 1)),
		opts: opts,
	}
}

// Record queues the story of a sync hook has answered. It never blocks: when the queue is full
// the story is dropped and counted.
func (r *Recorder) Record(hook string, derive Derive) {
	select {
	case r.jobs <- job{hook: hook, derive: derive}:
	default:
		if r.opts.Dropped != nil {
			r.opts.Dropped.WithLabelValues(hook).Inc()
		}
	}
}

// Run derives and records the queued stories until ctx ends.
func (r *Recorder) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-r.jobs:
			r.tell(ctx, j)
		}
	}
}

func (r *Recorder) tell(ctx context.Context, j job) {
	story, err := j.derive()
	if err != nil {
		// The hook answered this request, so it decoded; an error here is a bug to see.
		r.opts.Logger.LogAttrs(ctx, slog.LevelError, "derive events", slog.String("hook", j.hook), slog.String("error", err.Error()))
		return
	}
	for _, e := range story.Events {
		if r.opts.Limiter != nil {
			if err := r.opts.Limiter.Wait(ctx); err != nil {
				return
			}
		}
		ref := story.Regarding
		r.rec.Eventf(&ref, nil, e.Type, e.Reason, e.Action, "%s", e.Message)
		if r.opts.Recorded != nil {
			r.opts.Recorded.WithLabelValues(e.Type, e.Reason).Inc()
		}
	}
}
