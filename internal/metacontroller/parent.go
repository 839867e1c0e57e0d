package metacontroller

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Parent is what DecodeParent checks of a decoded parent: its type, name and uid.
type Parent interface {
	GetObjectKind() schema.ObjectKind
	GetName() string
	GetUID() types.UID
}

// DecodeParent reads a request's parent with decode, its kind's decoder, and checks what every
// hook needs of it: that there is one, of the kind want (CheckParentType), with a name, and with
// a uid when needUID (the hooks that name children after it). A spec that does not decode is the
// user's error, which decode returns as field errors and the hooks report in the status; anything
// else wrong is a RequestError.
func DecodeParent[P Parent](raw json.RawMessage, want schema.GroupVersionKind, needUID bool, decode func([]byte) (P, field.ErrorList, error)) (P, field.ErrorList, error) {
	var none P
	if len(raw) == 0 || string(raw) == "null" {
		return none, nil, RequestErrorf("request has no parent")
	}
	p, specErrs, err := decode(raw)
	if err != nil {
		return none, nil, RequestErrorf("decode parent %s: %w", want.Kind, err)
	}
	var tm metav1.TypeMeta
	if kind, ok := p.GetObjectKind().(*metav1.TypeMeta); ok {
		tm = *kind
	}
	if err := CheckParentType(tm, want); err != nil {
		return none, nil, err
	}
	switch {
	case needUID && (p.GetName() == "" || p.GetUID() == ""):
		return none, nil, RequestErrorf("parent %s lacks metadata.name or metadata.uid", want.Kind)
	case p.GetName() == "":
		return none, nil, RequestErrorf("parent %s lacks metadata.name", want.Kind)
	}
	return p, specErrs, nil
}
