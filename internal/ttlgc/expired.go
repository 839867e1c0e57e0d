// Package ttlgc deletes SparkApplications whose time to live is over. Metacontroller cannot
// delete a parent, so the sync hook only decides expiry (the Expired condition) and releases the
// children; this package removes the SparkApplication itself, from outside the hooks (sparkhooks
// gc), in one pass (Run) or as each expires (Watch). It decides nothing about time: an application
// is deleted only when the status the hook wrote for its current spec says it expired.
package ttlgc

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// ConditionExpired is the condition the sync hook sets to True once an application's time to
// live has run out.
const ConditionExpired = "Expired"

// Target is an expired SparkApplication, pinned to the object that was listed: the deletion is
// made only if that object is still the one stored.
type Target struct {
	Namespace       string
	Name            string
	UID             types.UID
	ResourceVersion string
	// Reason and Message are the Expired condition's; the message says whether the spec's
	// timeToLiveSeconds or the operator default ran out.
	Reason  string
	Message string
}

// Expired returns the listed SparkApplications to delete, in list order.
func Expired(apps []unstructured.Unstructured) []Target {
	var out []Target
	for i := range apps {
		if t, ok := expired(&apps[i]); ok {
			out = append(out, t)
		}
	}
	return out
}

func expired(app *unstructured.Unstructured) (Target, bool) {
	if app.GetDeletionTimestamp() != nil {
		// Already being deleted (Metacontroller's finalize hook may still be running).
		return Target{}, false
	}
	conds, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conds {
		cond, ok := c.(map[string]any)
		if !ok {
			continue
		}
		typ, _, _ := unstructured.NestedString(cond, "type")
		if typ != ConditionExpired {
			continue
		}
		status, _, _ := unstructured.NestedString(cond, "status")
		gen, _, _ := unstructured.NestedInt64(cond, "observedGeneration")
		// A condition written for an older generation judged an older spec: the user may have
		// raised or removed timeToLiveSeconds since, and the hook has not answered yet.
		if status != "True" || gen != app.GetGeneration() {
			return Target{}, false
		}
		reason, _, _ := unstructured.NestedString(cond, "reason")
		msg, _, _ := unstructured.NestedString(cond, "message")
		return Target{
			Namespace:       app.GetNamespace(),
			Name:            app.GetName(),
			UID:             app.GetUID(),
			ResourceVersion: app.GetResourceVersion(),
			Reason:          reason,
			Message:         msg,
		}, true
	}
	return Target{}, false
}
