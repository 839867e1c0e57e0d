package stack

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestKubeflowHostArgs(t *testing.T) {
	ip := netip.MustParseAddr("10.0.0.5")
	tests := []struct {
		name  string
		args  []string
		ports []corev1.ContainerPort
		want  []string
		hosts map[int32]int32
		err   bool
	}{
		{
			name:  "the webhook: its port and its metrics move",
			args:  []string{"webhook", "start", "--webhook-port=9443", "--metrics-bind-address=:8080", "--leader-election=true"},
			ports: []corev1.ContainerPort{{Name: "webhook", ContainerPort: 9443}, {Name: "metrics", ContainerPort: 8080}},
			want:  []string{"webhook", "start", "--webhook-port=40000", "--metrics-bind-address=10.0.0.5:40001", "--leader-election=true"},
			hosts: map[int32]int32{9443: 40000, 8080: 40001},
		},
		{
			name:  "the controller: no ports",
			args:  []string{"controller", "start", "--controller-threads=10"},
			want:  []string{"controller", "start", "--controller-threads=10"},
			hosts: map[int32]int32{},
		},
		{
			name:  "a port no argument listens at",
			args:  []string{"controller", "start", "--pprof-bind-address=:6060"},
			ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080}},
			err:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := 40000
			free := func() (int, error) { next++; return next - 1, nil }
			args, hosts, err := kubeflowHostArgs(tt.args, tt.ports, ip, free)
			if tt.err {
				if err == nil {
					t.Fatalf("no error; args %q", args)
				}
				return
			}
			if err != nil || !slices.Equal(args, tt.want) || len(hosts) != len(tt.hosts) {
				t.Fatalf("args %q, ports %v, %v; want %q, %v", args, hosts, err, tt.want, tt.hosts)
			}
			for c, h := range tt.hosts {
				if hosts[c] != h {
					t.Errorf("port %d on host port %d, want %d", c, hosts[c], h)
				}
			}
		})
	}
}

func TestLabelsMatch(t *testing.T) {
	pod := map[string]string{"app": "webhook", "release": "spark-operator"}
	tests := []struct {
		selector map[string]string
		want     bool
	}{
		{map[string]string{"app": "webhook"}, true},
		{map[string]string{"app": "webhook", "release": "spark-operator"}, true},
		{map[string]string{"app": "controller"}, false},
		{map[string]string{"app": "webhook", "tier": "x"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := labelsMatch(tt.selector, pod); got != tt.want {
			t.Errorf("labelsMatch(%v) = %v, want %v", tt.selector, got, tt.want)
		}
	}
}
