package validate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/apacheapp"
	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/sparkcluster"
	"github.com/sparkhooks/sparkhooks/internal/sparkconnect"
)

// TestWebhookAgreesWithHooks feeds every object of the golden reviews and of examples/ to the
// webhook (as a CREATE) and to the sync hook that will own it (as a new parent), and requires
// the same verdict: the webhook refuses as invalid exactly what the hook reports as failing
// validation, and refuses as unreadable exactly what the hook cannot decode.
func TestWebhookAgreesWithHooks(t *testing.T) {
	objects := map[string]json.RawMessage{}
	for _, c := range loadGoldenCases(t) {
		var review struct {
			Request *struct {
				Object json.RawMessage `json:"object"`
			} `json:"request"`
		}
		require.NoError(t, json.Unmarshal(c.body, &review))
		if review.Request != nil && !isNull(review.Request.Object) {
			objects[c.name] = review.Request.Object
		}
	}
	for _, pattern := range []string{"../../examples/*.yaml", "../../examples/apache/*.yaml", "../../examples/testdata/*.yaml"} {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			obj, err := yaml.YAMLToJSON(data)
			require.NoError(t, err, f)
			objects[f] = obj
		}
	}
	kinds := map[string]Kind{}
	for _, k := range Kinds() {
		kinds[k.GroupVersion.WithKind(k.Kind).String()] = k
	}
	require.Greater(t, len(objects), 30)
	syncs := map[string]hook.SyncFunc{
		v1beta2.KindSparkApplication:          sparkapp.Hooks(sparkapp.Config{}).Sync,
		v1beta2.KindScheduledSparkApplication: schedule.Hooks(schedule.Config{}).Sync,
		sparkv1.KindSparkCluster:              sparkcluster.Hooks().Sync,
		v1alpha1.KindSparkConnect:             sparkconnect.Hooks(sparkconnect.Config{}).Sync,
		apacheapp.Name:                        apacheapp.Hooks(sparkapp.Config{}).Sync,
	}

	var refused, allowed int
	for name, raw := range objects {
		t.Run(name, func(t *testing.T) {
			raw := asStored(t, raw)
			var tm metav1.TypeMeta
			require.NoError(t, json.Unmarshal(raw, &tm))
			kind, ok := kinds[tm.GroupVersionKind().String()]
			require.True(t, ok, "no webhook for %s", tm.GroupVersionKind())
			req := &request{
				UID: "agree", Kind: metav1.GroupVersionKind{Group: kind.GroupVersion.Group, Version: kind.GroupVersion.Version, Kind: kind.Kind},
				Resource:  metav1.GroupVersionResource{Group: kind.GroupVersion.Group, Version: kind.GroupVersion.Version, Resource: kind.Resource},
				Namespace: "spark-jobs", Operation: admissionv1.Create, Object: raw,
			}
			resp, outcome := decide(req, kind, goldenNow)

			sync := &metacontroller.SyncRequest{Parent: raw}
			hookKind := kind.Kind
			if kind.Name != "" {
				hookKind = kind.Name
			}
			_, synced, hookErr := syncs[hookKind](sync, goldenNow)
			hookInvalid := synced.ValidationFailed
			assert.Equal(t, outcome.Refusal == RefusalBadRequest, hookErr != nil, "webhook: %+v; hook error: %v", resp.Result, hookErr)
			assert.Equal(t, outcome.Refusal == RefusalInvalid, hookInvalid, "webhook: %+v", resp.Result)
			if resp.Allowed {
				allowed++
			} else {
				refused++
			}
		})
	}
	assert.Positive(t, allowed, "the table must hold valid objects")
	assert.Greater(t, refused, 10, "the table must hold invalid objects")
}

// asStored gives an object what the API server adds before the hook sees it: a namespace and
// a uid.
func asStored(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal(raw, &obj))
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	if meta["namespace"] == nil {
		meta["namespace"] = "spark-jobs"
	}
	if meta["uid"] == nil {
		meta["uid"] = "6e5d4c3b-2a19-4807-b6f5-e4d3c2b1a090"
	}
	out, err := json.Marshal(obj)
	require.NoError(t, err)
	return out
}
