package sparkctl

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

const inClusterHistory = "http://sparkhooks-history.sparkhooks.svc:18080/history/spark-0456/jobs/"

// historyServer is the chart's History Server: its Service and two pods, one not ready yet.
func historyServer() []runtime.Object {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "sparkhooks-history", Namespace: "sparkhooks"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/component": "history-server"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 18080, TargetPort: intstr.FromString("http")}},
		},
	}
	pod := func(name string, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "sparkhooks", Labels: svc.Spec.Selector},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "history-server",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 18080}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}},
		}
	}
	return []runtime.Object{svc, pod("history-a", corev1.ConditionFalse), pod("history-b", corev1.ConditionTrue)}
}

func withHistory(app *v1beta2.SparkApplication, u string) *v1beta2.SparkApplication {
	app.Status.HistoryURL = u
	return app
}

func TestResolveUI(t *testing.T) {
	liveDriver := driverPod("default", "live-driver", corev1.PodRunning)
	liveDriver.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "spark-ui", ContainerPort: 4041}}
	for _, tc := range []struct {
		name     string
		app      *v1beta2.SparkApplication
		objs     []runtime.Object
		wantPod  string
		wantPort int
		wantPath string
		wantURL  string
		wantErr  string
	}{
		{name: "the running driver's own UI", app: withHistory(sparkApp("default", "live", v1beta2.ApplicationStateRunning), inClusterHistory),
			objs: []runtime.Object{liveDriver}, wantPod: "live-driver", wantPort: 4041, wantPath: "/"},
		{name: "the History Server's pod once the driver is gone", app: withHistory(sparkApp("default", "done", v1beta2.ApplicationStateCompleted), inClusterHistory),
			objs: historyServer(), wantPod: "history-b", wantPort: 18080, wantPath: "/history/spark-0456/jobs/"},
		{name: "a driver that has ended serves no UI", app: withHistory(sparkApp("default", "done", v1beta2.ApplicationStateCompleted), inClusterHistory),
			objs: append(historyServer(), driverPod("default", "done-driver", corev1.PodSucceeded)), wantPod: "history-b", wantPort: 18080, wantPath: "/history/spark-0456/jobs/"},
		{name: "a History Server outside the cluster is its URL", app: withHistory(sparkApp("default", "done", v1beta2.ApplicationStateCompleted), "https://spark-history.example.com/history/spark-0456/jobs/"),
			wantURL: "https://spark-history.example.com/history/spark-0456/jobs/"},
		{name: "no History Server", app: sparkApp("default", "done", v1beta2.ApplicationStateCompleted),
			wantErr: `SparkApplication "done" has no running driver and no History Server page`},
		{name: "a History Server with no ready pod", app: withHistory(sparkApp("default", "done", v1beta2.ApplicationStateCompleted), inClusterHistory),
			objs: historyServer()[:2], wantErr: "no ready pod behind service sparkhooks/sparkhooks-history"},
		{name: "a History Server Service that does not exist", app: withHistory(sparkApp("default", "done", v1beta2.ApplicationStateCompleted), inClusterHistory),
			wantErr: "reading service sparkhooks/sparkhooks-history"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.objs...)
			got, err := resolveUI(context.Background(), &Clients{Dynamic: f.dyn, Namespace: "default"}, tc.app)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.wantURL != "" {
				assert.Nil(t, got.pod)
				assert.Equal(t, tc.wantURL, got.url)
				return
			}
			require.NotNil(t, got.pod)
			assert.Equal(t, tc.wantPod, got.pod.Name)
			assert.Equal(t, tc.wantPort, got.port)
			assert.Equal(t, tc.wantPath, got.path)
		})
	}
}

func TestInClusterService(t *testing.T) {
	for host, want := range map[string][2]string{
		"sparkhooks-history.sparkhooks.svc":               {"sparkhooks-history", "sparkhooks"},
		"sparkhooks-history.sparkhooks.svc.cluster.local": {"sparkhooks-history", "sparkhooks"},
		"spark-history.example.com":                       {},
		"localhost":                                       {},
		"10.0.0.7":                                        {},
	} {
		name, ns, ok := inClusterService(host)
		assert.Equal(t, want[0] != "", ok, host)
		assert.Equal(t, want, [2]string{name, ns}, host)
	}
}

func TestUICommand(t *testing.T) {
	external := withHistory(sparkApp("default", "done", v1beta2.ApplicationStateCompleted), "https://spark-history.example.com/history/spark-0456/jobs/")
	inCluster := withHistory(sparkApp("default", "incluster", v1beta2.ApplicationStateCompleted), inClusterHistory)
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string
		wantOpened []string
	}{
		{"prints the page", []string{"ui", "done"}, 0, "History Server page of done: https://spark-history.example.com/history/spark-0456/jobs/", nil},
		{"opens it only when asked", []string{"ui", "done", "--open"}, 0, "https://spark-history.example.com/history/spark-0456/jobs/",
			[]string{"https://spark-history.example.com/history/spark-0456/jobs/"}},
		{"forwards to an in-cluster History Server", []string{"ui", "incluster"}, ExitError, "port forwarding needs a connection to an API server", nil},
		{"a bad port", []string{"ui", "done", "--port", "70000"}, ExitUsage, "--port 70000", nil},
		{"another kind", []string{"ui", "sparkconnect/x"}, ExitUsage, "this command works on SparkApplication", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, append(historyServer(), external, inCluster)...)
			var opened []string
			f.openURL = func(u string) error { opened = append(opened, u); return nil }
			out, errOut, code := f.run(tc.args...)
			require.Equal(t, tc.wantCode, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out+errOut, tc.wantOut)
			assert.Equal(t, tc.wantOpened, opened)
		})
	}
}
