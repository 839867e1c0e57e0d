package mutate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestPodWithoutSpec: a patch cannot add to /spec/... of a pod that has no spec, so such a pod is
// allowed unchanged, through both decoding paths; an empty spec is patched as usual.
func TestPodWithoutSpec(t *testing.T) {
	policy, err := ParsePolicy([]byte("version: 1\nrules:\n- name: yunikorn\n  enforce: {schedulerName: yunikorn}\n"))
	require.NoError(t, err)
	const meta = `"apiVersion":"v1","kind":"Pod","metadata":{"name":"spark-pi-driver","labels":{"spark-role":"driver"}}`
	tests := []struct {
		name, object string
		patched      bool
	}{
		{"no spec", `{` + meta + `}`, false},
		{"null spec", `{` + meta + `,"spec":null}`, false},
		{"empty spec", `{` + meta + `,"spec":{}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &admissionv1.AdmissionRequest{
				UID: "uid-1", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "spark-jobs",
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(tt.object)},
			}
			resp, _ := Mutate(req, policy)
			assert.True(t, resp.Allowed, "Mutate: %v", resp.Result)
			assert.Equal(t, tt.patched, resp.Patch != nil, "Mutate: patch %s", resp.Patch)

			body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"uid-1",` +
				`"kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"spark-jobs","operation":"CREATE","object":` + tt.object + `}}`
			out, _, err := Review([]byte(body), policy)
			require.NoError(t, err)
			assert.True(t, out.Response.Allowed, "Review: %v", out.Response.Result)
			assert.Equal(t, tt.patched, out.Response.Patch != nil, "Review: patch %s", out.Response.Patch)
			if tt.patched {
				_, err := applyPatch([]byte(tt.object), out.Response.Patch)
				assert.NoError(t, err, "the patch applies to the pod as sent")
			}
		})
	}
}
