package eventrec

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"

	"github.com/sparkhooks/sparkhooks/internal/event"
)

var regarding = corev1.ObjectReference{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication",
	Namespace: "jobs", Name: "spark-pi", UID: "u-1"}

func story(events ...event.Event) Derive {
	return func() (event.Story, error) { return event.Story{Regarding: regarding, Events: events}, nil }
}

func counters() (*prometheus.CounterVec, *prometheus.CounterVec) {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "recorded"}, []string{"type", "reason"}),
		prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dropped"}, []string{"hook"})
}

// TestRecordsThroughTheAPIAndFoldsRepeats records through client-go's broadcaster into a fake
// API: the first Event is created, a repeat of it (a sync that decided the same transition
// again) becomes a series on the same object, as kubectl describe shows "(x2 over …)".
func TestRecordsThroughTheAPIAndFoldsRepeats(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, broadcaster.StartRecordingToSinkWithContext(ctx))
	defer broadcaster.Shutdown()
	recorded, dropped := counters()
	r := New(broadcaster.NewRecorder(runtime.NewScheme(), "sparkhooks"), Options{QueueLength: 8, Recorded: recorded, Dropped: dropped})
	go r.Run(ctx)

	submitted := event.New(event.Normal, "SparkApplicationSubmitted", "Submit", "attempt 1 submitted")
	r.Record("sparkapplication_sync", story(submitted))
	var list *eventsv1.EventList
	require.Eventually(t, func() bool {
		var err error
		list, err = client.EventsV1().Events("jobs").List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 1
	}, 5*time.Second, 10*time.Millisecond)
	got := list.Items[0]
	assert.Equal(t, "SparkApplicationSubmitted", got.Reason)
	assert.Equal(t, "Submit", got.Action)
	assert.Equal(t, event.Normal, got.Type)
	assert.Equal(t, "attempt 1 submitted", got.Note)
	assert.Equal(t, regarding, got.Regarding)
	assert.Equal(t, "sparkhooks", got.ReportingController)

	r.Record("sparkapplication_sync", story(submitted))
	require.Eventually(t, func() bool {
		list, err := client.EventsV1().Events("jobs").List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 1 && list.Items[0].Series != nil && list.Items[0].Series.Count == 2
	}, 5*time.Second, 10*time.Millisecond, "a repeat is a series on the first Event, not a second Event")
	assert.Equal(t, 2.0, testutil.ToFloat64(recorded.WithLabelValues(event.Normal, "SparkApplicationSubmitted")))
}

type countingRecorder struct{ notes chan string }

func (c countingRecorder) Eventf(_ runtime.Object, _ runtime.Object, _, _, _, note string, args ...any) {
	c.notes <- fmt.Sprintf(note, args...)
}

// TestRecordNeverBlocks: with no worker running, a full queue drops stories and counts them,
// and Record returns at once.
func TestRecordNeverBlocks(t *testing.T) {
	recorded, dropped := counters()
	r := New(countingRecorder{notes: make(chan string, 10)}, Options{QueueLength: 2, Recorded: recorded, Dropped: dropped})
	done := make(chan struct{})
	go func() {
		for range 5 {
			r.Record("sparkcluster_sync", story(event.New(event.Normal, "R", "A", "m")))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Record blocked on a full queue")
	}
	assert.Equal(t, 3.0, testutil.ToFloat64(dropped.WithLabelValues("sparkcluster_sync")))
}

// gate is a Limiter that says "wait" on notes and lets each caller through only on a grant, so
// the order of notes shows every Event waited for the limiter first.
type gate struct {
	notes  chan string
	grants chan struct{}
}

func (g gate) Wait(ctx context.Context) error {
	g.notes <- "wait"
	select {
	case <-g.grants:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestRunRateLimitsAndSurvivesAFailedDerivation: a story that cannot be derived is skipped, and
// every Event after it waits for the limiter before it is handed over.
func TestRunRateLimitsAndSurvivesAFailedDerivation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes := make(chan string, 10)
	limiter := gate{notes: notes, grants: make(chan struct{})}
	r := New(countingRecorder{notes: notes}, Options{QueueLength: 4, Limiter: limiter})
	r.Record("h", func() (event.Story, error) { return event.Story{}, errors.New("broken") })
	r.Record("h", story(event.New(event.Normal, "R", "A", "one"), event.New(event.Normal, "R", "A", "two"), event.New(event.Normal, "R", "A", "three")))
	go r.Run(ctx)
	next := func() string {
		select {
		case got := <-notes:
			return got
		case <-time.After(5 * time.Second):
			t.Fatal("nothing more was recorded")
			return ""
		}
	}
	for _, want := range []string{"one", "two", "three"} {
		require.Equal(t, "wait", next(), "the limiter is asked before %q", want)
		limiter.grants <- struct{}{}
		require.Equal(t, want, next())
	}
}
