package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// DecodeSparkConnect reads a SparkConnect as the API server stores it. Its pod templates are
// schemaless, so a spec may not decode; that comes back as field errors next to the object, as
// for v1beta2.DecodeSparkApplication.
func DecodeSparkConnect(raw []byte) (*SparkConnect, field.ErrorList, error) {
	// The common case, a spec that decodes, in one pass.
	if obj := new(SparkConnect); json.Unmarshal(raw, obj) == nil {
		return obj, nil, nil
	}
	var stored struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              json.RawMessage    `json:"spec"`
		Status            SparkConnectStatus `json:"status,omitempty"`
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, nil, err
	}
	sc := &SparkConnect{TypeMeta: stored.TypeMeta, ObjectMeta: stored.ObjectMeta, Status: stored.Status}
	return sc, v1beta2.DecodeSpec(stored.Spec, &sc.Spec), nil
}
