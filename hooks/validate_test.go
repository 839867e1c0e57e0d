package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/httpbench"
)

const validateTestdata = "../testdata/validate"

func readValidateCase(t testing.TB, route, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(validateTestdata, route, name, "review.json"))
	require.NoError(t, err)
	return body
}

func TestValidateRoutes(t *testing.T) {
	sparkApp := ValidatePath("SparkApplication")
	scheduled := ValidatePath("ScheduledSparkApplication")
	assert.Equal(t, "/sparkapplication/validate", sparkApp)
	assert.Equal(t, "/scheduledsparkapplication/validate", scheduled)

	tests := []struct {
		name, path  string
		method      string
		body        []byte
		wantCode    int
		wantAllowed bool
		wantRefusal []string // kind, reason of the refusal counted
		wantError   string
	}{
		{name: "valid", path: sparkApp, method: http.MethodPost, body: readValidateCase(t, "sparkapplication", "create-valid"), wantCode: 200, wantAllowed: true},
		{
			name: "invalid", path: sparkApp, method: http.MethodPost, body: readValidateCase(t, "sparkapplication", "create-invalid-memory-and-cores"),
			wantCode: 200, wantRefusal: []string{"SparkApplication", "invalid"},
		},
		{name: "status update of an invalid object", path: sparkApp, method: http.MethodPost, body: readValidateCase(t, "sparkapplication", "update-status-of-invalid"), wantCode: 200, wantAllowed: true},
		{
			name: "schedule", path: scheduled, method: http.MethodPost, body: readValidateCase(t, "scheduledsparkapplication", "create-minute-61"),
			wantCode: 200, wantRefusal: []string{"ScheduledSparkApplication", "invalid"},
		},
		{
			// The clock comes from the config: the golden's "0 3 * * *" fires after fixedNow too.
			name: "valid schedule", path: scheduled, method: http.MethodPost, body: readValidateCase(t, "scheduledsparkapplication", "create-valid"),
			wantCode: 200, wantAllowed: true,
		},
		{
			name: "another kind's route", path: scheduled, method: http.MethodPost, body: readValidateCase(t, "sparkapplication", "create-valid"),
			wantCode: 200, wantRefusal: []string{"ScheduledSparkApplication", "bad_request"},
		},
		{name: "not a review", path: sparkApp, method: http.MethodPost, body: []byte("not json"), wantCode: 400, wantError: "body is not an AdmissionReview"},
		{name: "too large", path: sparkApp, method: http.MethodPost, body: bytes.Repeat([]byte(" "), 2048), wantCode: 413, wantError: "1024-byte limit"},
		{name: "wrong method", path: sparkApp, method: http.MethodGet, wantCode: 405, wantError: "method not allowed"},
	}
	for _, router := range []struct {
		name string
		new  func(Config) http.Handler
	}{{"plain", NewRouter}, {"webhook", NewWebhookRouter}} {
		for _, tt := range tests {
			t.Run(router.name+"/"+tt.name, func(t *testing.T) {
				m := metrics.New()
				cfg := testConfig(m)
				if tt.wantCode == http.StatusRequestEntityTooLarge {
					cfg.MaxBodyBytes = 1024
				} else {
					cfg.MaxBodyBytes = 1 << 20
				}
				rec := httptest.NewRecorder()
				router.new(cfg).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, bytes.NewReader(tt.body)))

				require.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
				assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
				if tt.wantRefusal != nil {
					assert.Equal(t, 1.0, testutil.ToFloat64(m.ValidationRefusals.WithLabelValues(tt.wantRefusal...)))
				}
				assert.Equal(t, len(tt.wantRefusal)/2, testutil.CollectAndCount(m.ValidationRefusals), "only refusals are counted")
				if tt.wantError != "" {
					var e struct{ Error string }
					require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
					assert.Contains(t, e.Error, tt.wantError)
					return
				}
				var out, in admissionv1.AdmissionReview
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
				require.NoError(t, json.Unmarshal(tt.body, &in))
				require.NotNil(t, out.Response)
				assert.Equal(t, in.Request.UID, out.Response.UID)
				assert.Equal(t, tt.wantAllowed, out.Response.Allowed)
			})
		}
	}
}

// TestValidateSharesTheInflightBudget checks that the webhook routes wait for the body budget
// like every other body-reading route.
func TestValidateSharesTheInflightBudget(t *testing.T) {
	m := metrics.New()
	cfg := testConfig(m)
	cfg.MaxBodyBytes = 1 << 20
	cfg.Inflight = NewBudget(1, 0)
	held, err := cfg.Inflight.reserve(t.Context(), 1)
	require.NoError(t, err)
	defer cfg.Inflight.release(held)

	path := ValidatePath("SparkApplication")
	rec := httptest.NewRecorder()
	NewWebhookRouter(cfg).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(readValidateCase(t, "sparkapplication", "create-valid"))))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	assert.Equal(t, 1.0, testutil.ToFloat64(m.InflightRejections.WithLabelValues(path)))
}

// BenchmarkValidateHTTP sends a review of an invalid SparkApplication (the longer answer) to the
// webhook router over loopback HTTPS with keep-alive, as the API server does, and reports the
// 50th and 99th percentile round trip.
func BenchmarkValidateHTTP(b *testing.B) {
	body := readValidateCase(b, "sparkapplication", "create-invalid-memory-and-cores")
	srv := httptest.NewTLSServer(NewWebhookRouter(Config{}))
	defer srv.Close()
	httpbench.Post(b, srv.Client(), srv.URL+ValidatePath("SparkApplication"), body, `"allowed":false`)
}
