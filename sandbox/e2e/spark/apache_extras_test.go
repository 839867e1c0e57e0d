//go:build e2e

package spark

import (
	"context"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// extrasApp is an Apache SparkApplication whose program comes from a ConfigMap of its own
// configMapSpecs, mounted through the driver's pod template, and whose driver is exposed by a
// driverServiceIngressList entry. The program prints what the ConfigMap holds and stays up for
// the test to look at the Service.
const extrasApp = `
apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata:
  name: extras
spec:
  pyFiles: "local:///opt/extras/main.py"
  sparkConf:
    spark.kubernetes.authenticate.driver.serviceAccountName: "spark"
    spark.kubernetes.container.image: "apache/spark:{{SPARK_VERSION}}-python3"
  configMapSpecs:
    - name: extras-program
      data:
        greeting: "hello from configMapSpecs"
        main.py: |
          import time
          print("extras say:", open("/opt/extras/greeting").read(), flush=True)
          time.sleep(25)
  driverSpec:
    podTemplateSpec:
      spec:
        containers:
          - name: spark-kubernetes-driver
            volumeMounts:
              - name: program
                mountPath: /opt/extras
        volumes:
          - name: program
            configMap:
              name: extras-program
  driverServiceIngressList:
    - serviceMetadata:
        name: extras-ui
      serviceSpec:
        ports:
          - name: ui
            port: 4040
            targetPort: 4040
      ingressMetadata:
        name: extras-ui
  applicationTolerations:
    resourceRetainPolicy: Never
  runtimeVersions:
    sparkVersion: "4.0.1"
`

// TestApacheExtraChildren runs an application that asks for Apache's extra children: the
// driver runs a program it reads from its configMapSpecs ConfigMap, the driverServiceIngressList
// Service selects the running driver (its EndpointSlice holds the driver's address) behind the
// entry's Ingress, and all three go with the driver when the application ends.
func TestApacheExtraChildren(t *testing.T) {
	n := newNamespace(t, "apache-extras")
	if _, err := n.applyManifest([]byte(extrasApp)); err != nil {
		t.Fatal(err)
	}
	var driverIP string
	n.waitFor(apacheApplications, "extras", "RunningHealthy", appTimeout, func(app *unstructured.Unstructured) bool {
		if harness.NestedString(app, "status", "currentState", "currentStateSummary") != "RunningHealthy" {
			return false
		}
		pod, err := n.pod("extras-0-driver")
		if err != nil || pod.Status.PodIP == "" {
			return false
		}
		driverIP = pod.Status.PodIP
		return true
	})
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		slices, err := n.core.DiscoveryV1().EndpointSlices(n.name).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=extras-ui"})
		if err != nil {
			return false, nil
		}
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if len(e.Addresses) > 0 && e.Addresses[0] == driverIP {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the Service extras-ui has no endpoint at the driver's address %s: %v", driverIP, err)
	}
	// The driver's log, read while it runs: the release deletes it.
	var log string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Second, true, func(context.Context) (bool, error) {
		log, _ = n.kubectl("logs", "extras-0-driver")
		return strings.Contains(log, "extras say: hello from configMapSpecs"), nil
	})
	if err != nil {
		t.Errorf("the driver did not print its ConfigMap's greeting:\n%s", harness.Tail(log, 30))
	}
	ing, err := n.core.NetworkingV1().Ingresses(n.name).Get(ctx, "extras-ui", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the entry's Ingress: %v", err)
	}
	if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b == nil || b.Name != "extras-ui" || b.Port.Number != 4040 {
		t.Errorf("the Ingress routes to %+v, want the Service extras-ui on 4040", b)
	}

	n.waitFor(apacheApplications, "extras", "ResourceReleased", appTimeout, func(app *unstructured.Unstructured) bool {
		return harness.NestedString(app, "status", "currentState", "currentStateSummary") == "ResourceReleased"
	})
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, cmErr := n.core.CoreV1().ConfigMaps(n.name).Get(ctx, "extras-program", metav1.GetOptions{})
		_, svcErr := n.core.CoreV1().Services(n.name).Get(ctx, "extras-ui", metav1.GetOptions{})
		_, ingErr := n.core.NetworkingV1().Ingresses(n.name).Get(ctx, "extras-ui", metav1.GetOptions{})
		return apierrors.IsNotFound(cmErr) && apierrors.IsNotFound(svcErr) && apierrors.IsNotFound(ingErr), nil
	})
	if err != nil {
		t.Errorf("the extra ConfigMap, Service and Ingress are still there after ResourceReleased: %v", err)
	}
}
