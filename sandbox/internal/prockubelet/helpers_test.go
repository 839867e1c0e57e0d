package prockubelet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// testCA is a certificate authority for the tests' TLS.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue signs a certificate for cn with the given use, valid for ips.
func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage, ips ...net.IP) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// certPEM returns the CA's certificate as PEM.
func (ca *testCA) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// keyPairPEM returns an issued certificate and its key as PEM.
func keyPairPEM(t *testing.T, cert tls.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key})
}

// testKubelet is a kubelet that has not run: its pods are the runners a test adds.
func testKubelet(t *testing.T, client kubernetes.Interface, clientCAs *x509.CertPool) *Kubelet {
	t.Helper()
	dir := t.TempDir()
	return &Kubelet{
		cfg: Config{
			Client: client, NodeName: "node-a", NodeIP: netip.MustParseAddr("10.9.8.1"), StateDir: dir,
			ClientCAs: clientCAs, KubeletVersion: DefaultKubeletVersion, Logf: t.Logf, Now: time.Now,
		},
		runners: map[types.UID]*podRunner{}, started: map[string]int{}, hostsGen: make(chan struct{}, 1),
	}
}

// testNode is the Node of node-a at 10.9.8.1, as the process kubelet registers it.
func testNode(t *testing.T, client kubernetes.Interface) *Node {
	t.Helper()
	n, err := NewNode(NodeConfig{Client: client, Name: "node-a", IP: netip.MustParseAddr("10.9.8.1"), Runtime: "prockubelet", StateDir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
