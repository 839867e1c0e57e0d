package sparkctl

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// now is the fixed clock of the unit tests.
var now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// fixture is a fake cluster: the dynamic client holds the custom resources, the clientset the
// core objects.
type fixture struct {
	t       *testing.T
	dyn     *dynamicfake.FakeDynamicClient
	logs    LogFunc
	stagers map[string]Stager
	getenv  map[string]string
	openURL func(string) error // the browser; nil fails the test if called
	proxy   ProxyFunc          // the API server's service proxy; nil: none
	// tty makes stdout a terminal of width columns.
	tty   bool
	width int
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	var all []runtime.Object
	for _, o := range objs {
		all = append(all, unstructuredOf(t, o))
	}
	listKinds := map[schema.GroupVersionResource]string{
		podsGVR: "PodList", configMapsGVR: "ConfigMapList", eventsGVR: "EventList", servicesGVR: "ServiceList",
	}
	for _, k := range allKinds {
		listKinds[k.GVR] = k.Kind + "List"
	}
	f := &fixture{
		t:      t,
		dyn:    dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, all...),
		getenv: map[string]string{},
		logs: func(_ context.Context, _, pod string, _ *corev1.PodLogOptions) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("log of " + pod + "\n")), nil
		},
	}
	// The API server gives each new object a UID.
	f.dyn.PrependReactor("create", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj := action.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured)
		if obj.GetUID() == "" {
			obj.SetUID(types.UID("uid-" + obj.GetName()))
		}
		return false, nil, nil
	})
	return f
}

// run runs one command line and returns its output and exit code.
func (f *fixture) run(args ...string) (stdout, stderr string, code int) {
	f.t.Helper()
	var out, errOut bytes.Buffer
	env := &Env{
		Name: "kubectl spark", Stdout: &out, Stderr: &errOut,
		Now:     func() time.Time { return now },
		Getenv:  func(k string) string { return f.getenv[k] },
		Stagers: f.stagers,
		Poll:    time.Second,
		// The ticker has always ticked: a waiting command polls again at once.
		After: func(time.Duration) <-chan time.Time {
			tick := make(chan time.Time, 1)
			tick <- now
			return tick
		},
		Terminal: func(io.Writer) (int, bool) { return f.width, f.tty },
		OpenURL: func(u string) error {
			if f.openURL == nil {
				f.t.Errorf("opened %s in a browser unasked", u)
				return nil
			}
			return f.openURL(u)
		},
		Connect: func(c ConnFlags) (*Clients, error) {
			ns := c.Namespace
			if ns == "" {
				ns = "default"
			}
			return &Clients{Dynamic: f.dyn, Logs: f.logs, Proxy: f.proxy, Namespace: ns}, nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code = Run(ctx, env, args)
	return out.String(), errOut.String(), code
}

// unstructuredOf is a typed object as the dynamic client holds it, with its apiVersion and kind.
func unstructuredOf(t *testing.T, o runtime.Object) *unstructured.Unstructured {
	t.Helper()
	u, err := toUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	switch o.(type) {
	case *corev1.Pod:
		u.SetAPIVersion("v1")
		u.SetKind("Pod")
	case *corev1.ConfigMap:
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
	case *corev1.Event:
		u.SetAPIVersion("v1")
		u.SetKind("Event")
	case *corev1.Service:
		u.SetAPIVersion("v1")
		u.SetKind("Service")
	}
	return u
}

func (f *fixture) configMap(ns, name string) (*corev1.ConfigMap, error) {
	return getConfigMap(context.Background(), &Clients{Dynamic: f.dyn}, ns, name)
}

func (f *fixture) getCustom(k kind, ns, name string) *unstructured.Unstructured {
	f.t.Helper()
	obj, err := f.dyn.Resource(k.GVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return obj
}

func sparkApp(ns, name string, state v1beta2.ApplicationStateType) *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindSparkApplication},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute)),
		},
		Spec: piSpec(),
		Status: v1beta2.SparkApplicationStatus{
			AppState:           v1beta2.ApplicationState{State: state},
			ExecutionAttempts:  1,
			SubmissionAttempts: 1,
		},
	}
}

func piSpec() v1beta2.SparkApplicationSpec {
	return v1beta2.SparkApplicationSpec{
		Type: v1beta2.SparkApplicationTypeScala, SparkVersion: "3.5.3", Mode: v1beta2.DeployModeCluster,
		Image:               ptr.To("apache/spark:3.5.3"),
		MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
		MainApplicationFile: ptr.To("local:///opt/spark/examples/jars/spark-examples.jar"),
		Driver:              v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{ServiceAccount: ptr.To("spark")}},
	}
}

func scheduled(ns, name string) *v1beta2.ScheduledSparkApplication {
	return &v1beta2.ScheduledSparkApplication{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindScheduledSparkApplication},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name), Generation: 1,
			CreationTimestamp: metav1.NewTime(now.Add(-48 * time.Hour)), Labels: map[string]string{"team": "analytics"},
		},
		Spec: v1beta2.ScheduledSparkApplicationSpec{Schedule: "0 3 * * *", Template: piSpec()},
	}
}

func driverPod(ns, name string, phase corev1.PodPhase) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name),
			Labels: map[string]string{"spark-role": "driver"},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "spark-kubernetes-driver"}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	switch phase {
	case corev1.PodRunning:
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "spark-kubernetes-driver", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	case corev1.PodSucceeded:
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "spark-kubernetes-driver", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}
	case corev1.PodFailed:
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "spark-kubernetes-driver", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
	case corev1.PodPending:
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "spark-kubernetes-driver", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "no such image"}}}}
	}
	return pod
}
