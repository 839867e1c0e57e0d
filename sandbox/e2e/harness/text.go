//go:build e2e

package harness

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Tail is the last n lines of text, for a log quoted in a failure.
func Tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// NestedString is the field of obj at fields, printed ("" when obj or the field is absent), for
// reading a status without caring about its type.
func NestedString(obj *unstructured.Unstructured, fields ...string) string {
	if obj == nil {
		return ""
	}
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if !found || err != nil {
		return ""
	}
	return fmt.Sprint(v)
}
