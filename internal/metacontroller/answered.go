package metacontroller

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LastAppliedAnnotation is where Metacontroller keeps a child as the hook answered it when it
// created or last updated the child.
const LastAppliedAnnotation = "metacontroller.k8s.io/last-applied-configuration"

// serverFields are the metadata fields the API server owns.
var serverFields = []string{
	"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "ownerReferences", "selfLink",
}

// AsAnswered is an observed child as the hook answered it, nil when it cannot be read. The
// last-applied annotation holds that answer, and answering it again byte for byte is what keeps
// Metacontroller from rewriting the child. A child without the annotation (made by an older
// Metacontroller, or by hand and adopted) comes back as observed, minus status, server-owned
// metadata and an annotation map left empty.
func AsAnswered(raw []byte) map[string]any {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil
	}
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if applied, ok := ann[LastAppliedAnnotation].(string); ok {
		var answered map[string]any
		if json.Unmarshal([]byte(applied), &answered) == nil && sameIdentity(answered, obj) {
			return answered
		}
	}
	delete(obj, "status")
	if md != nil {
		for _, f := range serverFields {
			delete(md, f)
		}
		delete(ann, LastAppliedAnnotation)
		if ann != nil && len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	return obj
}

// sameIdentity guards against an annotation copied from another object: the answer it records
// must be for the same kind and name.
func sameIdentity(a, b map[string]any) bool {
	name := func(o map[string]any) any {
		md, _ := o["metadata"].(map[string]any)
		return md["name"]
	}
	return a["kind"] == b["kind"] && a["apiVersion"] == b["apiVersion"] && name(a) != nil && name(a) == name(b)
}

// RecordedPod is a Pod as Metacontroller recorded it in its last-applied annotation, kept as the
// recorded bytes and answered again as they are. Of its content only the identity is decoded: kind
// and name, and the labels the caller's invariant reads, which L names as struct fields.
type RecordedPod[L any] struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name   string `json:"name"`
		Labels L      `json:"labels"`
	} `json:"metadata"`
	raw json.RawMessage
}

// GetName is the recorded Pod's name.
func (p *RecordedPod[L]) GetName() string { return p.Metadata.Name }

// MarshalJSON answers the Pod as recorded.
func (p *RecordedPod[L]) MarshalJSON() ([]byte, error) { return p.raw, nil }

// AnsweredPod is the Pod Metacontroller recorded in lastApplied, the last-applied annotation of
// the observed Pod name, nil when it holds no answer for that Pod. It decodes no more of the
// answer than its identity: the hooks answer it again on every sync of a running application,
// where decoding and encoding the whole Pod would cost more than the rest of the sync.
func AnsweredPod[L any](name, lastApplied string) *RecordedPod[L] {
	if lastApplied == "" {
		return nil
	}
	pod := &RecordedPod[L]{raw: json.RawMessage(lastApplied)}
	if json.Unmarshal(pod.raw, pod) != nil || pod.Kind != "Pod" || pod.Metadata.Name != name {
		return nil
	}
	return pod
}
