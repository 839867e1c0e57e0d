package validate

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	sigsjson "sigs.k8s.io/json"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/validate")

const goldenDir = "../../testdata/validate"

// goldenNow is the clock of every golden review: a schedule must fire within five years of it.
var goldenNow = time.Date(2024, 6, 3, 10, 20, 30, 0, time.UTC)

// goldenCase is one directory testdata/validate/<route>/<case>: review.json in, response.json and
// outcome.json out. <route> names the kind the route serves, as in /<route>/validate.
type goldenCase struct {
	name string
	dir  string
	kind Kind
	body []byte
}

func loadGoldenCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, kind := range Kinds() {
		route := kind.Route()
		entries, err := os.ReadDir(filepath.Join(goldenDir, route))
		require.NoError(t, err, "every kind has golden reviews")
		for _, e := range entries {
			dir := filepath.Join(goldenDir, route, e.Name())
			body, err := os.ReadFile(filepath.Join(dir, "review.json"))
			require.NoError(t, err)
			cases = append(cases, goldenCase{name: route + "/" + e.Name(), dir: dir, kind: kind, body: body})
		}
	}
	require.NotEmpty(t, cases)
	return cases
}

func TestGolden(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			out, outcome, err := Review(c.body, c.kind, goldenNow)
			checkInvariants(t, c.body, out, outcome, err)
			var response any = out
			if err != nil {
				response = map[string]string{"error": err.Error()}
			}
			checkGolden(t, filepath.Join(c.dir, "response.json"), indentJSON(t, response))
			checkGolden(t, filepath.Join(c.dir, "outcome.json"), indentJSON(t, outcome))
		})
	}
}

// checkInvariants holds for every input, golden or fuzzed: an answer carries the request's
// uid, a refusal says why and is counted, and an allowed request is not.
func checkInvariants(t testing.TB, body []byte, out *admissionv1.AdmissionReview, outcome Outcome, err error) {
	t.Helper()
	if err != nil {
		require.Nil(t, out)
		require.NotEmpty(t, err.Error())
		return
	}
	var in admissionv1.AdmissionReview
	require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts(body, &in))
	require.NotNil(t, out.Response)
	require.Equal(t, ReviewAPIVersion, out.APIVersion)
	require.Equal(t, "AdmissionReview", out.Kind)
	require.Equal(t, in.Request.UID, out.Response.UID)
	require.Nil(t, out.Response.Patch, "a validating webhook never patches")
	if out.Response.Allowed {
		require.Nil(t, out.Response.Result)
		require.Empty(t, outcome.Refusal)
		return
	}
	require.NotNil(t, out.Response.Result)
	require.NotEmpty(t, out.Response.Result.Message)
	require.GreaterOrEqual(t, out.Response.Result.Code, int32(400))
	require.Contains(t, []string{RefusalInvalid, RefusalBadRequest}, outcome.Refusal)
	if outcome.Refusal == RefusalInvalid {
		require.NotNil(t, out.Response.Result.Details)
		for _, cause := range out.Response.Result.Details.Causes {
			require.NotEmpty(t, cause.Field, "every cause names its field")
			require.Contains(t, out.Response.Result.Message, cause.Field, "the message lists every field")
		}
	}
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return append(data, '\n')
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./internal/validate/ -update")
	assert.Equal(t, string(want), string(got), "%s differs; run go test ./internal/validate/ -update and review the diff", path)
}
