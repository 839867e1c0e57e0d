package metacontroller

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
