package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGCOptions(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    gcOptions
		wantErr string
	}{
		{
			name: "defaults: every namespace, in-cluster",
			want: gcOptions{logLevel: "info", requestTimeout: 30 * time.Second, qps: 20},
		},
		{
			name: "namespaces from the environment, blanks dropped",
			env:  map[string]string{"SPARKHOOKS_GC_NAMESPACES": "jobs, etl,,", "SPARKHOOKS_GC_DRY_RUN": "true"},
			want: gcOptions{namespaces: []string{"jobs", "etl"}, dryRun: true, logLevel: "info", requestTimeout: 30 * time.Second, qps: 20},
		},
		{
			name: "flags win over the environment",
			env:  map[string]string{"SPARKHOOKS_GC_NAMESPACES": "jobs", "SPARKHOOKS_KUBECONFIG": "/env"},
			args: []string{"--namespaces", "etl", "--kubeconfig", "/flag", "--qps", "5", "--request-timeout", "1m"},
			want: gcOptions{kubeconfig: "/flag", namespaces: []string{"etl"}, logLevel: "info", requestTimeout: time.Minute, qps: 5},
		},
		{
			name: "watch",
			env:  map[string]string{"SPARKHOOKS_GC_WATCH": "true"},
			want: gcOptions{logLevel: "info", requestTimeout: 30 * time.Second, qps: 20, watch: true},
		},
		{name: "stray argument", args: []string{"jobs"}, wantErr: `gc takes no arguments, got ["jobs"]`},
		{name: "zero qps", args: []string{"--qps", "0"}, wantErr: "--qps must be > 0, got 0"},
		{name: "zero timeout", args: []string{"--request-timeout", "0s"}, wantErr: "--request-timeout must be > 0, got 0s"},
		{name: "bad dry run", env: map[string]string{"SPARKHOOKS_GC_DRY_RUN": "maybe"}, wantErr: `SPARKHOOKS_GC_DRY_RUN="maybe": not a boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			o, err := parseGCOptions(tt.args, io.Discard)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, o)
		})
	}
}

func TestGCWithoutCluster(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	err := run(context.Background(), []string{"gc"}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, "not running in a cluster: give --kubeconfig")
}
