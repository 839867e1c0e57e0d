package goldentest

import (
	"errors"
	"os"
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

func TestCompareEventsWantsNoFileForNoEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.json")
	CompareEvents(t, path, []string{"SparkApplicationSubmitted"}, 1, true, "go test")
	CompareEvents(t, path, []string{"SparkApplicationSubmitted"}, 1, false, "go test")
	CompareEvents(t, path, nil, 0, true, "go test")
	_, err := os.Stat(path)
	assert.True(t, os.IsNotExist(err), "rewriting a case that tells no Events removes its file")
}
