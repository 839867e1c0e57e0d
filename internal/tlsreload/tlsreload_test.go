package tlsreload

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const serverName = "sparkhooks.test"

var epoch = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// clock is a settable time source shared with handshake goroutines.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newAuthority(t *testing.T) *authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1000),
		Subject:               pkix.Name{CommonName: "sparkhooks test CA"},
		NotBefore:             epoch.Add(-time.Hour),
		NotAfter:              epoch.Add(365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &authority{cert: cert, key: key, pool: pool}
}

type pair struct {
	certPEM, keyPEM []byte
}

// issue signs a serving certificate for serverName that is valid from an hour before epoch until
// notAfter.
func (a *authority) issue(t *testing.T, serial int64, notAfter time.Time) pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: serverName},
		DNSNames:     []string{serverName},
		NotBefore:    epoch.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pair{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

type files struct {
	dir, cert, key string
}

func newFiles(t *testing.T) files {
	dir := t.TempDir()
	return files{dir: dir, cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key")}
}

// write replaces both files by rename, so that each gets a new identity like a Secret volume
// update gives it.
func (f files) write(t *testing.T, certPEM, keyPEM []byte) {
	t.Helper()
	for path, data := range map[string][]byte{f.cert: certPEM, f.key: keyPEM} {
		tmp := path + ".new"
		require.NoError(t, os.WriteFile(tmp, data, 0o600))
		require.NoError(t, os.Rename(tmp, path))
	}
}

func serial(t *testing.T, r *Reloader) int64 {
	t.Helper()
	cert, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: serverName})
	require.NoError(t, err)
	require.NotNil(t, cert)
	return cert.Leaf.SerialNumber.Int64()
}

