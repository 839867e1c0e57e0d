package sparkpod

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestCustomizationRoundTrip(t *testing.T) {
	grace := int64(60)
	in := &Customization{
		Env:          []corev1.EnvVar{{Name: "A", Value: "b"}},
		Volumes:      []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		GPU:          &GPUSpec{Name: "nvidia.com/gpu", Quantity: 1},
		NodeSelector: map[string]string{"b": "2", "a": "1"},
		Sidecars:     []corev1.Container{{Name: "log", Image: "fluent-bit"}},
		HostNetwork:  true,

		TerminationGracePeriodSeconds: &grace,
	}
	encoded, err := EncodeCustomization(in)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(encoded, `{"v":1,`), encoded)
	assert.NotContains(t, encoded, "\n", "the annotation is compact")
	assert.Equal(t, 0, in.Version, "encoding does not change its argument")

	again, err := EncodeCustomization(in)
	require.NoError(t, err)
	assert.Equal(t, encoded, again, "equal inputs encode identically")

	out, err := DecodeCustomization(encoded)
	require.NoError(t, err)
	want := *in
	want.Version = CustomizationVersion
	assert.Equal(t, &want, out)
}

func TestEncodeCustomizationRejects(t *testing.T) {
	tests := []struct {
		name string
		in   *Customization
		want string
	}{
		{"nil", nil, "nil customization"},
		{"future version", &Customization{Version: 2}, "format version 2"},
		{"unnamed env", &Customization{Env: []corev1.EnvVar{{Value: "x"}}}, "env[0]: name is empty"},
		{"unnamed sidecar", &Customization{Sidecars: []corev1.Container{{Image: "x"}}}, "sidecars[0]: name is empty"},
		{"too large", &Customization{Env: []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", MaxCustomizationBytes)}}}, "byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EncodeCustomization(tt.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestDecodeCustomizationRejects(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"empty", ``, "not a JSON object"},
		{"array", `[]`, "not a JSON object"},
		{"no version", `{"env":[]}`, `no format version ("v")`},
		{"version zero", `{"v":0}`, "format version 0 is not supported"},
		{"future version", `{"v":2,"whatever":true}`, "format version 2 is not supported"},
		{"unknown field", `{"v":1,"volumez":[]}`, `unknown field "volumez"`},
		{"unknown nested field", `{"v":1,"env":[{"name":"A","vaule":"b"}]}`, `unknown field "env[0].vaule"`},
		{"duplicate field", `{"v":1,"hostNetwork":true,"hostNetwork":false}`, `duplicate field "hostNetwork"`},
		{"wrong type", `{"v":1,"env":{"A":"b"}}`, "decode"},
		{"mount without path", `{"v":1,"volumeMounts":[{"name":"data"}]}`, "volumeMounts[0]: name and mountPath are required"},
		{"unnamed volume", `{"v":1,"volumes":[{"emptyDir":{}}]}`, "volumes[0]: name is empty"},
		{"port zero", `{"v":1,"ports":[{"name":"x"}]}`, "ports[0]: containerPort must be positive"},
		{"negative gpu", `{"v":1,"gpu":{"name":"nvidia.com/gpu","quantity":-1}}`, "gpu:"},
		{"unnamed init container", `{"v":1,"initContainers":[{"image":"busybox"}]}`, "initContainers[0]: name is empty"},
		{"too large", `{"v":1,"env":[{"name":"A","value":"` + strings.Repeat("x", MaxCustomizationBytes) + `"}]}`, "byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeCustomization(tt.value)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
