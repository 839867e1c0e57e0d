package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
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

func TestGatewayRouteFlags(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    children.RouteSettings
		wantErr string
	}{
		{name: "off by default", want: children.RouteSettings{HTTPRoutePathPrefix: children.DefaultHTTPRoutePathPrefix}},
		{name: "every application", args: []string{"--ui-http-route", `--gateway-parent-refs=[{"name":"public","namespace":"gateways","sectionName":"https"}]`, "--http-route-hostnames=spark.example.com,{{$appName}}.spark.example.com", "--http-route-path-prefix=/spark/{{$appName}}"},
			want: children.RouteSettings{UIHTTPRoute: true, ParentRefs: []v1beta2.GatewayParentReference{{Name: "public", Namespace: "gateways", SectionName: "https"}},
				HTTPRouteHostnames: []string{"spark.example.com", "{{$appName}}.spark.example.com"}, HTTPRoutePathPrefix: "/spark/{{$appName}}"}},
		{name: "from the environment", env: map[string]string{"SPARKHOOKS_GATEWAY_PARENT_REFS": `[{"name":"gw"}]`},
			want: children.RouteSettings{ParentRefs: []v1beta2.GatewayParentReference{{Name: "gw"}}, HTTPRoutePathPrefix: children.DefaultHTTPRoutePathPrefix}},
		{name: "every application needs a Gateway", args: []string{"--ui-http-route"}, wantErr: "--ui-http-route needs --gateway-parent-refs"},
		{name: "bad Gateway", args: []string{`--gateway-parent-refs=[{"namespace":"gw"}]`}, wantErr: "--gateway-parent-refs[0].name: Required value"},
		{name: "bad hostname", args: []string{"--http-route-hostnames=Spark.example.com"}, wantErr: "--http-route-hostnames[0]"},
		{name: "bad path", args: []string{"--http-route-path-prefix=spark"}, wantErr: "--http-route-path-prefix: Invalid value"},
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
			assert.Equal(t, tt.want, o.decisions.spark.Driver.Routes)
		})
	}
}
