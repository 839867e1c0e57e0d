package stack

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestMoveListenAddress(t *testing.T) {
	to := netip.MustParseAddrPort("192.0.2.2:40001")
	for _, tc := range []struct {
		arg   string
		want  string
		moved bool
	}{
		{"--addr=:8080", "--addr=192.0.2.2:40001", true},
		{"--addr=0.0.0.0:8080", "--addr=192.0.2.2:40001", true},
		{"--addr=[::]:8080", "--addr=192.0.2.2:40001", true},
		{"-addr=:8080", "-addr=192.0.2.2:40001", true},
		{"--addr=127.0.0.1:8080", "--addr=127.0.0.1:8080", false},
		{"--tls-addr=:8443", "--tls-addr=:8443", false},
		{"--addr", "--addr", false},
		{"serve", "serve", false},
		{"--ingress-url-format=:8080", "--ingress-url-format=:8080", false},
		{"--metrics-bind-address=:8080", "--metrics-bind-address=192.0.2.2:40001", true},
		{"--policy-file=/etc/x:8080", "--policy-file=/etc/x:8080", false},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			got, moved := moveListenAddress(tc.arg, 8080, to)
			if got != tc.want || moved != tc.moved {
				t.Errorf("moveListenAddress(%q) = %q, %v; want %q, %v", tc.arg, got, moved, tc.want, tc.moved)
			}
		})
	}
}

func TestContainerEnv(t *testing.T) {
	field := func(name, divisor string) corev1.EnvVar {
		ref := &corev1.ResourceFieldSelector{Resource: name}
		if divisor != "" {
			ref.Divisor = resource.MustParse(divisor)
		}
		return corev1.EnvVar{Name: "V", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: ref}}
	}
	resources := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceCPU: resource.MustParse("1500m")},
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
	}
	for _, tc := range []struct {
		name string
		env  corev1.EnvVar
		want string // the variable, "" for none
		err  string
	}{
		{"a value", corev1.EnvVar{Name: "V", Value: "x"}, "V=x", ""},
		{"a memory limit", field("limits.memory", ""), "V=536870912", ""},
		{"a memory request in Mi", field("requests.memory", "1Mi"), "V=128", ""},
		{"a CPU limit rounded up", field("limits.cpu", ""), "V=2", ""},
		{"a CPU limit in millicores", field("limits.cpu", "1m"), "V=1500", ""},
		{"a limit the container does not set", field("limits.ephemeral-storage", ""), "", ""},
		{"not a resource field", field("memory", ""), "", `resource field "memory"`},
		{"a field of the pod", corev1.EnvVar{Name: "V", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}, "", "only values and resource fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := containerEnv(corev1.Container{Env: []corev1.EnvVar{tc.env}, Resources: resources})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("containerEnv: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(env, " "); got != tc.want {
				t.Errorf("env %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostEndpointSlice(t *testing.T) {
	container := corev1.Container{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "webhook", ContainerPort: 8443}}}
	hostPorts := map[int32]int32{8080: 40001, 8443: 40002}
	service := func(ports ...corev1.ServicePort) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "sparkhooks", Namespace: "sparkhooks", UID: "svc-uid"}, Spec: corev1.ServiceSpec{Ports: ports}}
	}
	for _, tc := range []struct {
		name  string
		svc   *corev1.Service
		ports string
		err   string
	}{
		{
			name: "the chart's ports, by name",
			svc: service(corev1.ServicePort{Name: "http", Port: 8080, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
				corev1.ServicePort{Name: "webhook", Port: 443, TargetPort: intstr.FromString("webhook"), Protocol: corev1.ProtocolTCP}),
			ports: "http:40001/TCP webhook:40002/TCP",
		},
		{
			name:  "by number",
			svc:   service(corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}),
			ports: "metrics:40001/TCP",
		},
		{name: "a name the container lacks", svc: service(corev1.ServicePort{Name: "x", TargetPort: intstr.FromString("grpc")}), err: `no port named "grpc"`},
		{name: "a number the container lacks", svc: service(corev1.ServicePort{Name: "x", TargetPort: intstr.FromInt32(9000)}), err: "targets port 9000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slice, err := hostEndpointSlice(tc.svc, container, hostPorts, netip.MustParseAddr("192.0.2.2"), "node-a")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("hostEndpointSlice: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ports []string
			for _, p := range slice.Ports {
				ports = append(ports, fmt.Sprintf("%s:%d/%s", *p.Name, *p.Port, *p.Protocol))
			}
			if got := strings.Join(ports, " "); got != tc.ports {
				t.Errorf("ports %s, want %s", got, tc.ports)
			}
			e := slice.Endpoints
			if len(e) != 1 || fmt.Sprint(e[0].Addresses) != "[192.0.2.2]" || !*e[0].Conditions.Ready || *e[0].NodeName != "node-a" {
				t.Errorf("endpoints %+v", e)
			}
			if slice.Labels["kubernetes.io/service-name"] != "sparkhooks" || slice.Labels["endpointslice.kubernetes.io/managed-by"] != hostEndpointsManager {
				t.Errorf("labels %v", slice.Labels)
			}
			if owners := slice.OwnerReferences; len(owners) != 1 || owners[0].Kind != "Service" || owners[0].UID != "svc-uid" {
				t.Errorf("owners %+v", owners)
			}
		})
	}
}
