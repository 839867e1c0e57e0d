//go:build e2e

package localcluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
)

func TestWaitEstablished(t *testing.T) {
	const name = "widgets.example.com"
	crd := func(conditions ...apiextensionsv1.CustomResourceDefinitionCondition) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status:     apiextensionsv1.CustomResourceDefinitionStatus{Conditions: conditions},
		}
	}
	established := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}
	namesAccepted := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue}
	notEstablished := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Message: "not yet"}

	tests := []struct {
		name string
		// reads are what successive reads of the CRD return; the last one repeats. nil is not found.
		reads   []*apiextensionsv1.CustomResourceDefinition
		wantErr string
	}{
		{name: "established at once", reads: []*apiextensionsv1.CustomResourceDefinition{crd(namesAccepted, established)}},
		{name: "no conditions, then established", reads: []*apiextensionsv1.CustomResourceDefinition{
			crd(), crd(namesAccepted), crd(namesAccepted, established),
		}},
		{name: "not found, then established", reads: []*apiextensionsv1.CustomResourceDefinition{nil, crd(established)}},
		{name: "never established", reads: []*apiextensionsv1.CustomResourceDefinition{crd(notEstablished)}, wantErr: "Established=False: not yet"},
		{name: "no condition ever", reads: []*apiextensionsv1.CustomResourceDefinition{crd()}, wantErr: "no Established condition yet"},
		{name: "never found", reads: []*apiextensionsv1.CustomResourceDefinition{nil}, wantErr: "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			reads := 0
			client.PrependReactor("get", "customresourcedefinitions", func(clienttesting.Action) (bool, runtime.Object, error) {
				read := tt.reads[min(reads, len(tt.reads)-1)]
				reads++
				if read == nil {
					return true, nil, apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), name)
				}
				return true, read, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			err := waitEstablished(ctx, client, name)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, len(tt.reads), reads, "returns on the first read that is established")
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), name)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// TestCRDsReachKubectlExplain checks that the API server publishes the CRDs' schemas in its
// OpenAPI documents, as kube-apiserver does, so that kubectl validates and explains against them.
func TestCRDsReachKubectlExplain(t *testing.T) {
	var out string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		out, err = Kubectl(ctx, testEnv.API.Kubeconfig, "explain", "sparkapplications.spec.timeouts")
		return err == nil, nil
	})
	require.NoError(t, err, "kubectl explain: %s", out)
	assert.Contains(t, out, "driverStartSeconds")
	assert.Contains(t, out, "DriverStartSeconds", "our field documentation")
}
