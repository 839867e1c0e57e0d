// Package goldentest holds what the golden-file tests of the hook packages share: comparing an
// answer with its file (or rewriting it under -update), showing where they part, and recording
// a refused request the way the HTTP layer tells refusals apart.
package goldentest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Compare checks got against the golden file at path, or writes it there when update is set.
// rerun is the command that regenerates the file, for the message.
func Compare(t testing.TB, path string, got []byte, update bool, rerun string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file %s (%v); run %s -update and review the diff", path, err, rerun)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("golden %s differs (run %s -update if the change is intended, and review the diff):\n%s", path, rerun, FirstDifference(want, got))
	}
}

// CompareEvents checks the Events a sync tells against the golden file at path, which is
// absent when the sync tells none: most syncs decide nothing new, and an empty file per case
// would hide the ones that do.
func CompareEvents(t testing.TB, path string, events any, count int, update bool, rerun string) {
	t.Helper()
	if count > 0 {
		Compare(t, path, Indented(t, events), update, rerun)
		return
	}
	if update {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("golden %s lists Events, but the sync tells none (run %s -update if that is intended)", path, rerun)
	}
}

// FirstDifference shows the first lines where want and got part, with three lines of context.
func FirstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	for j := max(i-3, 0); j < i; j++ {
		b.WriteString("  " + w[j] + "\n")
	}
	for j := i; j < min(i+3, len(w)); j++ {
		b.WriteString("- " + w[j] + "\n")
	}
	for j := i; j < min(i+3, len(g)); j++ {
		b.WriteString("+ " + g[j] + "\n")
	}
	return b.String()
}

// Indented is v as a golden file holds it: indented JSON and a final newline.
func Indented(t testing.TB, v any) []byte {
	t.Helper()
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// ErrorAnswer records a refused request as the HTTP layer tells it apart: a refusal (409) with
// its reason, a request error (400), or anything else (500).
func ErrorAnswer(err error) map[string]string {
	var refusal *metacontroller.Refusal
	var bad *metacontroller.RequestError
	switch {
	case errors.As(err, &refusal):
		return map[string]string{"refused": refusal.Reason, "error": err.Error()}
	case errors.As(err, &bad):
		return map[string]string{"badRequest": "true", "error": err.Error()}
	}
	return map[string]string{"fault": "true", "error": err.Error()}
}
