package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMismatches(t *testing.T) {
	builds := []build{{dir: ".."}, {dir: "."}, {dir: "../hack/kube"}}
	tests := []struct {
		name    string
		modules map[string]map[string]linked
		want    []string
	}{
		{
			name: "equal versions and modules only one build links",
			modules: map[string]map[string]linked{
				"..":           {"golang.org/x/net": {version: "v0.59.0"}, "github.com/go-chi/chi/v5": {version: "v5.5.0"}},
				".":            {"golang.org/x/net": {version: "v0.59.0"}},
				"../hack/kube": {"golang.org/x/net": {version: "v0.59.0"}, "helm.sh/helm/v4": {version: "v4.2.4"}},
			},
		},
		{
			name: "each lower build is raised to the highest, a replaced module by its replace line",
			modules: map[string]map[string]linked{
				"..":           {"k8s.io/api": {version: "v0.36.6"}, "golang.org/x/net": {version: "v0.59.0"}},
				".":            {"k8s.io/api": {version: "v0.36.6"}, "golang.org/x/net": {version: "v0.49.0"}},
				"../hack/kube": {"k8s.io/api": {version: "v0.36.3", replaced: true}, "golang.org/x/net": {version: "v0.59.0"}},
			},
			want: []string{
				"golang.org/x/net is v0.49.0 in ., v0.59.0 elsewhere: go -C . get golang.org/x/net@v0.59.0",
				"k8s.io/api is v0.36.3 in ../hack/kube, v0.36.6 elsewhere: its replace line in ../hack/kube/go.mod",
			},
		},
		{
			name: "a release is above its own pseudo-version prerelease",
			modules: map[string]map[string]linked{
				"..":           {"google.golang.org/protobuf": {version: "v1.36.12"}},
				".":            {"google.golang.org/protobuf": {version: "v1.36.12"}},
				"../hack/kube": {"google.golang.org/protobuf": {version: "v1.36.12-0.20260120151049-f2248ac996af"}},
			},
			want: []string{
				"google.golang.org/protobuf is v1.36.12-0.20260120151049-f2248ac996af in ../hack/kube, v1.36.12 elsewhere: go -C ../hack/kube get google.golang.org/protobuf@v1.36.12",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mismatches(builds, tt.modules))
		})
	}
}

func TestParseBuilds(t *testing.T) {
	builds, err := parseBuilds([]string{"..:./cmd/sparkhooks", "../hack/kube:./cmd/kube,helm.sh/helm/v4/cmd/helm"})
	require.NoError(t, err)
	assert.Equal(t, []build{
		{dir: "..", packages: []string{"./cmd/sparkhooks"}},
		{dir: "../hack/kube", packages: []string{"./cmd/kube", "helm.sh/helm/v4/cmd/helm"}},
	}, builds)

	for _, args := range [][]string{{"..:./cmd/sparkhooks"}, {"..:./cmd/sparkhooks", "no-packages"}, {"..:./a", ":./b"}} {
		_, err := parseBuilds(args)
		assert.Error(t, err, "%q", args)
	}
}
