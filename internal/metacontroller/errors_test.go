package metacontroller

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestChildMapDropAbsentAndCheckNames(t *testing.T) {
	m := ChildMap{
		"Pod.v1":       {"a": []byte(`{"metadata":{"name":"a"}}`), "gone": []byte(` null `), "empty": nil},
		"Service.v1":   {"b": []byte(`{"metadata":{"name":"b"}}`)},
		"ConfigMap.v1": nil,
	}
	m.DropAbsent()
	assert.Equal(t, []string{"a"}, m.Names("Pod.v1"))
	require.NoError(t, m.CheckNames())

	m["Service.v1"]["c"] = []byte(`{"metadata":{"name":"other"}}`)
	assert.ErrorContains(t, m.CheckNames(), `observed Service.v1 "c" has metadata.name "other"`)
}

func TestRefusalIsAConflictNotABadRequest(t *testing.T) {
	err := Refusef("UnknownAttempt", "pod %s: %w", "p", errors.New("why"))
	var c interface{ Conflict() string }
	require.ErrorAs(t, err, &c)
	assert.Equal(t, "UnknownAttempt", c.Conflict())
	var br interface{ BadRequest() bool }
	assert.False(t, errors.As(err, &br))
	assert.Equal(t, "pod p: why", err.Error())
}

func TestCheckParentType(t *testing.T) {
	want := schema.GroupVersionKind{Group: "spark.apache.org", Version: "v1", Kind: "SparkCluster"}
	for tm, ok := range map[metav1.TypeMeta]bool{
		{}: true,
		{APIVersion: "spark.apache.org/v1", Kind: "SparkCluster"}: true,
		{Kind: "SparkApplication"}:                                false,
		{APIVersion: "spark.apache.org/v1beta1"}:                  false,
	} {
		err := CheckParentType(tm, want)
		if (err == nil) != ok {
			t.Errorf("CheckParentType(%+v) = %v", tm, err)
		}
		var bad *RequestError
		if err != nil && !errors.As(err, &bad) {
			t.Errorf("CheckParentType(%+v) = %v, not a RequestError", tm, err)
		}
	}
}
