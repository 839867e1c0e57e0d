package sparkcluster

import (
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
)

// The Apache operator keeps what the templates say of shutdown and name resolution; the worker's
// search domain for its peers is added to the user's, not instead of it.
func TestTemplatesKeepGracePeriodAndDNSConfig(t *testing.T) {
	c := &sparkv1.SparkCluster{}
	if err := yaml.UnmarshalStrict([]byte(`apiVersion: spark.apache.org/v1
kind: SparkCluster
metadata: {name: prod, namespace: spark}
spec:
  runtimeVersions: {sparkVersion: "4.0.1"}
  masterSpec:
    statefulSetSpec:
      template:
        spec:
          terminationGracePeriodSeconds: 120
  workerSpec:
    statefulSetSpec:
      template:
        spec:
          terminationGracePeriodSeconds: 300
          dnsConfig:
            nameservers: [10.0.0.10]
            searches: [corp.example.com]
            options: [{name: ndots, value: "2"}]
`), c); err != nil {
		t.Fatal(err)
	}
	objs := build(c)
	if got := *objs.master.Spec.Template.Spec.TerminationGracePeriodSeconds; got != 120 {
		t.Errorf("master grace period %d, want the template's 120", got)
	}
	worker := objs.worker.Spec.Template.Spec
	if got := *worker.TerminationGracePeriodSeconds; got != 300 {
		t.Errorf("worker grace period %d, want the template's 300", got)
	}
	dns := worker.DNSConfig
	if dns == nil || !slices.Equal(dns.Nameservers, []string{"10.0.0.10"}) || len(dns.Options) != 1 || dns.Options[0].Name != "ndots" {
		t.Fatalf("worker dnsConfig %+v lost the template's nameservers or options", dns)
	}
	if want := []string{"corp.example.com", "prod-worker-svc.spark.svc.cluster.local"}; !slices.Equal(dns.Searches, want) {
		t.Errorf("worker searches %v, want %v", dns.Searches, want)
	}
	// Built twice, the template is not changed under the next build (byte-stable children).
	if again := build(c).worker.Spec.Template.Spec.DNSConfig.Searches; !slices.Equal(again, dns.Searches) {
		t.Errorf("a second build gives searches %v", again)
	}
}
