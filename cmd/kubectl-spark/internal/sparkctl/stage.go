package sparkctl

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Stager uploads a local file to an object store.
type Stager interface {
	// Upload copies the local file to bucket/key. Without override an object that exists
	// already is kept, and uploaded is false.
	Upload(ctx context.Context, bucket, key, localPath string, override bool) (uploaded bool, err error)
	// URI is how Spark names the object: s3a://bucket/key for S3, gs://bucket/key for GCS.
	URI(bucket, key string) string
}

// stagingRoot is where dependencies go under the --upload-to prefix, as the Kubeflow operator's
// sparkctl put them: spark-app-dependencies/NAMESPACE/NAME/FILE.
const stagingRoot = "spark-app-dependencies"

// dependencyFields are the spec fields that may name local files.
var dependencyFields = [][]string{{"mainApplicationFile"}, {"deps", "jars"}, {"deps", "files"}, {"deps", "pyFiles"}}

// localPath tells whether a dependency is a file on this machine: a path without a scheme, or a
// file:// URI. local:// is a path inside the image and stays.
func localPath(dep string) (string, bool) {
	if p, ok := strings.CutPrefix(dep, "file://"); ok {
		return p, true
	}
	if strings.Contains(dep, "://") || strings.HasPrefix(dep, "local:") {
		return "", false
	}
	return dep, dep != ""
}

// stage uploads the local dependencies of obj and rewrites them to their remote URIs. Without
// --upload-to a local dependency is an error that names it.
func (c *cli) stage(ctx context.Context, k kind, obj *unstructured.Unstructured, o *createOptions) error {
	base, ok := specPath(k)
	if !ok {
		return nil
	}
	var dest *url.URL
	var stager Stager
	for _, f := range dependencyFields {
		field := append(slices.Clone(base), f...)
		var values []string
		single := len(f) == 1
		if single {
			v, _, _ := unstructured.NestedString(obj.Object, field...)
			values = []string{v}
		} else {
			values, _, _ = unstructured.NestedStringSlice(obj.Object, field...)
		}
		changed := false
		for i, dep := range values {
			local, ok := localPath(dep)
			if !ok {
				continue
			}
			if o.uploadTo == "" {
				return fmt.Errorf("%s %s: %s %q is a local file: pass --upload-to s3://BUCKET/PREFIX or gs://BUCKET/PREFIX to stage it", k.Kind, obj.GetName(), strings.Join(f, "."), dep)
			}
			if stager == nil {
				var err error
				if dest, stager, err = c.stager(o.uploadTo); err != nil {
					return err
				}
			}
			info, err := os.Stat(local)
			if err != nil {
				return fmt.Errorf("%s %s: %s: %w", k.Kind, obj.GetName(), strings.Join(f, "."), err)
			}
			if !info.Mode().IsRegular() {
				return fmt.Errorf("%s %s: %s %q is not a regular file", k.Kind, obj.GetName(), strings.Join(f, "."), local)
			}
			key := path.Join(strings.Trim(dest.Path, "/"), stagingRoot, obj.GetNamespace(), obj.GetName(), filepath.Base(local))
			uploaded, err := stager.Upload(ctx, dest.Host, key, local, o.override)
			if err != nil {
				return fmt.Errorf("staging %s to %s://%s/%s: %w", local, dest.Scheme, dest.Host, key, err)
			}
			remote := stager.URI(dest.Host, key)
			if uploaded {
				fmt.Fprintf(c.env.Stderr, "staged %s as %s\n", local, remote)
			} else {
				fmt.Fprintf(c.env.Stderr, "%s exists, kept (--override replaces it)\n", remote)
			}
			values[i] = remote
			changed = true
		}
		if !changed {
			continue
		}
		var err error
		if single {
			err = unstructured.SetNestedField(obj.Object, values[0], field...)
		} else {
			err = unstructured.SetNestedStringSlice(obj.Object, values, field...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stager reads --upload-to and picks the store for its scheme.
func (c *cli) stager(uploadTo string) (*url.URL, Stager, error) {
	u, err := url.Parse(uploadTo)
	if err != nil || u.Host == "" || (u.Scheme != "s3" && u.Scheme != "gs") {
		return nil, nil, usageErrorf("--upload-to %q: want s3://BUCKET[/PREFIX] or gs://BUCKET[/PREFIX]", uploadTo)
	}
	s, ok := c.env.Stagers[u.Scheme]
	if !ok {
		return nil, nil, fmt.Errorf("--upload-to %s: no stager for %s://", uploadTo, u.Scheme)
	}
	return u, s, nil
}
