package prockubelet

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpandFollowsKubernetesRules(t *testing.T) {
	vars := map[string]string{"A": "1", "EMPTY": ""}
	for in, want := range map[string]string{
		"$(A)":          "1",
		"x$(A)y$(A)":    "x1y1",
		"$(EMPTY)-":     "-",
		"$(UNDEFINED)":  "$(UNDEFINED)",
		"$$(A)":         "$(A)",
		"$A":            "$A",
		"$(A":           "$(A",
		"trailing $":    "trailing $",
		"no references": "no references",
	} {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolveContainer(t *testing.T) {
	image := Image{Root: t.TempDir(), Entrypoint: []string{"/opt/entrypoint.sh"}, Cmd: []string{"bash"}, WorkingDir: "/opt/spark/work-dir", User: "185",
		Env: []string{"PATH=/usr/bin", "SPARK_HOME=/opt/spark"}}
	if err := os.MkdirAll(filepath.Join(image.Root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(image.Root, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/bash\nspark:x:185:185::/home/spark:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "spark-pi-driver", Namespace: "jobs", Labels: map[string]string{"spark-role": "driver"}},
		Status:     corev1.PodStatus{PodIP: "10.1.2.3"},
	}
	lookups := containerLookups{
		configMap: func(name string) (*corev1.ConfigMap, error) {
			return &corev1.ConfigMap{Data: map[string]string{"FROM_CM": "cm", "key": "value"}}, nil
		},
		secret: func(string) (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{"token": []byte("s3cret")}}, nil
		},
		apiServerHost: "10.1.2.1",
	}
	for _, tc := range []struct {
		name      string
		container corev1.Container
		pod       func(*corev1.Pod)
		argv      []string
		env       map[string]string
		uid, gid  uint32
		home      string
		err       string
	}{
		{
			name:      "image entrypoint, args expanded",
			container: corev1.Container{Name: "c", Args: []string{"driver", "--ip", "$(SPARK_DRIVER_BIND_ADDRESS)"}, Env: []corev1.EnvVar{{Name: "SPARK_DRIVER_BIND_ADDRESS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}},
			argv:      []string{"/opt/entrypoint.sh", "driver", "--ip", "10.1.2.3"},
			env:       map[string]string{"SPARK_HOME": "/opt/spark", "HOSTNAME": "spark-pi-driver", "KUBERNETES_SERVICE_HOST": "10.1.2.1", "KUBERNETES_SERVICE_PORT": "443"},
			uid:       185, gid: 185, home: "/home/spark",
		},
		{
			name:      "command replaces entrypoint and cmd; env refers to earlier env",
			container: corev1.Container{Name: "c", Command: []string{"sh", "-c"}, Args: []string{"echo $(GREETING)"}, Env: []corev1.EnvVar{{Name: "WHO", Value: "spark"}, {Name: "GREETING", Value: "hi $(WHO) in $(SPARK_HOME)"}}},
			argv:      []string{"sh", "-c", "echo hi spark in /opt/spark"},
			uid:       185, gid: 185, home: "/home/spark",
		},
		{
			name: "envFrom, configMap and secret keys, labels, later entries win",
			container: corev1.Container{Name: "c", EnvFrom: []corev1.EnvFromSource{{Prefix: "P_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
				Env: []corev1.EnvVar{
					{Name: "KEY", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "key"}}},
					{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "token"}}},
					{Name: "ROLE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['spark-role']"}}},
					{Name: "SPARK_HOME", Value: "/elsewhere"},
				}},
			argv: []string{"/opt/entrypoint.sh", "bash"},
			env:  map[string]string{"P_FROM_CM": "cm", "KEY": "value", "TOKEN": "s3cret", "ROLE": "driver", "SPARK_HOME": "/elsewhere"},
			uid:  185, gid: 185, home: "/home/spark",
		},
		{
			name:      "resource field",
			container: corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}, Env: []corev1.EnvVar{{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}}}},
			argv:      []string{"/opt/entrypoint.sh", "bash"},
			env:       map[string]string{"MEM": "1024"},
			uid:       185, gid: 185, home: "/home/spark",
		},
		{
			name:      "security context user without a passwd entry: group 0, home /",
			container: corev1.Container{Name: "c", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr[int64](1000)}},
			argv:      []string{"/opt/entrypoint.sh", "bash"},
			uid:       1000, gid: 0, home: "/",
		},
		{
			name:      "HOME set by the pod is kept",
			container: corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}}},
			argv:      []string{"/opt/entrypoint.sh", "bash"},
			uid:       185, gid: 185, home: "/tmp",
		},
		{
			name:      "runAsNonRoot refuses root",
			container: corev1.Container{Name: "c", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr[int64](0), RunAsNonRoot: ptr(true)}},
			err:       "runAsNonRoot",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			if tc.pod != nil {
				tc.pod(p)
			}
			got, err := resolveContainer(p, &tc.container, image, lookups)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.argv, tc.argv) {
				t.Errorf("argv %q, want %q", got.argv, tc.argv)
			}
			env := map[string]string{}
			for _, kv := range got.env {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			for k, v := range tc.env {
				if env[k] != v {
					t.Errorf("env %s=%q, want %q", k, env[k], v)
				}
			}
			if env["HOME"] != tc.home {
				t.Errorf("HOME=%q, want %q", env["HOME"], tc.home)
			}
			if got.uid != tc.uid || got.gid != tc.gid {
				t.Errorf("uid:gid %d:%d, want %d:%d", got.uid, got.gid, tc.uid, tc.gid)
			}
			if got.workingDir != "/opt/spark/work-dir" {
				t.Errorf("working dir %q", got.workingDir)
			}
		})
	}
}

