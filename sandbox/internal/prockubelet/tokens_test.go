package prockubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestTokenRefreshTime(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seconds := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name     string
		lifetime *int64
		expires  time.Time
		want     time.Time
	}{
		{"the service-account volume's 3607 s: at 80 %", seconds(3607), now.Add(3607 * time.Second), now.Add(3607 * time.Second * 4 / 5)},
		{"a week: a day after it was issued", seconds(7 * 24 * 3600), now.Add(7 * 24 * time.Hour), now.Add(24 * time.Hour)},
		{"no lifetime in the answer: from the expiry", nil, now.Add(time.Hour), now.Add(48 * time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &authenticationv1.TokenRequest{
				Spec:   authenticationv1.TokenRequestSpec{ExpirationSeconds: tc.lifetime},
				Status: authenticationv1.TokenRequestStatus{ExpirationTimestamp: metav1.NewTime(tc.expires)},
			}
			if got := tokenRefreshTime(tr, now); !got.Equal(tc.want) {
				t.Errorf("refresh at %s, want %s", got, tc.want)
			}
		})
	}
}

// tokenAPI answers TokenRequests as kube-apiserver would, numbering the tokens, and records the
// requests.
type tokenAPI struct {
	mu       sync.Mutex
	requests []*authenticationv1.TokenRequest
	names    []string
	lifetime time.Duration
	refuse   error
}

func (a *tokenAPI) react(action clienttesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(clienttesting.CreateAction)
	if !ok || action.GetSubresource() != "token" {
		return false, nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refuse != nil {
		return true, nil, a.refuse
	}
	tr := create.GetObject().(*authenticationv1.TokenRequest).DeepCopy()
	a.requests = append(a.requests, tr.DeepCopy())
	a.names = append(a.names, action.(clienttesting.CreateActionImpl).Name)
	seconds := int64(a.lifetime / time.Second)
	tr.Spec.ExpirationSeconds = &seconds
	tr.Status = authenticationv1.TokenRequestStatus{
		Token: fmt.Sprintf("token-%d", len(a.requests)), ExpirationTimestamp: metav1.NewTime(time.Now().Add(a.lifetime)),
	}
	return true, tr, nil
}

// apiAccessPod is a pod with the volume the ServiceAccount admission plugin adds.
func apiAccessPod(audience string) *corev1.Pod {
	expiration := int64(3607)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "driver", Namespace: "jobs", UID: "pod-uid"},
		Spec: corev1.PodSpec{
			ServiceAccountName: "spark",
			Volumes: []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: audience, ExpirationSeconds: &expiration, Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}}},
		},
	}
}

func TestServiceAccountVolume(t *testing.T) {
	rootCA := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "jobs"}, Data: map[string]string{"ca.crt": "PEM"}}
	for _, tc := range []struct {
		name      string
		audience  string
		objects   []runtime.Object
		refuse    error
		audiences []string
		err       string
	}{
		{name: "the API server's audiences", objects: []runtime.Object{rootCA}},
		{name: "an audience of the volume's", audience: "vault", objects: []runtime.Object{rootCA}, audiences: []string{"vault"}},
		{name: "no kube-root-ca.crt yet", err: `configmaps "kube-root-ca.crt" not found`},
		{name: "the token refused", objects: []runtime.Object{rootCA}, refuse: apierrors.NewForbidden(authenticationv1.Resource("serviceaccounts/token"), "spark", errors.New("no")),
			err: "failed to fetch token: serviceaccounts/token.authentication.k8s.io \"spark\" is forbidden: no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.objects...)
			api := &tokenAPI{lifetime: time.Hour, refuse: tc.refuse}
			client.PrependReactor("create", "serviceaccounts", api.react)
			k := testKubelet(t, client, nil)
			dir := t.TempDir()
			volumes, err := k.prepareVolumes(t.Context(), apiAccessPod(tc.audience), dir)
			if tc.err != "" {
				var mountErr *mountError
				if !errors.As(err, &mountErr) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("prepareVolumes: %v, want a mount error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			volume := volumes.paths["kube-api-access-x7k2p"]
			for file, want := range map[string]string{"token": "token-1", "ca.crt": "PEM", "namespace": "jobs"} {
				if data, err := os.ReadFile(filepath.Join(volume, file)); err != nil || string(data) != want {
					t.Errorf("%s: %q, %v; want %q", file, data, err, want)
				}
			}
			if len(api.requests) != 1 {
				t.Fatalf("%d token requests, want 1", len(api.requests))
			}
			spec := api.requests[0].Spec
			if api.names[0] != "spark" || fmt.Sprint(spec.Audiences) != fmt.Sprint(tc.audiences) || spec.ExpirationSeconds == nil || *spec.ExpirationSeconds != 3607 {
				t.Errorf("token request for %s: %+v", api.names[0], spec)
			}
			if ref := spec.BoundObjectRef; ref == nil || *ref != (authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "driver", UID: "pod-uid"}) {
				t.Errorf("token bound to %+v, want the pod", ref)
			}
			if len(volumes.tokens) != 1 || !volumes.tokens[0].refreshAt.After(time.Now().Add(47*time.Minute)) {
				t.Errorf("tokens to refresh %+v, want one, in 48 minutes", volumes.tokens)
			}
		})
	}
}

func TestTokensAreRefreshed(t *testing.T) {
	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "jobs"}, Data: map[string]string{"ca.crt": "PEM"}})
	// Tokens that live a second are due again after 0.8 s.
	api := &tokenAPI{lifetime: time.Second}
	client.PrependReactor("create", "serviceaccounts", api.react)
	k := testKubelet(t, client, nil)
	pod := apiAccessPod("")
	// Root can give the files a group: a refreshed token keeps the fsGroup's.
	fsGroup := int64(-1)
	if os.Geteuid() == 0 {
		fsGroup = 1234
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: &fsGroup}
	}
	dir := t.TempDir()
	volumes, err := k.prepareVolumes(t.Context(), pod, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	refreshed := make(chan struct{})
	go func() {
		defer close(refreshed)
		newPodRunner(k, pod).refreshTokens(ctx, volumes.tokens)
	}()
	token := filepath.Join(volumes.paths["kube-api-access-x7k2p"], "token")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		data, err := os.ReadFile(token)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) == "token-3" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token is still %q after 10 s", data)
		}
	}
	cancel()
	<-refreshed
	if info, err := os.Stat(token); err != nil {
		t.Fatal(err)
	} else if gid := int64(info.Sys().(*syscall.Stat_t).Gid); fsGroup >= 0 && gid != fsGroup {
		t.Errorf("the refreshed token's group is %d, want the fsGroup %d", gid, fsGroup)
	}
	// Replaced by renames: no temporary files are left beside the token.
	entries, err := os.ReadDir(filepath.Dir(token))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "ca.crt namespace token" {
		t.Errorf("volume files: %s", got)
	}
}
