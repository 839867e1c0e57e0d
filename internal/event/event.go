// Package event holds what the hook decisions tell as Kubernetes Events: a value type with
// no client behind it, so that deriving an Event stays a pure function of a decision that goldens
// can pin. Recording them is package eventrec's job.
package event

import (
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Event types Kubernetes knows.
const (
	Normal  = corev1.EventTypeNormal
	Warning = corev1.EventTypeWarning
)

// MaxNote is the longest note events.k8s.io/v1 accepts; the API server refuses a longer one.
const MaxNote = 1024

// Event is one Kubernetes Event about a parent. Reason and Action are fixed words per
// transition, never built from the message, so that the recorder folds a repeat (a sync that
// Metacontroller retried or sent twice) into the series of the first.
type Event struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Action  string `json:"action"`
	Message string `json:"message"`
}

// New is an Event whose message is cut to what the API server accepts.
func New(typ, reason, action, msg string) Event {
	return Event{Type: typ, Reason: reason, Action: action, Message: Bound(msg, MaxNote)}
}

// Story is what one answered sync tells: the Events, and the object they are about.
type Story struct {
	Regarding corev1.ObjectReference
	Events    []Event
}

// Regarding is the reference Events about a parent carry. It leaves out the resourceVersion,
// which every status write changes: the recorder aggregates Events by reference, reason and
// action, and a repeat must match the first.
func Regarding(tm metav1.TypeMeta, om *metav1.ObjectMeta) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: tm.APIVersion,
		Kind:       tm.Kind,
		Namespace:  om.Namespace,
		Name:       om.Name,
		UID:        om.UID,
	}
}

// Bound cuts s to at most n bytes on a character boundary, marking the cut with an ellipsis.
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
