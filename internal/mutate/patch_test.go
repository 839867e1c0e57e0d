package mutate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"/spec/containers/0/env/-", "/metadata/labels/a~1b", `we"ird\path`, "tab\there", "<html>&", "ünïcode", "bad\xffutf8"} {
		got, err := appendJSONString([]byte("x"), s)
		require.NoError(t, err)
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, "x"+string(want), string(got), s)
	}
}
