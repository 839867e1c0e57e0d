//go:build e2e

package mcstandin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMatchesRuleLikeMetacontroller: namespaced related objects must share the parent's
// namespace; cluster-scoped ones (Kueue's ResourceFlavors, PriorityClasses) match from any
// namespaced parent, as Metacontroller's customize manager matches them for v1 hooks.
func TestMatchesRuleLikeMetacontroller(t *testing.T) {
	obj := func(ns, name string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(labels)
		return u
	}
	parent := obj("jobs", "app", nil)
	everything := &metav1.LabelSelector{}
	for _, tt := range []struct {
		name string
		obj  *unstructured.Unstructured
		rule relatedRule
		want bool
	}{
		{"namespaced, same namespace", obj("jobs", "p", nil), relatedRule{LabelSelector: everything}, true},
		{"namespaced, other namespace", obj("other", "p", nil), relatedRule{LabelSelector: everything}, false},
		{"cluster-scoped, by selector", obj("", "spot", nil), relatedRule{LabelSelector: everything}, true},
		{"cluster-scoped, selector not matching", obj("", "spot", nil), relatedRule{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}, false},
		{"cluster-scoped, by name", obj("", "batch-high", nil), relatedRule{Names: []string{"batch-high"}}, true},
		{"cluster-scoped, other name", obj("", "batch-low", nil), relatedRule{Names: []string{"batch-high"}}, false},
		{"namespace and labels, matching", obj("jobs", "exec-1", map[string]string{"a": "b"}), relatedRule{Namespace: "jobs", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}, true},
		{"namespace and labels, other labels", obj("jobs", "exec-1", nil), relatedRule{Namespace: "jobs", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}, false},
		{"namespace and labels, other namespace", obj("other", "exec-1", map[string]string{"a": "b"}), relatedRule{Namespace: "jobs", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := matchesRule(parent, tt.obj, tt.rule)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
