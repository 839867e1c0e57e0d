package metacontroller

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDecodeParent(t *testing.T) {
	want := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	decode := func(raw []byte) (*metav1.PartialObjectMetadata, field.ErrorList, error) {
		p := &metav1.PartialObjectMetadata{}
		if err := json.Unmarshal(raw, p); err != nil {
			return nil, nil, err
		}
		var specErrs field.ErrorList
		if p.Labels["spec"] == "bad" {
			specErrs = field.ErrorList{field.Invalid(field.NewPath("spec"), "bad", "does not decode")}
		}
		return p, specErrs, nil
	}
	tests := []struct {
		name     string
		raw      string
		needUID  bool
		wantErr  string
		specErrs int
	}{
		{name: "no parent", raw: ``, wantErr: "request has no parent"},
		{name: "null parent", raw: `null`, wantErr: "request has no parent"},
		{name: "not JSON", raw: `{`, wantErr: "decode parent Widget"},
		{name: "another kind", raw: `{"kind":"Gadget","metadata":{"name":"w"}}`, wantErr: "parent is a Gadget, want Widget"},
		{name: "another version", raw: `{"apiVersion":"example.com/v2","metadata":{"name":"w"}}`, wantErr: "apiVersion example.com/v2"},
		{name: "no name", raw: `{"metadata":{"uid":"u"}}`, wantErr: "parent Widget lacks metadata.name"},
		{name: "no uid, needed", raw: `{"metadata":{"name":"w"}}`, needUID: true, wantErr: "lacks metadata.name or metadata.uid"},
		{name: "no uid, not needed", raw: `{"metadata":{"name":"w"}}`},
		{name: "kind and version implied", raw: `{"metadata":{"name":"w","uid":"u"}}`, needUID: true},
		{name: "spec errors are the user's", raw: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"spec":"bad"}}}`, specErrs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, specErrs, err := DecodeParent(json.RawMessage(tt.raw), want, tt.needUID, decode)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				var reqErr *RequestError
				assert.True(t, errors.As(err, &reqErr), "a RequestError")
				assert.Nil(t, p)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "w", p.Name)
			assert.Len(t, specErrs, tt.specErrs)
		})
	}
}
