package sparkctl

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestConnectHonoursKubectlFlags: --kubeconfig, --context and -n pick the server and the
// namespace as they do for kubectl.
func TestConnectHonoursKubectlFlags(t *testing.T) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["a"] = &clientcmdapi.Cluster{Server: "https://a.example:6443"}
	cfg.Clusters["b"] = &clientcmdapi.Cluster{Server: "https://b.example:6443"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["ctx-a"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "u", Namespace: "team-a"}
	cfg.Contexts["ctx-b"] = &clientcmdapi.Context{Cluster: "b", AuthInfo: "u"}
	cfg.CurrentContext = "ctx-a"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "elsewhere"))

	for _, tc := range []struct {
		flags      ConnFlags
		host, ns   string
		wantErrSub string
	}{
		{ConnFlags{Kubeconfig: path}, "https://a.example:6443", "team-a", ""},
		{ConnFlags{Kubeconfig: path, Namespace: "x"}, "https://a.example:6443", "x", ""},
		{ConnFlags{Kubeconfig: path, Context: "ctx-b"}, "https://b.example:6443", "default", ""},
		{ConnFlags{Kubeconfig: path, Context: "ctx-b", Namespace: "y"}, "https://b.example:6443", "y", ""},
		{ConnFlags{Kubeconfig: path, Context: "nope"}, "", "", `context "nope" does not exist`},
		{ConnFlags{Kubeconfig: filepath.Join(t.TempDir(), "missing")}, "", "", "loading the kubeconfig"},
	} {
		cl, err := Connect(tc.flags)
		if tc.wantErrSub != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErrSub)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.host, cl.Config.Host)
		assert.Equal(t, tc.ns, cl.Namespace)
	}
}
