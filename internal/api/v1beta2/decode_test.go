package v1beta2

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeSparkApplication(t *testing.T) {
	const head = `{"apiVersion":"sparkoperator.k8s.io/v1beta2","kind":"SparkApplication","metadata":{"name":"pi","uid":"u1"},"status":{"submissionID":"s1"},`
	tests := []struct {
		name     string
		spec     string
		wantErrs string // the aggregated field errors; empty when the spec decodes
	}{
		{"valid", `"spec":{"type":"Scala","driver":{"cores":2}}`, ""},
		{"no spec", `"spec":null`, ""},
		{"wrong type in our field", `"spec":{"driver":{"cores":"two"}}`,
			"spec.driver.cores: Invalid value: must be an integer, not a string"},
		{"wrong type inside a template", `"spec":{"executor":{"template":{"spec":{"containers":{"name":"x"}}}}}`,
			"spec.executor.template.spec.containers: Invalid value: must be a list, not an object"},
		{"quantity that does not parse", `"spec":{"driver":{"template":{"spec":{"overhead":{"cpu":"lots"}}}}}`,
			"spec: Invalid value: does not decode: quantities must match the regular expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app, errs, err := DecodeSparkApplication([]byte(head + tt.spec + "}"))
			require.NoError(t, err)
			assert.Equal(t, "pi", app.Name, "metadata decodes whatever the spec holds")
			assert.Equal(t, "s1", app.Status.SubmissionID, "status decodes whatever the spec holds")
			if tt.wantErrs == "" {
				assert.Empty(t, errs)
				return
			}
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tt.wantErrs)
		})
	}
}

func TestDecodeKeepsWhatDecodedAroundAWrongType(t *testing.T) {
	app, errs, err := DecodeSparkApplication([]byte(`{"metadata":{"name":"pi"},"spec":{"sparkConf":{"a":1},"driver":{"cores":3}}}`))
	require.NoError(t, err)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.sparkConf", errs[0].Field)
	require.NotNil(t, app.Spec.Driver.Cores)
	assert.Equal(t, int32(3), *app.Spec.Driver.Cores)
}

func TestDecodeObjectThatDoesNotDecode(t *testing.T) {
	for _, raw := range []string{`[]`, `{"metadata":"pi"}`, `{"status":"done"}`} {
		_, _, err := DecodeSparkApplication([]byte(raw))
		assert.Error(t, err, raw)
		_, _, err = DecodeScheduledSparkApplication([]byte(raw))
		assert.Error(t, err, raw)
	}
	ssa, errs, err := DecodeScheduledSparkApplication([]byte(`{"metadata":{"name":"n"},"spec":{"schedule":5}}`))
	require.NoError(t, err)
	assert.Equal(t, "n", ssa.Name)
	assert.Equal(t, "spec.schedule: Invalid value: must be a string, not a number", errs.ToAggregate().Error())
}
