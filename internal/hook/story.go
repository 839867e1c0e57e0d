package hook

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/event"
)

// Teller tells the Events of one decision on a parent of status type S: a transition from the
// status the core decoded to the one it answered. It holds the parent's identity and observed
// status alone, so that a queued story keeps neither the request nor the answer's children.
type Teller[S any] struct {
	regarding corev1.ObjectReference
	observed  S
	events    func(observed, answered *S) []event.Event
}

// NewTeller keeps the parent's identity and its observed status, which the caller copies
// before the decision edits any of it in place.
func NewTeller[S any](tm metav1.TypeMeta, om *metav1.ObjectMeta, observed S, events func(observed, answered *S) []event.Event) Teller[S] {
	return Teller[S]{regarding: event.Regarding(tm, om), observed: observed, events: events}
}

// Story tells the Events once asked, off the answer's path; answered is the answer's status.
func (t Teller[S]) Story(answered any) func() (event.Story, error) {
	return func() (event.Story, error) {
		st, ok := answered.(*S)
		if !ok {
			return event.Story{}, fmt.Errorf("answered status is %T, not %T", answered, st)
		}
		return event.Story{Regarding: t.regarding, Events: t.events(&t.observed, st)}, nil
	}
}
