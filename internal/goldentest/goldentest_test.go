package goldentest

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

func TestErrorAnswer(t *testing.T) {
	assert.Equal(t, "Stale", ErrorAnswer(metacontroller.Refusef("Stale", "x"))["refused"])
	assert.Equal(t, "true", ErrorAnswer(metacontroller.RequestErrorf("x"))["badRequest"])
	assert.Equal(t, "true", ErrorAnswer(errors.New("x"))["fault"])
}

func TestCompareWritesThenMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case", "response.json")
	Compare(t, path, []byte("{}\n"), true, "go test")
	Compare(t, path, []byte("{}\n"), false, "go test")
	assert.Contains(t, FirstDifference([]byte("a\nb\nc"), []byte("a\nx\nc")), "- b\n- c\n+ x\n+ c")
}
