package sparkpod

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzDecodeCustomization(f *testing.F) {
	f.Add(`{"v":1}`)
	f.Add(`{"v":1,"env":[{"name":"A","value":"b"}],"gpu":{"name":"nvidia.com/gpu","quantity":1}}`)
	f.Add(`{"v":2}`)
	f.Add(`{"v":1,"sidecars":[{"name":"s","image":"i","securityContext":{"privileged":true}}]}`)
	f.Fuzz(func(t *testing.T, value string) {
		c, err := DecodeCustomization(value)
		if err != nil {
			return
		}
		// Whatever decodes must survive an encode/decode round trip unchanged.
		encoded, err := EncodeCustomization(c)
		require.NoError(t, err)
		again, err := DecodeCustomization(encoded)
		require.NoError(t, err)
		reencoded, err := EncodeCustomization(again)
		require.NoError(t, err)
		require.Equal(t, encoded, reencoded)
	})
}
