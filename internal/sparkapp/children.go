package sparkapp

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/driver"
)

// activeChildren sets the desired children of a running attempt: everything built for it, or,
// when the spec can no longer be built (edited into an invalid state mid-run), the observed
// children as they are. withDriver false leaves out a driver Pod that has vanished, so that it
// is not silently created again.
func (d *decider) activeChildren(withDriver bool) {
	if objs := d.currentObjects(); objs != nil {
		list := objs.List()
		d.children = make([]any, 0, len(list))
		for _, obj := range list {
			if !withDriver && obj == any(objs.DriverPod) {
				continue
			}
			if obj == any(objs.ConfigMap) {
				if kept := d.attemptConfigMap(objs.ConfigMap.Name); kept != nil {
					obj = kept
				}
			}
			d.children = append(d.children, obj)
		}
		return
	}
	d.children = d.observedChildren(func(key string, pod *podView) bool {
		return key != keyPod || (withDriver && pod.Metadata.Labels[driver.LabelSubmissionID] == d.status.SubmissionID)
	})
}

// currentObjects rebuilds the objects of the current attempt from the spec, nil when the spec
// is invalid or is no longer the one the attempt was submitted with.
func (d *decider) currentObjects() *driver.Objects {
	if d.invalid != "" || d.status.SubmittedSpecHash != d.hash || d.status.SubmissionID == "" {
		return nil
	}
	sub := driver.Submission{
		Attempt:      d.status.SubmissionAttempts,
		SubmissionID: d.status.SubmissionID,
		AppID:        d.status.SparkApplicationID,
	}
	objs, err := driver.Build(d.spec, sub, d.buildOptions())
	if err != nil {
		return nil
	}
	return objs
}

// attemptConfigMap returns the observed ConfigMap of the current submission when it has another
// name than the one built now: a sparkhooks release that writes different properties would
// otherwise replace the ConfigMap under a running driver (its content-addressed name changes).
// The driver read its properties at start, so the attempt keeps the ConfigMap it started with.
func (d *decider) attemptConfigMap(built string) any {
	for _, name := range d.in.children.Names(keyConfigMap) {
		if name == built {
			return nil
		}
	}
	var kept any
	for _, obj := range d.observedChildren(func(key string, _ *podView) bool { return key == keyConfigMap }) {
		md, _ := obj.(map[string]any)["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		if sub, _ := labels[driver.LabelSubmissionID].(string); sub == d.status.SubmissionID && sub != "" {
			kept = obj
		}
	}
	return kept
}

// serverFields are the metadata fields the API server owns; a kept child is returned without
// them, as if it were built anew.
var serverFields = []string{
	"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "ownerReferences", "selfLink",
}

// observedChildren returns the observed children that keep passes, stripped of status and
// server-owned metadata, in a fixed order. Pods are passed to keep decoded; other kinds with a
// nil Pod.
func (d *decider) observedChildren(keep func(key string, pod *podView) bool) []any {
	var out []any
	for _, key := range childKeys {
		for _, name := range d.in.children.Names(key) {
			var pod *podView
			if key == keyPod {
				pod = d.findDriver(name)
				if pod == nil {
					continue
				}
			}
			if !keep(key, pod) {
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(d.in.children[key][name], &obj); err != nil {
				continue
			}
			delete(obj, "status")
			if md, ok := obj["metadata"].(map[string]any); ok {
				for _, f := range serverFields {
					delete(md, f)
				}
				if ann, ok := md["annotations"].(map[string]any); ok {
					delete(ann, "metacontroller.k8s.io/last-applied-configuration")
				}
			}
			out = append(out, obj)
		}
	}
	return out
}

func (d *decider) findDriver(name string) *podView {
	for _, pod := range d.in.drivers {
		if pod.Metadata.Name == name {
			return pod
		}
	}
	return nil
}

func terminatedPod(pod *podView) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// checkDriversKept refuses an answer that would delete, or leave in place under another
// identity, a live driver Pod the observed status does not account for. Such a Pod means the
// request is stale or the Pod is not ours to judge; Metacontroller will ask again.
func (d *decider) checkDriversKept() error {
	desired := map[string]string{}
	for _, obj := range d.children {
		if pod, ok := obj.(*corev1.Pod); ok {
			desired[pod.Name] = pod.Labels[driver.LabelSubmissionID]
		} else if m, ok := obj.(map[string]any); ok && m["kind"] == "Pod" {
			if md, ok := m["metadata"].(map[string]any); ok {
				name, _ := md["name"].(string)
				desired[name] = d.status.SubmissionID
			}
		}
	}
	known := d.knownSubmission
	for _, pod := range d.in.drivers {
		if terminatedPod(pod) || pod.Metadata.DeletionTimestamp != nil {
			continue
		}
		sub := pod.Metadata.Labels[driver.LabelSubmissionID]
		want, kept := desired[pod.Metadata.Name]
		switch {
		case kept && want == sub:
		case !kept && sub == known && known != "":
			// The decision gives up the attempt the status describes: deliberate.
		default:
			return fmt.Errorf("refusing to decide: running driver Pod %s belongs to submission %q, which status (submission %q) does not account for; the request may be stale",
				pod.Metadata.Name, sub, known)
		}
	}
	return nil
}
