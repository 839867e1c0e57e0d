package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func connect(muts ...func(*SparkConnect)) *SparkConnect {
	sc := &SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "spark-connect", Namespace: "default", UID: "u1"},
		Spec: SparkConnectSpec{
			SparkVersion: "4.0.1",
			Image:        ptr.To("apache/spark:4.0.1"),
			SparkConf:    map[string]string{"spark.connect.grpc.binding.address": "0.0.0.0", "spark.kubernetes.driver.pod.name": "mine"},
			Server:       ServerSpec{SparkPodSpec: SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")}},
			Executor:     ExecutorSpec{SparkPodSpec: SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")}, Instances: ptr.To[int32](2)},
		},
	}
	for _, m := range muts {
		m(sc)
	}
	return sc
}

func TestServerApplication(t *testing.T) {
	sc := connect(func(sc *SparkConnect) {
		sc.Spec.Image = nil
		sc.Spec.Server.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			ServiceAccountName: "spark",
			Containers:         []corev1.Container{{Name: "sidecar", Image: "busybox"}, {Name: ServerContainer, Image: "corp/spark:4"}},
		}}
		sc.Spec.Executor.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "executor", Image: "corp/spark-exec:4"}}}}
	})
	app := ServerApplication(sc)
	assert.Equal(t, ServerMainClass, *app.Spec.MainClass)
	assert.Equal(t, "spark-connect-server", *app.Spec.Driver.PodName)
	assert.Equal(t, "corp/spark:4", *app.Spec.Driver.Image, "the container Spark uses by name")
	assert.Equal(t, "corp/spark-exec:4", *app.Spec.Executor.Image, "else the first container")
	assert.NotContains(t, app.Spec.SparkConf, "spark.kubernetes.driver.pod.name", "the Pod is <name>-server")
	assert.Equal(t, "0.0.0.0", app.Spec.SparkConf["spark.connect.grpc.binding.address"])
	assert.Contains(t, sc.Spec.SparkConf, "spark.kubernetes.driver.pod.name", "the SparkConnect is left alone")
	assert.Equal(t, int32(2), *app.Spec.Executor.Instances)
	assert.Empty(t, ValidateSparkConnect(sc))
}

func TestValidateSparkConnect(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*SparkConnect)
		want []string // field paths
	}{
		{"valid", func(*SparkConnect) {}, nil},
		{"the SDK's template without containers", func(sc *SparkConnect) {
			sc.Spec.Server.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{}, ServiceAccountName: "spark"}}
			sc.Spec.Executor.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{}}}
		}, nil},
		{"name too long for <name>-server", func(sc *SparkConnect) { sc.Name = "a234567890123456789012345678901234567890123456789012345678" }, []string{"metadata.name"}},
		{"no image anywhere", func(sc *SparkConnect) { sc.Spec.Image = nil }, []string{"spec.image"}},
		{"server memory in Kubernetes units", func(sc *SparkConnect) { sc.Spec.Server.Memory = ptr.To("1Gi") }, []string{"spec.server.memory"}},
		{"no Spark version", func(sc *SparkConnect) { sc.Spec.SparkVersion = "" }, []string{"spec.sparkVersion"}},
		{"bad service name", func(sc *SparkConnect) {
			sc.Spec.Server.Service = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "Connect_Svc"}}
		}, []string{"spec.server.service.metadata.name"}},
		{"routes", func(sc *SparkConnect) {
			sc.Spec.Server.GRPCRoute = &v1beta2.GRPCRouteConfiguration{Hostnames: []string{"{{$appName}}.connect.example.com"}}
			sc.Spec.Server.HTTPRoute = &v1beta2.HTTPRouteConfiguration{PathPrefix: "/{{$appNamespace}}/{{$appName}}"}
		}, nil},
		{"bad routes", func(sc *SparkConnect) {
			sc.Spec.Server.GRPCRoute = &v1beta2.GRPCRouteConfiguration{ParentRefs: []v1beta2.GatewayParentReference{{}}, Hostnames: []string{"Connect"}}
			sc.Spec.Server.HTTPRoute = &v1beta2.HTTPRouteConfiguration{PathPrefix: "ui"}
		}, []string{"spec.server.grpcRoute.parentRefs[0].name", "spec.server.grpcRoute.hostnames[0]", "spec.server.httpRoute.pathPrefix"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateSparkConnect(connect(tt.mut))
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			require.Equal(t, tt.want, got, "%v", errs)
		})
	}
}
