package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultTimeToLiveFlag(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    int64
		wantErr string
	}{
		{name: "off by default", want: 0},
		{name: "from the environment", env: map[string]string{"SPARKHOOKS_DEFAULT_TIME_TO_LIVE_SECONDS": "86400"}, want: 86400},
		{name: "the flag wins", env: map[string]string{"SPARKHOOKS_DEFAULT_TIME_TO_LIVE_SECONDS": "86400"}, args: []string{"--default-time-to-live-seconds", "60"}, want: 60},
		{name: "ten years at most", args: []string{"--default-time-to-live-seconds", "315360000"}, want: 315360000},
		{name: "negative", args: []string{"--default-time-to-live-seconds", "-1"}, wantErr: "--default-time-to-live-seconds must be between 0 and 315360000, got -1"},
		{name: "over ten years", args: []string{"--default-time-to-live-seconds", "315360001"}, wantErr: "--default-time-to-live-seconds must be between 0 and 315360000, got 315360001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			o, err := parseServeOptions(tt.args, io.Discard)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, o.decisions.spark.DefaultTimeToLiveSeconds)
		})
	}
}
