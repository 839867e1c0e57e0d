package mutate

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	policyA = "version: 1\nrules:\n- name: a\n  defaults: {schedulerName: yunikorn}\n"
	policyB = "version: 1\nrules:\n- name: b\n  defaults: {schedulerName: volcano}\n- name: c\n  guardrails: {denyHostPath: true}\n"
	policyX = "version: 1\nrules:\n- name: x\n  defaults: {schedulerName: Not_Valid}\n"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

// replaceFile swaps content in with a rename, as the kubelet and careful editors do, so that a
// concurrent poll never sees a half-written file.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, content)
	require.NoError(t, os.Rename(tmp, path))
}

func TestFileSourceReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, path, policyA)
	src, err := NewFileSource(path, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, src.Policy().RuleNames())

	changed, err := src.Reload()
	require.NoError(t, err)
	assert.False(t, changed, "same content")

	writeFile(t, path, policyB)
	changed, err = src.Reload()
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, []string{"b", "c"}, src.Policy().RuleNames())
	assert.NoError(t, src.Err())

	writeFile(t, path, policyX)
	changed, err = src.Reload()
	require.Error(t, err)
	assert.False(t, changed)
	assert.Equal(t, []string{"b", "c"}, src.Policy().RuleNames(), "an invalid file keeps the last good policy")
	assert.ErrorContains(t, src.Err(), "schedulerName")
	_, err = src.Reload()
	assert.Error(t, err, "the bad content stays reported until it is fixed")

	require.NoError(t, os.Remove(path))
	_, err = src.Reload()
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, []string{"b", "c"}, src.Policy().RuleNames(), "a missing file keeps the last good policy")

	writeFile(t, path, policyA)
	changed, err = src.Reload()
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, []string{"a"}, src.Policy().RuleNames())
	assert.NoError(t, src.Err())
}

// TestFileSourceFollowsSymlinkSwap mimics a ConfigMap volume: the file is a symlink into a
// directory that the kubelet replaces in one rename.
func TestFileSourceFollowsSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "v1"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "v2"), 0o700))
	writeFile(t, filepath.Join(dir, "v1", "policy.yaml"), policyA)
	writeFile(t, filepath.Join(dir, "v2", "policy.yaml"), policyB)
	require.NoError(t, os.Symlink("v1", filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink(filepath.Join("..data", "policy.yaml"), filepath.Join(dir, "policy.yaml")))

	src, err := NewFileSource(filepath.Join(dir, "policy.yaml"), nil)
	require.NoError(t, err)
	require.NoError(t, os.Symlink("v2", filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))

	changed, err := src.Reload()
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, []string{"b", "c"}, src.Policy().RuleNames())
}

func TestNewFileSourceNeedsAGoodFirstLoad(t *testing.T) {
	dir := t.TempDir()
	_, err := NewFileSource(filepath.Join(dir, "absent.yaml"), nil)
	assert.ErrorIs(t, err, os.ErrNotExist)

	path := filepath.Join(dir, "policy.yaml")
	writeFile(t, path, policyX)
	_, err = NewFileSource(path, nil)
	assert.ErrorContains(t, err, "schedulerName")
}

// syncBuffer is a log sink the Run goroutine and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestFileSourceRunPollsAndLogsFailuresOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, path, policyA)
	var logs syncBuffer
	src, err := NewFileSource(path, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan time.Time)
	done := make(chan struct{})
	go func() {
		src.Run(ctx, ticks)
		close(done)
	}()
	// Run takes a tick only once it has finished the reload of the one before, so after a
	// second tick the first one's reload is over.
	poll := func(n int) {
		for range n + 1 {
			ticks <- time.Time{}
		}
	}

	replaceFile(t, path, policyB)
	poll(1)
	assert.Len(t, src.Policy().RuleNames(), 2)

	replaceFile(t, path, policyX)
	poll(4) // several polls of the same bad file
	require.Error(t, src.Err())
	cancel()
	<-done

	assert.Equal(t, []string{"b", "c"}, src.Policy().RuleNames())
	assert.Equal(t, 1, bytes.Count([]byte(logs.String()), []byte("policy reload failed")), logs.String())
	assert.Contains(t, logs.String(), "policy reloaded")
}

func TestStaticPolicy(t *testing.T) {
	p, err := ParsePolicy([]byte(policyA))
	require.NoError(t, err)
	assert.Same(t, p, StaticPolicy{P: p}.Policy())
	assert.Nil(t, StaticPolicy{}.Policy())
}