func TestRenderHosts(t *testing.T) {
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod := func(name, ip string, labels map[string]string, isReady bool, subdomain string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "jobs", Labels: labels}, Spec: corev1.PodSpec{Subdomain: subdomain},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}}
		if isReady {
			p.Status.Conditions = ready
		}
		return p
	}
	driver := pod("app-driver", "10.0.0.2", map[string]string{"role": "driver"}, false, "")
	worker0 := pod("w-0", "10.0.0.3", map[string]string{"role": "worker"}, true, "workers")
	worker1 := pod("w-1", "10.0.0.4", map[string]string{"role": "worker"}, true, "workers")
	services := []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "driver-svc", Namespace: "jobs"}, Spec: corev1.ServiceSpec{ClusterIP: "None", PublishNotReadyAddresses: true, Selector: map[string]string{"role": "driver"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ui-svc", Namespace: "jobs"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"role": "driver"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: "jobs"}, Spec: corev1.ServiceSpec{ClusterIP: "None", Selector: map[string]string{"role": "worker"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "elsewhere"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"role": "worker"}}},
	}
	hosts := renderHosts(driver, "10.0.0.2", "10.0.0.1", services, []*corev1.Pod{driver, worker0, worker1})
	for _, want := range []string{
		"10.0.0.2\tapp-driver",
		"10.0.0.1\tkubernetes.default.svc.cluster.local kubernetes.default.svc kubernetes.default",
		"10.0.0.2\tdriver-svc.jobs.svc.cluster.local driver-svc.jobs.svc driver-svc.jobs driver-svc",
		"10.0.0.3\tworkers.jobs.svc.cluster.local workers.jobs.svc workers.jobs workers",
		"10.0.0.4\tworkers.jobs.svc.cluster.local workers.jobs.svc workers.jobs workers",
		"10.0.0.3\tw-0.workers.jobs.svc.cluster.local w-0.workers.jobs.svc w-0.workers.jobs w-0.workers",
	} {
		if !strings.Contains(hosts, want+"\n") {
			t.Errorf("hosts file lacks %q:\n%s", want, hosts)
		}
	}
	// The UI Service selects only a driver that is not ready yet, and "other" selects pods of
	// its own namespace, where there are none: neither resolves.
	for _, absent := range []string{"ui-svc", "other"} {
		if strings.Contains(hosts, absent) {
			t.Errorf("a Service without ready endpoints (%s) resolves:\n%s", absent, hosts)
		}
	}
}

func TestNormalizeImage(t *testing.T) {
	table := NewImageTable(map[string]Image{"apache/spark:4.0.1": {Root: "/a"}, "spark": {Root: "/b"}})
	for ref, want := range map[string]string{
		"apache/spark:4.0.1":                      "/a",
		"docker.io/apache/spark:4.0.1":            "/a",
		"spark:latest":                            "/b",
		"docker.io/library/spark":                 "/b",
		"index.docker.io/library/spark:latest":    "/b",
		"apache/spark:4.0.2":                      "",
		"registry.example.com/apache/spark:4.0.1": "",
	} {
		image, ok := table.Lookup(ref)
		if ok != (want != "") || image.Root != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", ref, image.Root, ok, want)
		}
	}
}

func TestResolvConfAndNameservers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(path, []byte("# comment\nnameserver 127.0.0.53\nnameserver 10.255.255.53\nnameserver fd00::1\nsearch example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	servers := reachableNameservers(path)
	if want := []netip.Addr{netip.MustParseAddr("10.255.255.53")}; !slices.Equal(servers, want) {
		t.Errorf("reachable nameservers %v, want %v", servers, want)
	}
	if got := resolvConf(servers); !strings.Contains(got, "nameserver 10.255.255.53\n") || strings.Contains(got, "127.0.0.1") {
		t.Errorf("resolv.conf with egress:\n%s", got)
	}
	if got := resolvConf(nil); !strings.Contains(got, "nameserver 127.0.0.1\n") {
		t.Errorf("resolv.conf without egress:\n%s", got)
	}
}

func TestBackoffDelay(t *testing.T) {
	for n, want := range []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		if got := backoffDelay(n); got != want {
			t.Errorf("backoffDelay(%d) = %s, want %s", n, got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A reader of a pod's /etc/hosts while the kubelet rewrites it always finds the lines every
// version shares (the API server's names among them): the rewrite neither empties the file
// nor leaves it longer than the new content.
func TestRewriteInPlaceNeverEmptiesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	const shared = "127.0.0.1\tlocalhost\n10.0.0.1\tkubernetes.default.svc kubernetes\n"
	long, short := shared+strings.Repeat("10.0.0.9\tsome-service.jobs.svc\n", 50), shared
	if err := rewriteInPlace(path, long); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	missing := make(chan string, 1)
	go func() {
		defer close(missing)
		for {
			select {
			case <-done:
				return
			default:
			}
			b, err := os.ReadFile(path)
			if err == nil && !strings.HasPrefix(string(b), shared) {
				missing <- string(b)
				return
			}
		}
	}()
	for i := range 2000 {
		content := long
		if i%2 == 1 {
			content = short
		}
		if err := rewriteInPlace(path, content); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if got, ok := <-missing; ok {
		t.Fatalf("a reader saw the file without its shared first lines: %q", got)
	}
	if b, _ := os.ReadFile(path); string(b) != short {
		t.Errorf("the file is %d bytes after the last rewrite, want the %d of its content", len(b), len(short))
	}
}
