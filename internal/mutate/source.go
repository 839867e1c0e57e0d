package mutate

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// PolicySource hands out the policy to apply to the next request.
type PolicySource interface {
	Policy() *Policy
}

// StaticPolicy is a PolicySource that never changes; a nil policy has no rules.
type StaticPolicy struct{ P *Policy }

// Policy returns the fixed policy.
func (s StaticPolicy) Policy() *Policy { return s.P }

// FileSource serves the policy in a file and picks up changes to it. A change that does not
// validate is logged and otherwise ignored: the last good policy stays in force, because refusing
// or unshaping every Spark pod over a typo would be worse than a stale policy.
type FileSource struct {
	path   string
	logger *slog.Logger

	current atomic.Pointer[Policy]

	mu       sync.Mutex // serialises reloads
	lastData []byte     // content of the last file read, good or bad
	lastErr  error      // why lastData was rejected; nil when it is in force
}

// NewFileSource loads path. Unlike later reloads, a first load that fails is an error: there is no
// good policy to fall back on.
func NewFileSource(path string, logger *slog.Logger) (*FileSource, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	s := &FileSource{path: path, logger: logger, lastData: data}
	s.current.Store(p)
	logger.Info("policy loaded", slog.String("path", path), slog.Any("rules", p.RuleNames()))
	return s, nil
}

// Policy returns the policy in force.
func (s *FileSource) Policy() *Policy { return s.current.Load() }

// Err reports why the file's current content is not in force, or nil when it is. Readiness checks
// can surface it.
func (s *FileSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Reload reads the file once and switches to its policy if the content changed and validates. It
// reports whether the policy in force changed. The content, not the modification time, decides:
// Kubernetes swaps ConfigMap volumes through symlinks, and editors may keep the mtime.
func (s *FileSource) Reload() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(s.path)
	if err != nil {
		// A ConfigMap update briefly removes the file; keep the policy and try again next time.
		return false, fmt.Errorf("read policy: %w", err)
	}
	if bytes.Equal(data, s.lastData) {
		return false, s.lastErr
	}
	s.lastData = data
	p, err := ParsePolicy(data)
	if err != nil {
		s.lastErr = fmt.Errorf("policy %s: %w", s.path, err)
		return false, s.lastErr
	}
	s.lastErr = nil
	s.current.Store(p)
	return true, nil
}

// Run reloads on every tick until ctx ends (a time.Ticker's channel in production; a test
// sends its own ticks). Each distinct failure is logged once.
func (s *FileSource) Run(ctx context.Context, ticks <-chan time.Time) {
	var lastLogged string
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		changed, err := s.Reload()
		switch {
		case err != nil:
			if msg := err.Error(); msg != lastLogged {
				s.logger.Error("policy reload failed; keeping the previous policy", slog.String("path", s.path), slog.String("error", msg))
				lastLogged = msg
			}
		case changed:
			lastLogged = ""
			s.logger.Info("policy reloaded", slog.String("path", s.path), slog.Any("rules", s.Policy().RuleNames()))
		}
	}
}
