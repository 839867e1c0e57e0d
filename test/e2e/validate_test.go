//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkhooks/sparkhooks/internal/localcluster"
)

// The in-process API server serves no admissionregistration API, so it cannot call webhooks.
// This test does what it would: it takes each example as the API server would store it (kubectl
// create --dry-run=server: defaulted, pruned, through the CRD schema and CEL) and posts it in an
// AdmissionReview over HTTPS to the TLS listener of the built server, with a real certificate.
func TestValidatingWebhookOverHTTPS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	webhook := startTLSHookServer(t)
	ns, err := shared.env.CreateNamespace(ctx, "validate")
	require.NoError(t, err)
	kubectl := func(args ...string) (string, error) {
		return localcluster.Kubectl(ctx, shared.env.API.Kubeconfig, append([]string{"--namespace", ns}, args...)...)
	}

	tests := []struct {
		file string
		// schema is what the API server refuses before any webhook; want is what the webhook
		// refuses. Both empty: the object is valid.
		schema, want string
	}{
		{file: "examples/spark-pi.yaml"},
		{file: "examples/spark-pi-dynamic-allocation.yaml"},
		{file: "examples/scheduled-spark-pi-nightly.yaml"},
		{file: "examples/testdata/broken-type.yaml", schema: `spec.type: Unsupported value: "Cobol"`},
		{file: "examples/testdata/broken-instances.yaml", schema: "spec.executor.instances"},
		{file: "examples/testdata/broken-memory-limit.yaml", want: `spec.executor.memoryLimit: Invalid value: "2Gi": is below executor.memory (4g)`},
		{file: "examples/testdata/broken-schedule.yaml", want: `spec.schedule: Invalid value: "61 * * * *"`},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			out, err := kubectl("create", "--dry-run=server", "-o", "json", "-f", filepath.Join(repoRoot, tt.file))
			if tt.schema != "" {
				require.Error(t, err)
				assert.Contains(t, out, tt.schema)
				return
			}
			require.NoError(t, err, out)
			resp := webhook.review(t, admissionv1.Create, "", []byte(out), nil)
			if tt.want == "" {
				assert.True(t, resp.Allowed, "%+v", resp.Result)
				return
			}
			require.False(t, resp.Allowed)
			assert.Contains(t, resp.Result.Message, tt.want)
			assert.Equal(t, int32(http.StatusUnprocessableEntity), resp.Result.Code)
		})
	}

	t.Run("status update of a stored invalid object", func(t *testing.T) {
		// Stored because this API server calls no webhook; on a cluster, one stored before the
		// webhook was installed or while it was down.
		file := filepath.Join(repoRoot, "examples/testdata/broken-memory-limit.yaml")
		out, err := kubectl("create", "-f", file)
		require.NoError(t, err, out)
		stored, err := kubectl("get", "sparkapplication", "broken-memory-limit", "-o", "json")
		require.NoError(t, err, stored)
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(stored), &obj))
		obj["status"] = map[string]any{"applicationState": map[string]any{"state": "FAILED", "errorMessage": "invalid spec"}}
		updated, err := json.Marshal(obj)
		require.NoError(t, err)

		resp := webhook.review(t, admissionv1.Update, "status", updated, []byte(stored))
		assert.True(t, resp.Allowed, "%+v", resp.Result)
		resp = webhook.review(t, admissionv1.Update, "", updated, []byte(stored))
		assert.True(t, resp.Allowed, "an update that leaves the spec alone: %+v", resp.Result)
		resp = webhook.review(t, admissionv1.Delete, "", nil, []byte(stored))
		assert.True(t, resp.Allowed, "%+v", resp.Result)
	})
}

type tlsHookServer struct {
	url    string
	client *http.Client
}

// startTLSHookServer runs the built binary with a serving certificate for 127.0.0.1 signed by a
// CA of its own, and returns a client that trusts only that CA, as the API server's caBundle does.
func startTLSHookServer(t *testing.T) *tlsHookServer {
	t.Helper()
	dir := t.TempDir()
	caPEM, certFile, keyFile := writeServingCertificate(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	// The later --tls-addr wins over the harness's own.
	server, err := localcluster.StartHookServer(context.Background(), shared.binary, filepath.Join(shared.logDir, "sparkhooks-tls.log"),
		"--tls-addr", addr, "--tls-cert-file", certFile, "--tls-key-file", keyFile)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, server.Stop()) })

	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	return &tlsHookServer{
		url:    "https://" + addr,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}},
	}
}

// review posts an AdmissionReview for a SparkApplication or ScheduledSparkApplication, as the API
// server would, to the route of its kind, and returns the response after checking the uid.
func (s *tlsHookServer) review(t *testing.T, op admissionv1.Operation, subResource string, object, oldObject []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	raw := object
	if raw == nil {
		raw = oldObject
	}
	var meta struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(raw, &meta))
	gvk := meta.GroupVersionKind()
	resource := map[string]string{"SparkApplication": "sparkapplications", "ScheduledSparkApplication": "scheduledsparkapplications"}[gvk.Kind]
	require.NotEmpty(t, resource, "kind %s", gvk.Kind)
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:         types.UID(fmt.Sprintf("%s/%s/%s", t.Name(), op, subResource)),
			Kind:        metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
			Resource:    metav1.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: resource},
			SubResource: subResource,
			Name:        meta.Metadata.Name,
			Namespace:   meta.Metadata.Namespace,
			Operation:   op,
		},
	}
	review.Request.Object.Raw = object
	review.Request.OldObject.Raw = oldObject
	body, err := json.Marshal(review)
	require.NoError(t, err)

	// The TLS listener may start a moment after /readyz on the plain one answers.
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = s.client.Post(s.url+"/"+strings.ToLower(gvk.Kind)+"/validate", "application/json", bytes.NewReader(body))
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "POST: %v", err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	require.Equal(t, review.Request.UID, out.Response.UID)
	return out.Response
}

// writeServingCertificate writes a certificate for 127.0.0.1 and its key into dir, signed by a new
// CA, and returns the CA's PEM and the two paths.
func writeServingCertificate(t *testing.T, dir string) (caPEM []byte, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sparkhooks-e2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err = x509.ParseCertificate(caDER)
	require.NoError(t, err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:   now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)

	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), certFile, keyFile
}