func TestNewRejects(t *testing.T) {
	ca := newAuthority(t)
	good := ca.issue(t, 1, epoch.Add(24*time.Hour))
	other := ca.issue(t, 2, epoch.Add(24*time.Hour))
	expired := ca.issue(t, 3, epoch.Add(-time.Minute))
	tests := []struct {
		name            string
		certPEM, keyPEM []byte // a nil key is not written at all
		want            string
	}{
		{"mismatched key", good.certPEM, other.keyPEM, "private key does not match"},
		{"not PEM", []byte("hello"), good.keyPEM, "failed to find any PEM data"},
		{"expired", expired.certPEM, expired.keyPEM, "expired at"},
		{"missing key", good.certPEM, nil, "TLS key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFiles(t)
			require.NoError(t, os.WriteFile(f.cert, tt.certPEM, 0o600))
			if tt.keyPEM != nil {
				require.NoError(t, os.WriteFile(f.key, tt.keyPEM, 0o600))
			}
			_, err := New(f.cert, f.key, Options{Now: (&clock{now: epoch}).Now})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestTLSConfig(t *testing.T) {
	ca := newAuthority(t)
	f := newFiles(t)
	p := ca.issue(t, 1, epoch.Add(24*time.Hour))
	f.write(t, p.certPEM, p.keyPEM)
	r, err := New(f.cert, f.key, Options{Now: (&clock{now: epoch}).Now})
	require.NoError(t, err)
	cfg := r.TLSConfig()
	assert.Equal(t, uint16(tls.VersionTLS12), cfg.MinVersion)
	assert.Empty(t, cfg.Certificates, "every handshake must go through GetCertificate")
	assert.Equal(t, []string{"http/1.1"}, cfg.NextProtos)
}

func TestReloadIsRateLimitedAndKeepsTheLastGoodPair(t *testing.T) {
	ca := newAuthority(t)
	f := newFiles(t)
	clk := &clock{now: epoch}
	p1 := ca.issue(t, 1, epoch.Add(24*time.Hour))
	f.write(t, p1.certPEM, p1.keyPEM)
	r, err := New(f.cert, f.key, Options{Now: clk.Now, CheckInterval: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, int64(1), serial(t, r))

	p2 := ca.issue(t, 2, epoch.Add(48*time.Hour))
	f.write(t, p2.certPEM, p2.keyPEM)
	clk.Advance(30 * time.Second)
	assert.Equal(t, int64(1), serial(t, r), "within the check interval the files are not looked at")
	clk.Advance(30 * time.Second)
	assert.Equal(t, int64(2), serial(t, r), "after the interval the new pair is served")

	// A rotation caught half-way: the new certificate is there, its key is not yet.
	p3 := ca.issue(t, 3, epoch.Add(72*time.Hour))
	f.write(t, p3.certPEM, p2.keyPEM)
	clk.Advance(time.Minute)
	assert.Equal(t, int64(2), serial(t, r), "a mismatched pair keeps the old certificate")
	assert.ErrorContains(t, r.Reload(), "unchanged since they last failed")

	f.write(t, p3.certPEM, p3.keyPEM)
	clk.Advance(time.Minute)
	assert.Equal(t, int64(3), serial(t, r), "the completed rotation is picked up")

	require.NoError(t, os.Remove(f.key))
	assert.ErrorContains(t, r.Reload(), "TLS key")
	assert.Equal(t, int64(3), r.Certificate().Leaf.SerialNumber.Int64(), "missing files keep the old certificate")

	expired := ca.issue(t, 4, epoch.Add(time.Hour))
	f.write(t, expired.certPEM, expired.keyPEM)
	clk.Advance(2 * time.Hour)
	assert.ErrorContains(t, r.Reload(), "expired")
	assert.Equal(t, int64(3), serial(t, r))
}

// TestRotationDuringLiveServer rotates the files under a running HTTPS server: a keep-alive
// connection opened before the rotation keeps working, and the next new connection gets the new
// certificate.
func TestRotationDuringLiveServer(t *testing.T) {
	ca := newAuthority(t)
	f := newFiles(t)
	clk := &clock{now: epoch}
	p1 := ca.issue(t, 1, epoch.Add(24*time.Hour))
	f.write(t, p1.certPEM, p1.keyPEM)
	r, err := New(f.cert, f.key, Options{Now: clk.Now, CheckInterval: time.Second})
	require.NoError(t, err)

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv.TLS = r.TLSConfig()
	srv.StartTLS()
	defer srv.Close()

	transport := &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs:    ca.pool,
		ServerName: serverName,
		// The client checks the certificate against the test clock, not the wall clock.
		Time: clk.Now,
	}}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	type result struct {
		serial int64
		reused bool
	}
	get := func() result {
		t.Helper()
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, "ok", string(body))
		return result{serial: resp.TLS.PeerCertificates[0].SerialNumber.Int64(), reused: reused}
	}

	assert.Equal(t, result{serial: 1, reused: false}, get())

	p2 := ca.issue(t, 2, epoch.Add(48*time.Hour))
	f.write(t, p2.certPEM, p2.keyPEM)
	clk.Advance(time.Minute)

	assert.Equal(t, result{serial: 1, reused: true}, get(), "the open connection survives the rotation")

	transport.CloseIdleConnections()
	assert.Equal(t, result{serial: 2, reused: false}, get(), "a new connection gets the new certificate")
	assert.Equal(t, result{serial: 2, reused: true}, get())
}

func TestConcurrentHandshakes(t *testing.T) {
	ca := newAuthority(t)
	f := newFiles(t)
	clk := &clock{now: epoch}
	p1 := ca.issue(t, 1, epoch.Add(24*time.Hour))
	f.write(t, p1.certPEM, p1.keyPEM)
	r, err := New(f.cert, f.key, Options{Now: clk.Now, CheckInterval: time.Nanosecond})
	require.NoError(t, err)
	p2 := ca.issue(t, 2, epoch.Add(24*time.Hour))

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				clk.Advance(time.Millisecond)
				cert, err := r.GetCertificate(&tls.ClientHelloInfo{})
				if err != nil || cert == nil {
					t.Errorf("GetCertificate = %v, %v", cert, err)
					return
				}
			}
		})
	}
	f.write(t, p2.certPEM, p2.keyPEM)
	wg.Wait()
	clk.Advance(time.Second)
	assert.Equal(t, int64(2), serial(t, r))
}
