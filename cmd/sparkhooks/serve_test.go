package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestParseServeOptions(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    func(*testing.T, serveOptions)
		wantErr string
	}{
		{
			name: "defaults",
			want: func(t *testing.T, o serveOptions) {
				assert.Equal(t, ":8080", o.addr)
				assert.Equal(t, ":8443", o.tlsAddr)
				assert.Equal(t, int64(32<<20), o.maxBodyBytes)
				assert.Equal(t, int64(64<<20), o.maxInflightBytes)
				assert.Equal(t, time.Second, o.inflightWait)
				assert.Zero(t, o.memoryLimitBytes)
			},
		},
		{
			name: "budget from the container's memory limit",
			env:  map[string]string{"SPARKHOOKS_MEMORY_LIMIT_BYTES": "1073741824", "SPARKHOOKS_INFLIGHT_WAIT": "250ms"},
			want: func(t *testing.T, o serveOptions) {
				assert.Equal(t, int64(1<<30), o.memoryLimitBytes)
				assert.Equal(t, int64(128<<20), o.maxInflightBytes)
				assert.Equal(t, 250*time.Millisecond, o.inflightWait)
			},
		},
		{
			name: "explicit budget wins over the derived one",
			env:  map[string]string{"SPARKHOOKS_MEMORY_LIMIT_BYTES": "1073741824"},
			args: []string{"--max-inflight-bytes", "1000", "--inflight-wait", "0s"},
			want: func(t *testing.T, o serveOptions) {
				assert.Equal(t, int64(1000), o.maxInflightBytes)
				assert.Zero(t, o.inflightWait)
			},
		},
		{
			name: "env then flag wins",
			env:  map[string]string{"SPARKHOOKS_ADDR": ":9000", "SPARKHOOKS_MAX_BODY_BYTES": "1024", "SPARKHOOKS_LOG_LEVEL": "debug"},
			args: []string{"--addr", ":9100"},
			want: func(t *testing.T, o serveOptions) {
				assert.Equal(t, ":9100", o.addr)
				assert.Equal(t, int64(1024), o.maxBodyBytes)
				assert.Equal(t, "debug", o.logLevel)
			},
		},
		{
			name: "ingress defaults as JSON, the flag over the environment",
			env:  map[string]string{"SPARKHOOKS_INGRESS_ANNOTATIONS": `{"a":"1"}`},
			args: []string{"--ingress-tls", `[{"hosts":["*.spark.example.com"],"secretName":"ui-tls"}]`},
			want: func(t *testing.T, o serveOptions) {
				assert.Equal(t, map[string]string{"a": "1"}, o.decisions.spark.Driver.IngressAnnotations)
				require.Len(t, o.decisions.spark.Driver.IngressTLS, 1)
				assert.Equal(t, "ui-tls", o.decisions.spark.Driver.IngressTLS[0].SecretName)
			},
		},
		{name: "ingress annotations not an object", env: map[string]string{"SPARKHOOKS_INGRESS_ANNOTATIONS": `["a=1"]`}, wantErr: "SPARKHOOKS_INGRESS_ANNOTATIONS: not the JSON this setting takes"},
		{name: "ingress TLS with an unknown field", args: []string{"--ingress-tls", `[{"host":"x"}]`}, wantErr: "--ingress-tls: not the JSON this setting takes"},
		{name: "bad env number", env: map[string]string{"SPARKHOOKS_MAX_BODY_BYTES": "lots"}, wantErr: `SPARKHOOKS_MAX_BODY_BYTES="lots": not an integer`},
		{name: "cert without key", args: []string{"--tls-cert-file", "c.pem"}, wantErr: "must be given together"},
		{name: "zero body limit", args: []string{"--max-body-bytes", "0"}, wantErr: "--max-body-bytes must be > 0, got 0"},
		{name: "negative budget", args: []string{"--max-inflight-bytes", "-1"}, wantErr: "--max-inflight-bytes must be >= 0, got -1"},
		{name: "negative wait", env: map[string]string{"SPARKHOOKS_INFLIGHT_WAIT": "-1s"}, wantErr: "--inflight-wait must be >= 0, got -1s"},
		{name: "bad wait", env: map[string]string{"SPARKHOOKS_INFLIGHT_WAIT": "soon"}, wantErr: `SPARKHOOKS_INFLIGHT_WAIT="soon": not a duration`},
		{name: "negative memory limit", args: []string{"--memory-limit-bytes", "-5"}, wantErr: "--memory-limit-bytes must be >= 0, got -5"},
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
			tt.want(t, o)
		})
	}
}

func TestGoMemoryLimit(t *testing.T) {
	tests := []struct {
		name          string
		memoryLimit   int64
		gomemlimitSet bool
		want          int64
	}{
		{"90% of the chart's 512Mi", 512 << 20, false, 483183819},
		{"GOMEMLIMIT wins", 512 << 20, true, 0},
		{"no container limit", 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, goMemoryLimit(tt.memoryLimit, tt.gomemlimitSet))
		})
	}
}

func TestServeAnswersHealthzAndShutsDownGracefully(t *testing.T) {
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	opts, err := parseServeOptions(nil, io.Discard)
	require.NoError(t, err)
	opts.shutdownTimeout = 5 * time.Second
	var logs bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- runServer(ctx, opts, slog.New(slog.NewJSONHandler(&logs, nil)), plain, nil) }()

	base := "http://" + plain.Addr().String()
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 5*time.Second, 20*time.Millisecond)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not shut down")
	}
	assert.Contains(t, logs.String(), `"msg":"shutting down"`)
}

func TestRunCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"version"}, &out, &errOut))
	assert.Equal(t, version+"\n", out.String())
	assert.ErrorIs(t, run(context.Background(), []string{"frobnicate"}, &out, &errOut), errUsage)
	assert.Contains(t, errOut.String(), `unknown command "frobnicate"`)
}

// TestServeRecordsEventsAfterAnswering runs serve against a stand-in API server and sends it
// the sync of a new SparkApplication: the answer comes back, and then the Event of its
// submission is created in the application's namespace, through events.k8s.io/v1.
func TestServeRecordsEventsAfterAnswering(t *testing.T) {
	created := make(chan *eventsv1.Event, 10)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/apis/events.k8s.io/v1/namespaces/spark-jobs/events" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		ev, ok := obj.(*eventsv1.Event)
		if err != nil || !ok {
			http.Error(w, "not an Event", http.StatusBadRequest)
			return
		}
		created <- ev
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(ev)
	}))
	defer api.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+api.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))

	plain, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts, err := parseServeOptions([]string{"--kubeconfig=" + kubeconfig}, io.Discard)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- runServer(ctx, opts, slog.New(slog.DiscardHandler), plain, nil) }()

	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sync", "new-spark-pi", "request.json"))
	require.NoError(t, err)
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = http.Post("http://"+plain.Addr().String()+"/sparkapplication/sync", "application/json", bytes.NewReader(body))
		return err == nil
	}, 5*time.Second, 20*time.Millisecond)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	select {
	case ev := <-created:
		assert.Equal(t, "SparkApplicationSubmitted", ev.Reason)
		assert.Equal(t, "Normal", ev.Type)
		assert.Equal(t, "sparkhooks", ev.ReportingController)
		assert.Equal(t, "SparkApplication", ev.Regarding.Kind)
		assert.Equal(t, "spark-pi", ev.Regarding.Name)
	case <-time.After(10 * time.Second):
		t.Fatal("no Event created")
	}
	cancel()
	require.NoError(t, <-done)
}
