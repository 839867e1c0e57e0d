//go:build e2e

package localcluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// testEnv is the cluster the harness's own tests share; each test uses a namespace of its own.
var testEnv *Env

func TestMain(m *testing.M) {
	os.Exit(runHarnessTests(m))
}

func runHarnessTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sparkhooks-harness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	logs, err := os.Create(dir + "/apiserver.log")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logs.Close()
	RedirectLogs(logs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	testEnv, err = StartEnv(ctx, EnvOptions{Dir: dir, CRDDir: "../../../crds"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the harness cluster:", err)
		return 1
	}
	defer testEnv.Stop()
	return m.Run()
}

func newTestNamespace(t *testing.T) (string, kubernetes.Interface) {
	t.Helper()
	ns, err := testEnv.CreateNamespace(context.Background(), "harness")
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(testEnv.API.ClientConfig())
	require.NoError(t, err)
	return ns, client
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "spark", Image: "spark:4.0.0"}}},
	}
}

func TestKubectlFindsEveryServedGroup(t *testing.T) {
	out, err := Kubectl(context.Background(), testEnv.API.Kubeconfig, "api-resources", "-o", "name")
	require.NoError(t, err)
	for _, resource := range []string{"pods", "configmaps", "services", "namespaces", "events", "ingresses.networking.k8s.io",
		"sparkapplications.sparkoperator.k8s.io", "scheduledsparkapplications.sparkoperator.k8s.io"} {
		assert.Contains(t, out, resource+"\n")
	}
}

// The generic registry validates nothing on its own; these are the rules the harness adds so
// that an object a real cluster refuses is refused here too.
func TestBuiltinKindsRefuseWhatAClusterRefuses(t *testing.T) {
	ns, client := newTestNamespace(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		create func() error
		want   string
	}{
		{
			name: "pod without containers",
			create: func() error {
				pod := testPod("empty")
				pod.Spec.Containers = nil
				_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
				return err
			},
			want: "spec.containers: Required value",
		},
		{
			name: "volume mount of a volume that does not exist",
			create: func() error {
				pod := testPod("mount")
				pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "conf", MountPath: "/opt/spark/conf"}}
				_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
				return err
			},
			want: `spec.containers[0].volumeMounts[0].name: Not found: "conf"`,
		},
		{
			name: "port name longer than 15 characters",
			create: func() error {
				pod := testPod("port")
				pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "spark-driver-ui-port", ContainerPort: 4040}}
				_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
				return err
			},
			want: "spec.containers[0].ports[0].name: Invalid value",
		},
		{
			name: "service name that is not a DNS-1035 label",
			create: func() error {
				svc := &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: "1st-app-ui-svc"},
					Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "ui", Port: 4040}}},
				}
				_, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
				return err
			},
			want: "metadata.name: Invalid value",
		},
		{
			name: "configmap key with a slash",
			create: func() error {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"conf/spark.properties": ""}}
				_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
				return err
			},
			want: "data[conf/spark.properties]: Invalid value",
		},
		{
			name: "object in a namespace that does not exist",
			create: func() error {
				_, err := client.CoreV1().Pods("no-such-namespace").Create(ctx, testPod("lost"), metav1.CreateOptions{})
				return err
			},
			want: `namespaces "no-such-namespace" not found`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.create()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestPodSpecIsImmutableAndStatusIsASubresource(t *testing.T) {
	ns, client := newTestNamespace(t)
	ctx := context.Background()
	pod, err := client.CoreV1().Pods(ns).Create(ctx, testPod("p"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.PodPending, pod.Status.Phase, "a new pod starts Pending")

	pod.Spec.Containers[0].Args = []string{"--changed"}
	_, err = client.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pod updates may not change fields")

	pod, err = client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	require.NoError(t, err)
	pod.Status.Phase = corev1.PodRunning
	pod, err = client.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.PodPending, pod.Status.Phase, "the main resource ignores status")

	pod.Status.Phase = corev1.PodRunning
	pod.Labels = map[string]string{"changed": "by-status"}
	pod, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.PodRunning, pod.Status.Phase)
	assert.Empty(t, pod.Labels, "the status subresource ignores everything but status")
}

// TestSecretStringDataIsFoldedIntoData: kubectl apply of a Secret written with stringData, as
// users (and Spark's SecretsTestsSuite) write them, must give pods the keys in data.
func TestSecretStringDataIsFoldedIntoData(t *testing.T) {
	ns, client := newTestNamespace(t)
	ctx := context.Background()
	secret, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data:       map[string][]byte{"username": []byte("old"), "kept": []byte("k")},
		StringData: map[string]string{"username": "secretusername", "password": "secretpassword"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"username": []byte("secretusername"), "password": []byte("secretpassword"), "kept": []byte("k")}, secret.Data)
	assert.Empty(t, secret.StringData, "stringData is write-only")

	secret.StringData = map[string]string{"password": "rotated"}
	secret, err = client.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, []byte("rotated"), secret.Data["password"])
	assert.Empty(t, secret.StringData)
}

func TestGarbageCollectorCompletesForegroundDeletion(t *testing.T) {
	ns, client := newTestNamespace(t)
	ctx := context.Background()
	owner, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	yes := true
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:            "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID, BlockOwnerDeletion: &yes}},
	}}
	_, err = client.CoreV1().ConfigMaps(ns).Create(ctx, dependent, metav1.CreateOptions{})
	require.NoError(t, err)

	foreground := metav1.DeletePropagationForeground
	require.NoError(t, client.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &foreground}))
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		_, errOwner := client.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
		_, errDependent := client.CoreV1().ConfigMaps(ns).Get(ctx, "dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(errOwner) && apierrors.IsNotFound(errDependent), nil
	}))
}
