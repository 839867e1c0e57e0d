package sparkctl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	restclient "k8s.io/client-go/rest"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func TestServiceProxyPath(t *testing.T) {
	for _, tc := range []struct {
		svc  serviceRef
		path string
		want string
	}{
		{serviceRef{"jobs", "spark-pi-ui-svc", "4040"}, "/api/v1/applications/spark-0a1b/jobs",
			"/api/v1/namespaces/jobs/services/spark-pi-ui-svc:4040/proxy/api/v1/applications/spark-0a1b/jobs"},
		{serviceRef{"sparkhooks", "https:history", "443"}, "/spark-history/api/v1/applications/spark-0a1b/allexecutors",
			"/api/v1/namespaces/sparkhooks/services/https:history:443/proxy/spark-history/api/v1/applications/spark-0a1b/allexecutors"},
		{serviceRef{"default", "ui", ""}, "api/v1/applications", "/api/v1/namespaces/default/services/ui/proxy/api/v1/applications"},
	} {
		assert.Equal(t, tc.want, serviceProxyPath(tc.svc, tc.path))
	}
}

// TestRestProxyAsksTheAPIServer runs client-go's REST client against a server in the API
// server's place: the request it sends is the service proxy's path with the query, and the
// API server's refusals come back as Status errors.
func TestRestProxyAsksTheAPIServer(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		if r.URL.Path == "/api/v1/namespaces/locked/services/ui:4040/proxy/api/v1/applications" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
				`"message":"services \"ui:4040\" is forbidden: User \"ann\" cannot get resource \"services/proxy\" in API group \"\" in the namespace \"locked\""}`))
			return
		}
		_, _ = w.Write([]byte(`[{"jobId":0}]`))
	}))
	defer srv.Close()
	proxy, err := restProxy(&restclient.Config{Host: srv.URL})
	require.NoError(t, err)

	body, err := proxy(context.Background(), serviceRef{"jobs", "pi-ui-svc", "4040"}, "/api/v1/applications/spark-1/stages", url.Values{"status": {"active"}})
	require.NoError(t, err)
	assert.Equal(t, `[{"jobId":0}]`, string(body))
	assert.Equal(t, http.MethodGet, got.Method)
	assert.Equal(t, "/api/v1/namespaces/jobs/services/pi-ui-svc:4040/proxy/api/v1/applications/spark-1/stages", got.URL.Path)
	assert.Equal(t, "status=active", got.URL.RawQuery)

	_, err = proxy(context.Background(), serviceRef{"locked", "ui", "4040"}, "/api/v1/applications", nil)
	require.True(t, apierrors.IsForbidden(err), "%v", err)
	src := progressSource{kind: "driver", svc: serviceRef{"locked", "ui", "4040"}}
	assert.EqualError(t, proxyError(src, "/api/v1/applications", err),
		`reading the driver's UI needs services/proxy on service locked/ui:4040: services "ui:4040" is forbidden: User "ann" cannot get resource "services/proxy" in API group "" in the namespace "locked"`)
}

func TestSourceFor(t *testing.T) {
	running := func() *v1beta2.SparkApplication {
		app := sparkApp("jobs", "pi", v1beta2.ApplicationStateRunning)
		app.Status.SparkApplicationID = "spark-0a1b"
		app.Status.DriverInfo = v1beta2.DriverInfo{WebUIServiceName: "pi-ui-svc", WebUIPort: 4040}
		return app
	}
	ended := func(historyURL string) *v1beta2.SparkApplication {
		app := running()
		app.Status.AppState.State = v1beta2.ApplicationStateCompleted
		app.Status.HistoryURL = historyURL
		return app
	}
	for _, tc := range []struct {
		name     string
		app      *v1beta2.SparkApplication
		want     progressSource
		wantNote string
	}{
		{name: "a running driver's UI Service", app: running(),
			want: progressSource{kind: "driver", svc: serviceRef{"jobs", "pi-ui-svc", "4040"}, api: "/api/v1"}},
		{name: "not submitted yet", app: sparkApp("jobs", "pi", v1beta2.ApplicationStateSubmitted), wantNote: "no Spark application ID yet"},
		{name: "a driver without a UI Service", app: func() *v1beta2.SparkApplication {
			app := running()
			app.Status.DriverInfo = v1beta2.DriverInfo{}
			return app
		}(), wantNote: "the driver has no UI Service"},
		{name: "the chart's History Server", app: ended("http://sparkhooks-history.sparkhooks.svc:18080/history/spark-0a1b/jobs/"),
			want: progressSource{kind: "history", svc: serviceRef{"sparkhooks", "sparkhooks-history", "18080"}, api: "/api/v1"}},
		{name: "a History Server under a path, over TLS, by its full DNS name", app: ended("https://hs.spark.svc.cluster.local/spark-history/history/spark-0a1b/jobs/"),
			want: progressSource{kind: "history", svc: serviceRef{"spark", "https:hs", "443"}, api: "/spark-history/api/v1"}},
		{name: "a History Server outside the cluster", app: ended("https://spark-history.example.com/history/spark-0a1b/jobs/"),
			wantNote: "the History Server at spark-history.example.com is not a Service in the cluster: the API server's service proxy cannot reach it"},
		{name: "no History Server", app: ended(""), wantNote: "the driver has ended and the application has no History Server page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sourceFor(tc.app)
			if tc.wantNote != "" {
				var none *errNoProgress
				require.ErrorAs(t, err, &none)
				assert.Contains(t, none.reason, tc.wantNote)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
