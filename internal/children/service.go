package children

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Spark's feature steps an application can leave out (spark.kubernetes.driver.pod.
// excludedFeatureSteps, Spark 4.1) that the builder stands in for.
const (
	driverServiceFeatureStep = "org.apache.spark.deploy.k8s.features.DriverServiceFeatureStep"
	networkPolicyFeatureStep = "org.apache.spark.deploy.k8s.features.NetworkPolicyFeatureStep"
)

// excludesFeatureStep reports whether the application leaves out one of Spark's driver feature
// steps, which Spark honours from 4.1.
func (b *builder) excludesFeatureStep(step string) bool {
	return b.version.atLeast(4, 1) && slices.Contains(splitList(b.conf.get("spark.kubernetes.driver.pod.excludedFeatureSteps")), step)
}

// driverService is Spark's DriverServiceFeatureStep: the headless Service whose name is the
// first label of spark.driver.host, through which executors reach the driver. An application
// that excludes the step (with spark.kubernetes.executor.useDriverPodIP, executors dial the
// driver's Pod IP) gets neither the Service nor a spark.driver.host naming it.
func (b *builder) driverService() {
	if b.excludesFeatureStep(driverServiceFeatureStep) {
		return
	}
	c := b.conf
	labels := prefixed(c, "spark.kubernetes.driver.service.label.")
	if labels == nil {
		labels = map[string]string{}
	}
	labels[sparkpod.LabelAppSelector] = b.sub.AppID
	labels[sparkpod.LabelAppName] = b.app.Name
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        b.driverServiceName,
			Namespace:   b.namespace(),
			Labels:      labels,
			Annotations: nilIfEmpty(prefixed(c, "spark.kubernetes.driver.service.annotation.")),
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			// A subset of the driver's labels, enough to pick this attempt's driver alone.
			Selector: map[string]string{sparkpod.LabelAppSelector: b.sub.AppID, sparkpod.LabelSparkRole: sparkpod.RoleDriver},
			// Executors must resolve the driver while it is not Ready: a readiness probe on the
			// driver (a Spark Connect server's on its gRPC port, or a user's) passes only once
			// the SparkContext is up, and the context waits for executors to register first.
			// Found running a real Spark Connect server: its executors failed on an unknown host.
			PublishNotReadyAddresses: true,
		},
	}
	if p := c.get("spark.kubernetes.driver.service.ipFamilyPolicy"); p != "" {
		policy := corev1.IPFamilyPolicy(p)
		svc.Spec.IPFamilyPolicy = &policy
	}
	for _, f := range splitList(c.get("spark.kubernetes.driver.service.ipFamilies")) {
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, corev1.IPFamily(f))
	}
	for _, p := range []struct {
		name string
		port int32
	}{
		{"driver-rpc-port", b.driverPort()},
		{"blockmanager", b.blockManagerPort()},
		{"spark-ui", b.uiPort()},
	} {
		if p.port != 0 {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: p.name, Port: p.port, TargetPort: intstr.FromInt32(p.port), Protocol: corev1.ProtocolTCP,
			})
		}
	}
	b.objs.DriverService = svc
}

// IsDriverServiceOf reports whether obj, a Service as answered to Metacontroller (decoded JSON),
// is the headless driver Service of the attempt whose Spark application id is appID, whatever
// its name: the releases before each attempt had a name of its own called it <app>-driver-svc,
// and an attempt they started keeps that name, which its driver gave its executors.
func IsDriverServiceOf(obj any, appID string) bool {
	svc, _ := obj.(map[string]any)
	spec, _ := svc["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	return appID != "" && spec["clusterIP"] == corev1.ClusterIPNone &&
		selector[sparkpod.LabelAppSelector] == appID && selector[sparkpod.LabelSparkRole] == sparkpod.RoleDriver
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
