package prockubelet

import (
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tokenMaxAge is a day: a kubelet's token manager asks for a new token once 80 % of the old one's
// lifetime has passed, or a day after it was issued, whichever comes first.
const tokenMaxAge = 24 * time.Hour

// tokenRetry is the wait before asking again after a refresh failed; the old token stays in
// place meanwhile.
const tokenRetry = 10 * time.Second

// projectedToken is a serviceAccountToken source of a projected volume: the file the kubelet
// writes and keeps fresh.
type projectedToken struct {
	// volume is the projected volume of the file, whose fsGroup ownership a refresh restores.
	volume corev1.Volume
	dir    string
	source corev1.ServiceAccountTokenProjection
	mode   os.FileMode
	// refreshAt is when the kubelet asks for the next token.
	refreshAt time.Time
}

// writeToken asks the TokenRequest API for a token of the pod's service account, bound to the
// pod as a kubelet binds it (the Node authorizer and NodeRestriction let a node ask for exactly
// that, for pods bound to it), and writes it.
func (k *Kubelet) writeToken(ctx context.Context, pod *corev1.Pod, token *projectedToken) error {
	var audiences []string
	if token.source.Audience != "" {
		audiences = []string{token.source.Audience}
	}
	tr, err := k.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.Spec.ServiceAccountName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         audiences,
			ExpirationSeconds: token.source.ExpirationSeconds,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return &mountError{msg: fmt.Sprintf("failed to fetch token: %v", err)}
	}
	if err := writeFile(token.dir, token.source.Path, []byte(tr.Status.Token), token.mode); err != nil {
		return err
	}
	token.refreshAt = tokenRefreshTime(tr, k.cfg.Now())
	return nil
}

// tokenRefreshTime is when the kubelet asks for the token after tr, which it got at now: the
// lifetime the API server granted (it may shorten the one asked for) sets it.
func tokenRefreshTime(tr *authenticationv1.TokenRequest, now time.Time) time.Time {
	expires := tr.Status.ExpirationTimestamp.Time
	lifetime := expires.Sub(now)
	if tr.Spec.ExpirationSeconds != nil {
		lifetime = time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	}
	at := expires.Add(-lifetime / 5)
	if maxAge := expires.Add(-lifetime).Add(tokenMaxAge); maxAge.Before(at) {
		return maxAge
	}
	return at
}

// refreshTokens replaces the pod's token files with new tokens when they are due, until ctx
// ends.
func (r *podRunner) refreshTokens(ctx context.Context, tokens []*projectedToken) {
	if len(tokens) == 0 {
		return
	}
	for {
		next := tokens[0].refreshAt
		for _, t := range tokens[1:] {
			if t.refreshAt.Before(next) {
				next = t.refreshAt
			}
		}
		if !sleepCtx(ctx, next.Sub(r.k.cfg.Now())) {
			return
		}
		pod := r.current()
		for _, t := range tokens {
			if r.k.cfg.Now().Before(t.refreshAt) {
				continue
			}
			err := r.k.writeToken(ctx, pod, t)
			if err == nil {
				err = applyFSGroup(pod, t.volume, t.dir)
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				r.k.cfg.Logf("pod %s/%s: refreshing the token at %s: %v", r.namespace, r.name, t.source.Path, err)
				t.refreshAt = r.k.cfg.Now().Add(tokenRetry)
			}
		}
	}
}
