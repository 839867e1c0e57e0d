package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/httpbench"
)

const mutateTestdata = "../testdata/mutate"

func readMutateCase(t testing.TB, name string) ([]byte, *mutate.Policy) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(mutateTestdata, name, "review.json"))
	require.NoError(t, err)
	var policy *mutate.Policy
	if path := filepath.Join(mutateTestdata, name, "policy.yaml"); fileExists(path) {
		policy, err = mutate.LoadPolicy(path)
		require.NoError(t, err)
	}
	return body, policy
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestMutateHandler(t *testing.T) {
	typical, typicalPolicy := readMutateCase(t, "typical-executor")
	privileged, guardPolicy := readMutateCase(t, "guardrail-privileged")
	tests := []struct {
		name          string
		method        string
		body          []byte
		policy        *mutate.Policy
		wantCode      int
		wantAllowed   bool
		wantPatch     bool
		wantMutations []string
		wantDenials   []string
		wantError     string
	}{
		{
			name: "typical executor", method: http.MethodPost, body: typical, policy: typicalPolicy,
			wantCode: 200, wantAllowed: true, wantPatch: true,
			wantMutations: []string{"env", "volumes", "volumeMounts", "schedulerName", "yunikorn", "priorityClassName", "nodeSelector", "tolerations", "labels", "annotations"},
		},
		{
			name: "same review without a policy applies only the customization", method: http.MethodPost, body: typical,
			wantCode: 200, wantAllowed: true, wantPatch: true,
			wantMutations: []string{"env", "volumes", "volumeMounts"},
		},
		{
			name: "refused by a guardrail", method: http.MethodPost, body: privileged, policy: guardPolicy,
			wantCode: 200, wantAllowed: false, wantDenials: []string{"restricted"},
		},
		{name: "garbage", method: http.MethodPost, body: []byte("not json"), wantCode: 400, wantError: "body is not an AdmissionReview"},
		{name: "empty", method: http.MethodPost, body: nil, wantCode: 400, wantError: "body is not an AdmissionReview"},
		{name: "wrong version", method: http.MethodPost, body: []byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}`), wantCode: 400, wantError: "admissionReviewVersions"},
		{name: "too large", method: http.MethodPost, body: bytes.Repeat([]byte(" "), 2<<20), wantCode: 413, wantError: "1048576-byte limit"},
		{name: "wrong method", method: http.MethodGet, wantCode: 405, wantError: "method not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New()
			h := NewMutateHandler(mutate.StaticPolicy{P: tt.policy}, nil, m)
			req := httptest.NewRequest(tt.method, MutatePath, bytes.NewReader(tt.body))
			rec := httptest.NewRecorder()
			req.Body = http.MaxBytesReader(rec, req.Body, 1<<20)
			h.ServeHTTP(rec, req)

			require.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			assertCounted(t, m.Mutations, tt.wantMutations)
			assertCounted(t, m.AdmissionDenials, tt.wantDenials)
			if tt.wantError != "" {
				var e struct{ Error string }
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
				assert.Contains(t, e.Error, tt.wantError)
				return
			}
			var out admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			var in admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(tt.body, &in))
			assert.Equal(t, "admission.k8s.io/v1", out.APIVersion)
			assert.Equal(t, "AdmissionReview", out.Kind)
			require.NotNil(t, out.Response)
			assert.Equal(t, in.Request.UID, out.Response.UID)
			assert.Equal(t, tt.wantAllowed, out.Response.Allowed)
			assert.Equal(t, tt.wantPatch, len(out.Response.Patch) > 0)
		})
	}
}

// switchingSource changes policy between requests, like a reloaded policy file.
type switchingSource struct {
	mu sync.Mutex
	p  *mutate.Policy
}

func (s *switchingSource) Policy() *mutate.Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p
}

func (s *switchingSource) set(p *mutate.Policy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p = p
}

func TestMutateHandlerUsesThePolicyInForce(t *testing.T) {
	body, _ := readMutateCase(t, "policy-scheduler-name-default")
	yunikorn, err := mutate.ParsePolicy([]byte("version: 1\nrules:\n- name: a\n  defaults: {schedulerName: yunikorn}\n"))
	require.NoError(t, err)
	volcano, err := mutate.ParsePolicy([]byte("version: 1\nrules:\n- name: a\n  defaults: {schedulerName: volcano}\n"))
	require.NoError(t, err)
	src := &switchingSource{p: yunikorn}
	h := NewMutateHandler(src, nil, nil)

	patchOf := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, MutatePath, bytes.NewReader(body)))
		require.Equal(t, http.StatusOK, rec.Code)
		var out admissionv1.AdmissionReview
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return string(out.Response.Patch)
	}
	assert.Contains(t, patchOf(), `"yunikorn"`)
	src.set(volcano)
	assert.Contains(t, patchOf(), `"volcano"`)
}

// BenchmarkMutateHTTP sends the typical executor review to the handler over loopback HTTP with
// keep-alive, as the API server does, and reports the 50th and 99th percentile round trip.
func BenchmarkMutateHTTP(b *testing.B) {
	body, policy := readMutateCase(b, "typical-executor")
	srv := httptest.NewServer(NewMutateHandler(mutate.StaticPolicy{P: policy}, nil, metrics.New()))
	defer srv.Close()
	client := srv.Client()
	url := srv.URL + MutatePath

	httpbench.Post(b, client, url, body, `"patch"`)
}

// assertCounted checks that the counter holds one series per label of want, counting its
// occurrences, and no other.
func assertCounted(t *testing.T, counter *prometheus.CounterVec, want []string) {
	t.Helper()
	counts := map[string]int{}
	for _, label := range want {
		counts[label]++
	}
	assert.Equal(t, len(counts), testutil.CollectAndCount(counter))
	for label, n := range counts {
		assert.Equal(t, float64(n), testutil.ToFloat64(counter.WithLabelValues(label)), label)
	}
}
