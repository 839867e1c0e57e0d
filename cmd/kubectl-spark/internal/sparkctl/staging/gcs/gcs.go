// Package gcs stages sparkctl's local dependencies to Google Cloud Storage with
// cloud.google.com/go/storage and Application Default Credentials.
package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"cloud.google.com/go/storage"
)

// Stager stages to Google Cloud Storage with Application Default Credentials, or to the emulator
// STORAGE_EMULATOR_HOST names.
type Stager struct {
	once   sync.Once
	client *storage.Client
	err    error
}

func (g *Stager) load(ctx context.Context) (*storage.Client, error) {
	g.once.Do(func() {
		g.client, g.err = storage.NewClient(ctx)
		if g.err != nil {
			g.err = fmt.Errorf("connecting to Google Cloud Storage: %w", g.err)
		}
	})
	return g.client, g.err
}

// Upload writes the file to bucket/key; without override an existing object is kept.
func (g *Stager) Upload(ctx context.Context, bucket, key, localPath string, override bool) (bool, error) {
	client, err := g.load(ctx)
	if err != nil {
		return false, err
	}
	obj := client.Bucket(bucket).Object(key)
	if !override {
		_, err := obj.Attrs(ctx)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, storage.ErrObjectNotExist) {
			return false, err
		}
	}
	f, err := os.Open(localPath)
	if err != nil {
		return false, err
	}
	defer f.Close()
	w := obj.NewWriter(ctx)
	if _, err := io.Copy(w, f); err != nil {
		_ = w.Close()
		return false, err
	}
	if err := w.Close(); err != nil {
		return false, err
	}
	return true, nil
}

// URI is the gs:// URI Spark's GCS connector reads.
func (*Stager) URI(bucket, key string) string { return "gs://" + bucket + "/" + key }
