// Package tlsreload serves a TLS certificate from PEM files that are replaced on disk while the
// server runs, as cert-manager and the kubelet do when they rotate a Secret volume.
package tlsreload

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultCheckInterval bounds how often a handshake looks at the files. Rotation happens days
// before expiry, so a few seconds of delay cost nothing, and most handshakes skip the stat calls.
const DefaultCheckInterval = 10 * time.Second

// Options tune a Reloader; the zero value is ready to use.
type Options struct {
	// CheckInterval is the least time between two looks at the files (DefaultCheckInterval if 0).
	CheckInterval time.Duration
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// Logger receives rotations and failed reloads (discarded if nil).
	Logger *slog.Logger
}

// Reloader hands out the current certificate for TLS handshakes and reloads the files when their
// identity, size or modification time changes. A pair that does not load (a half-written
// rotation, a key that does not match, an expired certificate) is logged and the previous
// certificate stays in use. Established connections are never touched: a certificate only
// matters during a handshake.
type Reloader struct {
	certFile, keyFile string
	interval          time.Duration
	now               func() time.Time
	logger            *slog.Logger

	cert atomic.Pointer[tls.Certificate]

	mu        sync.Mutex // guards the fields below; handshakes that find it held skip the check
	nextCheck time.Time
	loaded    pairState // the files the certificate in use came from
	failed    pairState // the files that last failed to load, so they are not parsed again
}

// pairState identifies one version of the two files on disk.
type pairState struct {
	cert, key os.FileInfo
}

func (a pairState) same(b pairState) bool {
	return sameFile(a.cert, b.cert) && sameFile(a.key, b.key)
}

func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// New loads the pair once. Unlike a later reload, a first load that fails is an error: there is
// no certificate to fall back on.
func New(certFile, keyFile string, opts Options) (*Reloader, error) {
	r := &Reloader{
		certFile: certFile,
		keyFile:  keyFile,
		interval: opts.CheckInterval,
		now:      opts.Now,
		logger:   opts.Logger,
	}
	if r.interval <= 0 {
		r.interval = DefaultCheckInterval
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	state, err := r.stat()
	if err != nil {
		return nil, err
	}
	cert, err := r.load()
	if err != nil {
		return nil, err
	}
	r.cert.Store(cert)
	r.loaded = state
	r.nextCheck = r.now().Add(r.interval)
	return r, nil
}

// TLSConfig returns a server configuration that takes its certificate from r. It offers only
// HTTP/1.1: the API server's webhook client needs nothing more, and HTTP/2 on admission webhooks
// has been a denial-of-service vector.
func (r *Reloader) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: r.GetCertificate,
		NextProtos:     []string{"http/1.1"},
	}
}

// GetCertificate implements tls.Config.GetCertificate.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.maybeReload()
	return r.cert.Load(), nil
}

// Certificate returns the certificate in use.
func (r *Reloader) Certificate() *tls.Certificate {
	return r.cert.Load()
}

func (r *Reloader) maybeReload() {
	if !r.mu.TryLock() {
		return // another handshake is checking; this one uses the current certificate
	}
	defer r.mu.Unlock()
	now := r.now()
	if now.Before(r.nextCheck) {
		return
	}
	r.nextCheck = now.Add(r.interval)
	_ = r.reloadLocked()
}

// Reload looks at the files now, whatever the check interval, and switches certificates if they
// changed and load. It reports why a changed pair was not taken.
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked()
}

func (r *Reloader) reloadLocked() error {
	state, err := r.stat()
	if err != nil {
		// During a Secret update the files can be briefly absent.
		r.logger.Warn("TLS certificate files unreadable; keeping the current certificate", slog.String("error", err.Error()))
		return err
	}
	if state.same(r.loaded) {
		return nil
	}
	if state.same(r.failed) {
		return errors.New("TLS certificate files unchanged since they last failed to load")
	}
	cert, err := r.load()
	if err != nil {
		r.failed = state
		r.logger.Error("TLS certificate reload failed; keeping the current certificate", slog.String("error", err.Error()))
		return err
	}
	r.cert.Store(cert)
	r.loaded = state
	r.failed = pairState{}
	r.logger.Info("TLS certificate reloaded",
		slog.String("serial", cert.Leaf.SerialNumber.String()),
		slog.Time("notAfter", cert.Leaf.NotAfter))
	return nil
}

func (r *Reloader) stat() (pairState, error) {
	certInfo, err := os.Stat(r.certFile)
	if err != nil {
		return pairState{}, fmt.Errorf("TLS certificate: %w", err)
	}
	keyInfo, err := os.Stat(r.keyFile)
	if err != nil {
		return pairState{}, fmt.Errorf("TLS key: %w", err)
	}
	return pairState{cert: certInfo, key: keyInfo}, nil
}

func (r *Reloader) load() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS key pair %s, %s: %w", r.certFile, r.keyFile, err)
	}
	// LoadX509KeyPair fills Leaf since Go 1.23.
	if cert.Leaf == nil {
		return nil, fmt.Errorf("load TLS key pair %s: no leaf certificate", r.certFile)
	}
	if now := r.now(); now.After(cert.Leaf.NotAfter) {
		return nil, fmt.Errorf("TLS certificate %s expired at %s", r.certFile, cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &cert, nil
}
