//go:build e2e

package mcstandin

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestApplyUpdateMergesLikeMetacontroller(t *testing.T) {
	tests := []struct {
		name        string
		observed    string // without the last-applied annotation
		lastApplied string // "" for none
		desired     string
		want        string // without the last-applied annotation
	}{
		{
			name:     "a field set by someone else survives",
			observed: `{"metadata":{"name":"s","uid":"u1"},"spec":{"clusterIP":"10.0.0.1","ports":[{"name":"ui","port":4040}]}}`,
			desired:  `{"metadata":{"name":"s"},"spec":{"ports":[{"name":"ui","port":4040}]}}`,
			want:     `{"metadata":{"name":"s","uid":"u1"},"spec":{"clusterIP":"10.0.0.1","ports":[{"name":"ui","port":4040}]}}`,
		},
		{
			name:        "a field dropped from desired is removed",
			observed:    `{"metadata":{"name":"s","labels":{"a":"1","b":"2"}}}`,
			lastApplied: `{"metadata":{"name":"s","labels":{"a":"1","b":"2"}}}`,
			desired:     `{"metadata":{"name":"s","labels":{"a":"1"}}}`,
			want:        `{"metadata":{"name":"s","labels":{"a":"1"}}}`,
		},
		{
			name:        "list maps merge by their key, keeping foreign items",
			observed:    `{"spec":{"ports":[{"port":80,"nodePort":30080},{"port":90}]}}`,
			lastApplied: `{"spec":{"ports":[{"port":80}]}}`,
			desired:     `{"spec":{"ports":[{"port":80,"protocol":"TCP"},{"port":70}]}}`,
			want:        `{"spec":{"ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},{"port":90},{"port":70}]}}`,
		},
		{
			// Metacontroller's merge (pkg/dynamic/apply, merge) takes the desired value of every
			// scalar it is given, whether or not it changed since the last apply: unlike
			// kubectl's patch, a constant desired count undoes an autoscaler's scaling.
			name:        "a desired scalar replaces another writer's value even when unchanged since the last apply",
			observed:    `{"spec":{"replicas":5}}`,
			lastApplied: `{"spec":{"replicas":3}}`,
			desired:     `{"spec":{"replicas":3}}`,
			want:        `{"spec":{"replicas":3}}`,
		},
		{
			name:        "a scalar no longer desired is removed, one never desired is kept",
			observed:    `{"spec":{"replicas":5,"minReadySeconds":2}}`,
			lastApplied: `{"spec":{"replicas":3}}`,
			desired:     `{"spec":{}}`,
			want:        `{"spec":{"minReadySeconds":2}}`,
		},
		{
			name:     "other lists are replaced",
			observed: `{"spec":{"args":["a","b"]}}`,
			desired:  `{"spec":{"args":["c"]}}`,
			want:     `{"spec":{"args":["c"]}}`,
		},
		{
			name:     "system metadata and status stay as observed",
			observed: `{"metadata":{"name":"s","resourceVersion":"7","generation":3},"status":{"x":1}}`,
			desired:  `{"metadata":{"name":"s","resourceVersion":"1","generation":1},"status":{"x":2}}`,
			want:     `{"metadata":{"name":"s","resourceVersion":"7","generation":3},"status":{"x":1}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			observed := decodeObject(t, tt.observed)
			if tt.lastApplied != "" {
				observed.SetAnnotations(map[string]string{lastAppliedAnnotation: tt.lastApplied})
			}
			desired := decodeObject(t, tt.desired)

			got, err := applyUpdate(observed, desired)
			require.NoError(t, err)

			applied, err := getLastApplied(got)
			require.NoError(t, err)
			assert.Equal(t, desired.Object, applied, "the desired object becomes the last applied configuration")
			unstructured.RemoveNestedField(got.Object, "metadata", "annotations")
			if metadata, _, _ := unstructured.NestedMap(got.Object, "metadata"); len(metadata) == 0 {
				delete(got.Object, "metadata")
			}
			assert.Equal(t, decodeObject(t, tt.want).Object, got.Object)
		})
	}
}

func decodeObject(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &obj))
	normalized, err := normalizeJSON(obj)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: normalized}
}
