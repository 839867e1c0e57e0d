package mutate

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/mutate")

const goldenDir = "../../testdata/mutate"

// goldenCase is one directory under testdata/mutate: review.json (the request) and an optional
// policy.yaml in; response.json, outcome.json and, when there is a patch, patch.json (readable) and
// pod.json (the pod after the API server applies the patch) out.
type goldenCase struct {
	dir    string
	body   []byte
	policy *Policy
}

func loadGoldenCases(t testing.TB) []goldenCase {
	t.Helper()
	entries, err := os.ReadDir(goldenDir)
	require.NoError(t, err)
	var cases []goldenCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(goldenDir, e.Name())
		body, err := os.ReadFile(filepath.Join(dir, "review.json"))
		require.NoError(t, err)
		c := goldenCase{dir: dir, body: body}
		if _, err := os.Stat(filepath.Join(dir, "policy.yaml")); err == nil {
			c.policy, err = LoadPolicy(filepath.Join(dir, "policy.yaml"))
			require.NoError(t, err)
		}
		cases = append(cases, c)
	}
	require.NotEmpty(t, cases)
	return cases
}

func TestGolden(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			out, outcome, err := Review(c.body, c.policy)
			checkInvariants(t, c.body, out, err)

			var response any = out
			if err != nil {
				response = map[string]string{"error": err.Error()}
			}
			checkGolden(t, filepath.Join(c.dir, "response.json"), indentJSON(t, response))
			checkGolden(t, filepath.Join(c.dir, "outcome.json"), indentJSON(t, outcome))

			var patch []byte
			if out != nil {
				patch = out.Response.Patch
			}
			if patch == nil {
				checkAbsent(t, filepath.Join(c.dir, "patch.json"))
				checkAbsent(t, filepath.Join(c.dir, "pod.json"))
				return
			}
			checkGolden(t, filepath.Join(c.dir, "patch.json"), indentRaw(t, patch))
			pod := applyToRequestObject(t, c.body, patch)
			checkGolden(t, filepath.Join(c.dir, "pod.json"), indentRaw(t, pod))
		})
	}
}

// TestGoldenReinvocation answers every golden review a second time with the patched pod, as the
// API server does when a later webhook asks for reinvocation: the pod must not change again.
func TestGoldenReinvocation(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		out, _, err := Review(c.body, c.policy)
		if err != nil || out.Response.Patch == nil {
			continue
		}
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			once := applyToRequestObject(t, c.body, out.Response.Patch)
			var review map[string]any
			require.NoError(t, json.Unmarshal(c.body, &review))
			review["request"].(map[string]any)["object"] = json.RawMessage(once)
			body, err := json.Marshal(review)
			require.NoError(t, err)

			again, _, err := Review(body, c.policy)
			require.NoError(t, err)
			require.True(t, again.Response.Allowed)
			if again.Response.Patch != nil {
				twice, err := applyPatch(once, again.Response.Patch)
				require.NoError(t, err)
				assert.JSONEq(t, string(once), string(twice), "second patch: %s", again.Response.Patch)
			}
		})
	}
}

// checkInvariants holds for every input, golden or fuzzed: an answer carries the request's uid,
// a refusal says why and carries no patch, and a patch applies to the pod the API server holds.
func checkInvariants(t testing.TB, body []byte, out *admissionv1.AdmissionReview, err error) {
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
	if !out.Response.Allowed {
		require.NotNil(t, out.Response.Result)
		require.NotEmpty(t, out.Response.Result.Message)
		require.Nil(t, out.Response.Patch)
		return
	}
	if out.Response.Patch == nil {
		require.Nil(t, out.Response.PatchType)
		return
	}
	require.Equal(t, admissionv1.PatchTypeJSONPatch, *out.Response.PatchType)
	// The API server applies the patch to its own encoding of the pod, which is what request.object
	// holds when the API server sends it; a hand-written request.object may differ in the details
	// encoding normalises, so apply to the normalised form.
	var pod corev1.Pod
	require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts(in.Request.Object.Raw, &pod))
	canonical, err := json.Marshal(&pod)
	require.NoError(t, err)
	patched, err := applyPatch(canonical, out.Response.Patch)
	require.NoError(t, err, "patch %s", out.Response.Patch)
	var result corev1.Pod
	require.NoError(t, json.Unmarshal(patched, &result))
}

func applyPatch(doc, patch []byte) ([]byte, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	return p.Apply(doc)
}

// applyToRequestObject applies patch to request.object exactly as sent.
func applyToRequestObject(t *testing.T, body, patch []byte) []byte {
	t.Helper()
	var review struct {
		Request struct {
			Object json.RawMessage `json:"object"`
		} `json:"request"`
	}
	require.NoError(t, json.Unmarshal(body, &review))
	out, err := applyPatch(review.Request.Object, patch)
	require.NoError(t, err, "patch %s", patch)
	return out
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return append(data, '\n')
}

func indentRaw(t *testing.T, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, raw, "", "  "))
	buf.WriteByte('\n')
	return buf.Bytes()
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./internal/mutate/ -update")
	assert.Equal(t, string(want), string(got), "%s differs; run go test ./internal/mutate/ -update and review the diff", path)
}

func checkAbsent(t *testing.T, path string) {
	t.Helper()
	if *update {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
		return
	}
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "%s should not exist", path)
}
