package metacontroller

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSyncRequestDecodesDocumentedShape(t *testing.T) {
	body := `{
	  "controller": {"kind": "CompositeController"},
	  "parent": {"kind": "SparkApplication", "metadata": {"name": "pi"}},
	  "children": {
	    "Pod.v1": {"pi-driver": {"metadata": {"name": "pi-driver"}}, "a-driver": {"metadata": {"name": "a-driver"}}},
	    "Ingress.networking.k8s.io/v1": {}
	  },
	  "related": {"Pod.v1": {"pi-exec-1": {"metadata": {"name": "pi-exec-1"}}}},
	  "finalizing": true
	}`
	var req SyncRequest
	require.NoError(t, json.Unmarshal([]byte(body), &req))

	assert.True(t, req.Finalizing)
	assert.Equal(t, []string{"a-driver", "pi-driver"}, req.Children.Names(Key("Pod", "v1")))
	assert.Empty(t, req.Children.Names(Key("Ingress", "networking.k8s.io/v1")))
	assert.Contains(t, req.Children, "Ingress.networking.k8s.io/v1", "declared child types are present even when empty")
	assert.Equal(t, []string{"pi-exec-1"}, req.Related.Names("Pod.v1"))

	var pod struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	found, err := req.Children.Decode("Pod.v1", "pi-driver", &pod)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, "pi-driver", pod.Metadata.Name)

	found, err = req.Children.Decode("Pod.v1", "missing", &pod)
	require.NoError(t, err)
	assert.False(t, found)
}

func TestChildMapDecodeReportsBadObject(t *testing.T) {
	m := ChildMap{"Pod.v1": {"p": json.RawMessage(`{"metadata": 7}`)}}
	var out struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	found, err := m.Decode("Pod.v1", "p", &out)
	assert.True(t, found)
	assert.ErrorContains(t, err, `decode observed Pod.v1 "p"`)
}

func TestResponsesEncodeDocumentedFields(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{
			name: "sync with resync",
			in:   SyncResponse{Status: map[string]any{"a": 1}, Children: []any{}, ResyncAfterSeconds: 2.5},
			want: `{"status":{"a":1},"children":[],"resyncAfterSeconds":2.5}`,
		},
		{
			name: "finalize done",
			in:   SyncResponse{Status: map[string]any{}, Children: []any{}, Finalized: true},
			want: `{"status":{},"children":[],"finalized":true}`,
		},
		{
			name: "customize",
			in: CustomizeResponse{RelatedResources: []RelatedResourceRule{{
				APIVersion:    "v1",
				Resource:      "pods",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"spark-role": "executor"}},
			}}},
			want: `{"relatedResources":[{"apiVersion":"v1","resource":"pods","labelSelector":{"matchLabels":{"spark-role":"executor"}}}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.in)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestTidyObserved(t *testing.T) {
	req := &SyncRequest{
		Children: ChildMap{"Pod.v1": {"a": []byte(`{"metadata":{"name":"a"}}`), "gone": []byte(`null`)}},
		Related:  ChildMap{"Pod.v1": {"x": []byte(`null`)}},
	}
	if err := req.TidyObserved("team"); err != nil {
		t.Fatal(err)
	}
	if _, ok := req.Children["Pod.v1"]["gone"]; ok {
		t.Error("a null child is dropped")
	}
	if _, ok := req.Related["Pod.v1"]["x"]; ok {
		t.Error("a null related object is dropped")
	}
	req.Children["Pod.v1"]["b"] = []byte(`{"metadata":{"name":"c"}}`)
	err := req.TidyObserved("team")
	var bad *RequestError
	if !errors.As(err, &bad) {
		t.Errorf("a misfiled child is a request error, got %v", err)
	}
}

func TestTidyObservedFilesV2RequestsAsV1(t *testing.T) {
	pod := func(ns, name string) json.RawMessage {
		return json.RawMessage(`{"metadata":{"namespace":"` + ns + `","name":"` + name + `"}}`)
	}
	flavor := json.RawMessage(`{"metadata":{"name":"spot"}}`)
	tests := []struct {
		name            string
		namespace       string
		children        ChildMap
		related         ChildMap
		wantChildren    []string
		wantRelated     []string
		wantRelatedKind string
	}{{
		name:         "v1 request unchanged",
		namespace:    "team",
		children:     ChildMap{"Pod.v1": {"pi-driver": pod("team", "pi-driver")}},
		related:      ChildMap{"Pod.v1": {"pi-exec-1": pod("team", "pi-exec-1")}},
		wantChildren: []string{"pi-driver"}, wantRelated: []string{"pi-exec-1"}, wantRelatedKind: "Pod.v1",
	}, {
		name:         "v2 namespaced objects filed by name",
		namespace:    "team",
		children:     ChildMap{"Pod.v1": {"team/pi-driver": pod("team", "pi-driver")}},
		related:      ChildMap{"Pod.v1": {"team/pi-exec-1": pod("team", "pi-exec-1")}},
		wantChildren: []string{"pi-driver"}, wantRelated: []string{"pi-exec-1"}, wantRelatedKind: "Pod.v1",
	}, {
		name:         "v2 related of another namespace dropped",
		namespace:    "team",
		children:     ChildMap{},
		related:      ChildMap{"Pod.v1": {"team/pi-exec-1": pod("team", "pi-exec-1"), "other/pi-exec-1": pod("other", "pi-exec-1")}},
		wantChildren: nil, wantRelated: []string{"pi-exec-1"}, wantRelatedKind: "Pod.v1",
	}, {
		name:         "v2 cluster-scoped related kept by name",
		namespace:    "team",
		children:     ChildMap{},
		related:      ChildMap{"ResourceFlavor.kueue.x-k8s.io/v1beta2": {"spot": flavor}},
		wantChildren: nil, wantRelated: []string{"spot"}, wantRelatedKind: "ResourceFlavor.kueue.x-k8s.io/v1beta2",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &SyncRequest{Children: tt.children, Related: tt.related}
			require.NoError(t, req.TidyObserved(tt.namespace))
			assert.Equal(t, tt.wantChildren, nilIfEmpty(req.Children.Names("Pod.v1")))
			assert.Equal(t, tt.wantRelated, nilIfEmpty(req.Related.Names(tt.wantRelatedKind)))
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestHookVersion(t *testing.T) {
	registration := json.RawMessage(`{"spec": {"hooks": {"sync": {"version": "v2"}, "finalize": {"version": "v1"}, "customize": {}}}}`)
	for _, tc := range []struct {
		name       string
		controller json.RawMessage
		hook, want string
	}{
		{"v2 as registered", registration, "sync", "v2"},
		{"v1 as registered", registration, "finalize", "v1"},
		{"no version: Metacontroller's default", registration, "customize", "v1"},
		{"hook not registered", registration, "other", "v1"},
		{"no controller in the request", nil, "sync", "v1"},
		{"controller not an object", json.RawMessage(`"cc"`), "sync", "v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, HookVersion(tc.controller, tc.hook))
		})
	}
}
