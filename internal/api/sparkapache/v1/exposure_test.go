package v1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExposureErrors(t *testing.T) {
	ports := &corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 4040}}}
	entry := func(name string) DriverExposure {
		return DriverExposure{ServiceMetadata: &metav1.ObjectMeta{Name: name}, ServiceSpec: ports.DeepCopy(),
			IngressMetadata: &metav1.ObjectMeta{Name: name}, HTTPRouteMetadata: &metav1.ObjectMeta{Name: name}, GRPCRouteMetadata: &metav1.ObjectMeta{Name: name},
			HTTPRouteSpec: &apiextensionsv1.JSON{Raw: []byte(`{"parentRefs":[{"name":"gw"}]}`)}, GRPCRouteSpec: &apiextensionsv1.JSON{Raw: []byte(`{"parentRefs":[{"name":"gw"}]}`)}}
	}
	tests := []struct {
		name string
		spec ApplicationSpec
		want []string
	}{
		{"nothing asked", ApplicationSpec{}, nil},
		{"one of each", ApplicationSpec{
			ConfigMapSpecs:           []ConfigMapSpec{{Name: "settings"}},
			DriverServiceIngressList: []DriverExposure{entry("ui")},
			DriverHTTPRouteList:      []DriverExposure{entry("web")},
			DriverGRPCRouteList:      []DriverExposure{entry("connect")},
		}, nil},
		{"a ConfigMap without a name", ApplicationSpec{ConfigMapSpecs: []ConfigMapSpec{{}}}, []string{"spec.configMapSpecs[0].name"}},
		{"two ConfigMaps of one name", ApplicationSpec{ConfigMapSpecs: []ConfigMapSpec{{Name: "a"}, {Name: "a"}}}, []string{"spec.configMapSpecs[1].name"}},
		{"a Service name that is no DNS label", ApplicationSpec{DriverServiceIngressList: []DriverExposure{func() DriverExposure {
			e := entry("ui")
			e.ServiceMetadata.Name = "ui.svc"
			return e
		}()}}, []string{"spec.driverServiceIngressList[0].serviceMetadata.name"}},
		{"one Service name in two lists", ApplicationSpec{DriverServiceIngressList: []DriverExposure{entry("ui")}, DriverHTTPRouteList: []DriverExposure{entry("ui")}},
			[]string{"spec.driverHttpRouteList[0].serviceMetadata.name"}},
		{"a Service without ports", ApplicationSpec{DriverServiceIngressList: []DriverExposure{func() DriverExposure {
			e := entry("ui")
			e.ServiceSpec = nil
			return e
		}()}}, []string{"spec.driverServiceIngressList[0].serviceSpec.ports"}},
		{"an Ingress without metadata", ApplicationSpec{DriverServiceIngressList: []DriverExposure{func() DriverExposure {
			e := entry("ui")
			e.IngressMetadata = nil
			return e
		}()}}, []string{"spec.driverServiceIngressList[0].ingressMetadata.name"}},
		{"an Ingress spec that is not one", ApplicationSpec{DriverServiceIngressList: []DriverExposure{func() DriverExposure {
			e := entry("ui")
			e.IngressSpec = &apiextensionsv1.JSON{Raw: []byte(`{"rules":"all"}`)}
			return e
		}()}}, []string{"spec.driverServiceIngressList[0].ingressSpec"}},
		{"a route without parentRefs, as Apache refuses", ApplicationSpec{DriverHTTPRouteList: []DriverExposure{func() DriverExposure {
			e := entry("web")
			e.HTTPRouteSpec = nil
			return e
		}()}}, []string{"spec.driverHttpRouteList[0].httpRouteSpec.parentRefs"}},
		{"a label the API server refuses", ApplicationSpec{ConfigMapSpecs: []ConfigMapSpec{{Name: "a", Labels: map[string]string{"a b": "c"}}}},
			[]string{"spec.configMapSpecs[0].labels[a b]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range exposureErrors(&tt.spec) {
				got = append(got, e.Field)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
