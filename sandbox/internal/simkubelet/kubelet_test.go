package simkubelet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

const (
	startDelay = time.Second
	runTime    = 5 * time.Second
)

// fixture is a running simulated kubelet on a fake API server, with a clock the test moves.
type fixture struct {
	k      *Kubelet
	client *fake.Clientset
	clock  *testingclock.FakeClock
}

func start(t *testing.T) *fixture {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "node-a"}, NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{client: fake.NewClientset(), clock: testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	f.k, err = New(Config{
		Client: f.client, NodeName: "node-a", NodeIP: netip.MustParseAddr("127.0.0.1"),
		ServingCert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, ClientCAs: x509.NewCertPool(),
		StateDir: t.TempDir(), StartDelay: startDelay, RunTime: runTime, Logf: t.Logf, Clock: f.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- f.k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	f.eventually(t, "the Node registered", func() error {
		_, err := f.client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		return err
	})
	return f
}

// eventually polls check for up to 10 s of real time.
func (f *fixture) eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err = check(); err == nil {
			return
		}
	}
	t.Fatalf("waiting for %s: %v", what, err)
}

// step moves the clock by d once a pod waits on it.
func (f *fixture) step(t *testing.T, d time.Duration) {
	t.Helper()
	f.eventually(t, "a pod to wait", func() error {
		if !f.clock.HasWaiters() {
			return errors.New("nothing waits on the clock")
		}
		return nil
	})
	f.clock.Step(d)
}

func (f *fixture) phase(t *testing.T, name string, want corev1.PodPhase) func() error {
	return func() error {
		pod, err := f.client.CoreV1().Pods("jobs").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Status.Phase != want {
			return errors.New("phase " + string(pod.Status.Phase))
		}
		return nil
	}
}

func pod(name string, policy corev1.RestartPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "jobs", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{
			NodeName: "node-a", RestartPolicy: policy,
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "main", Image: "apache/spark:4.0.1"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func TestPodsArePlayedByTheirRestartPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy corev1.RestartPolicy
		ends   bool
	}{
		{corev1.RestartPolicyNever, true},
		{corev1.RestartPolicyOnFailure, true},
		{corev1.RestartPolicyAlways, false},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			f := start(t)
			if _, err := f.client.CoreV1().Pods("jobs").Create(t.Context(), pod("p", tc.policy), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			f.step(t, startDelay)
			f.eventually(t, "Running", f.phase(t, "p", corev1.PodRunning))
			running, err := f.client.CoreV1().Pods("jobs").Get(t.Context(), "p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := running.Status
			if st.PodIP == "" || st.HostIP != "127.0.0.1" || st.StartTime == nil || len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Running == nil ||
				!st.ContainerStatuses[0].Ready || len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].State.Terminated == nil {
				t.Errorf("running status %+v", st)
			}
			if !ready(st) {
				t.Errorf("a running pod is not Ready: %+v", st.Conditions)
			}

			if !tc.ends {
				// Nothing more to wait for: the pod runs until deleted.
				time.Sleep(100 * time.Millisecond)
				if f.clock.HasWaiters() {
					t.Fatal("a pod that always restarts waits to end")
				}
				f.eventually(t, "still Running", f.phase(t, "p", corev1.PodRunning))
				return
			}
			f.step(t, runTime)
			f.eventually(t, "Succeeded", f.phase(t, "p", corev1.PodSucceeded))
			done, err := f.client.CoreV1().Pods("jobs").Get(t.Context(), "p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if term := done.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
				t.Errorf("container state %+v, want terminated with 0", done.Status.ContainerStatuses[0].State)
			}
			if ready(done.Status) {
				t.Errorf("a finished pod is Ready: %+v", done.Status.Conditions)
			}
		})
	}
}

func ready(st corev1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// A pod being deleted, playing or not yet seen, is ended and removed, as a kubelet removes it
// once its containers have stopped.
func TestDeletedPodsAreRemoved(t *testing.T) {
	f := start(t)
	p := pod("p", corev1.RestartPolicyAlways)
	now := metav1.NewTime(f.clock.Now())
	p.DeletionTimestamp = &now
	if _, err := f.client.CoreV1().Pods("jobs").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.eventually(t, "the pod removed", func() error {
		_, err := f.client.CoreV1().Pods("jobs").Get(t.Context(), "p", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.New("still there")
	})
}

func TestLogsSayNothingRan(t *testing.T) {
	f := start(t)
	if _, err := f.client.CoreV1().Pods("jobs").Create(t.Context(), pod("driver", corev1.RestartPolicyNever), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.eventually(t, "the pod in the kubelet's cache", func() error {
		_, err := f.k.pods.Pods("jobs").Get("driver")
		return err
	})
	for _, tc := range []struct {
		name, pod, container string
		status               int
		message              string
	}{
		{"a container", "driver", "main", http.StatusOK, ""},
		{"an init container", "driver", "init", http.StatusOK, ""},
		{"unknown pod", "nope", "main", http.StatusNotFound, `pod "nope" does not exist`},
		{"unknown container", "driver", "other", http.StatusNotFound, `container "other" not found in pod "driver"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs, err := f.k.logs("jobs", tc.pod, tc.container, &corev1.PodLogOptions{})
			if tc.status != http.StatusOK {
				var apiErr *prockubelet.APIError
				if !errors.As(err, &apiErr) || apiErr.Status != tc.status || apiErr.Message != tc.message {
					t.Fatalf("logs: %v, want %d %q", err, tc.status, tc.message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer logs.Close()
			var out strings.Builder
			if err := logs.WriteTo(t.Context(), &out); err != nil || out.String() != SimulatedLog {
				t.Errorf("log %q, %v; want %q", out.String(), err, SimulatedLog)
			}
		})
	}
}
