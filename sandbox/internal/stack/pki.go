package stack

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the cluster's certificate authority and the key pairs its components use, as kubeadm
// lays them out: one CA signs the API server's serving certificate, every client certificate
// (the identity a component authenticates with, CN the user and O the groups) and the kubelet's
// serving certificate. The service-account key signs the tokens the API server issues.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
}

// certificate is one issued key pair, written as <name>.crt and <name>.key.
type certificate struct {
	CertFile, KeyFile string
	CertPEM, KeyPEM   []byte
}

func (c certificate) tlsCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair(c.CertPEM, c.KeyPEM)
}

// newPKI creates a CA valid for validity under dir.
func newPKI(dir string, now time.Time, validity time.Duration) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "sparkhooks-local-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating the cluster CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &pki{dir: dir, caCert: cert, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	if err := os.WriteFile(p.caFile(), p.caPEM, 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) caFile() string { return filepath.Join(p.dir, "ca.crt") }

// certRequest says what one certificate is for.
type certRequest struct {
	name          string // file name
	commonName    string
	organizations []string
	dnsNames      []string
	ips           []net.IP
	server        bool
	client        bool
}

func (p *pki) issue(req certRequest, now time.Time, validity time.Duration) (certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: req.commonName, Organization: req.organizations},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     req.dnsNames,
		IPAddresses:  req.ips,
	}
	if req.server {
		template.ExtKeyUsage = append(template.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if req.client {
		template.ExtKeyUsage = append(template.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, template, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return certificate{}, fmt.Errorf("issuing %s: %w", req.name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return certificate{}, err
	}
	c := certificate{
		CertFile: filepath.Join(p.dir, req.name+".crt"),
		KeyFile:  filepath.Join(p.dir, req.name+".key"),
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	if err := os.WriteFile(c.CertFile, c.CertPEM, 0o644); err != nil {
		return certificate{}, err
	}
	if err := os.WriteFile(c.KeyFile, c.KeyPEM, 0o600); err != nil {
		return certificate{}, err
	}
	return c, nil
}

// serviceAccountKey writes the key pair that signs service-account tokens (sa.key, sa.pub): RSA,
// as every issuer verifier accepts it.
func (p *pki) serviceAccountKey() (privateFile, publicFile string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	privateFile, publicFile = filepath.Join(p.dir, "sa.key"), filepath.Join(p.dir, "sa.pub")
	if err := os.WriteFile(privateFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(publicFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return "", "", err
	}
	return privateFile, publicFile, nil
}

func (p *pki) certPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return pool
}

func marshalKey(key crypto.Signer) ([]byte, error) {
	ecKey, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("unexpected key type %T", key)
	}
	der, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}
