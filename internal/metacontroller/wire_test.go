package metacontroller

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWireDropsStatusKeepsTheRest(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}}
	tests := []struct {
		name string
		obj  any
	}{
		{"pod", &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: meta,
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}},
		{"service", &corev1.Service{TypeMeta: metav1.TypeMeta{Kind: "Service", APIVersion: "v1"}, ObjectMeta: meta,
			Spec: corev1.ServiceSpec{ClusterIP: "None"}}},
		{"ingress", &networkingv1.Ingress{TypeMeta: metav1.TypeMeta{Kind: "Ingress", APIVersion: "networking.k8s.io/v1"}, ObjectMeta: meta,
			Spec: networkingv1.IngressSpec{IngressClassName: new(string)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := map[string]any{}
			wire := map[string]any{}
			typed, err := json.Marshal(tt.obj)
			require.NoError(t, err)
			answered, err := json.Marshal(Wire(tt.obj))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(typed, &full))
			require.NoError(t, json.Unmarshal(answered, &wire))
			assert.Contains(t, full, "status", "the typed object encodes a status")
			delete(full, "status")
			assert.Equal(t, full, wire)
		})
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta}
	assert.Same(t, cm, Wire(cm), "kinds without status pass through")
}

// TestIdentityReadsAsTheEncoding: the kind and name read from an answered child are those its
// encoding carries, for typed objects, maps and anything else.
func TestIdentityReadsAsTheEncoding(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	for _, obj := range []any{
		pod,
		Wire(pod),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "no-kind"}},
		map[string]any{"kind": "StatefulSet", "metadata": map[string]any{"name": "s"}},
		map[string]any{"kind": "Service"},
		map[string]any{},
		struct {
			Kind string `json:"kind"`
		}{"Other"},
	} {
		b, err := json.Marshal(obj)
		require.NoError(t, err)
		var want struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(b, &want))
		kind, name, err := Identity(obj)
		require.NoError(t, err)
		assert.Equal(t, want.Kind, kind, string(b))
		assert.Equal(t, want.Metadata.Name, name, string(b))
	}
	_, _, err := Identity(map[string]any{"kind": 1})
	assert.Error(t, err)
}
