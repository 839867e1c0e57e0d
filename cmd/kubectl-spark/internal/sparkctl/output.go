package sparkctl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"
)

// addOutputFlag declares -o on a command that prints objects, and refuses a format other than
// json or yaml before the command runs.
func addOutputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "", "output format: json or yaml (default: a table or text)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		switch *format {
		case "", "json", "yaml":
			return nil
		}
		return usageErrorf("--output %q: want json or yaml", *format)
	}
}

// printStructured writes obj as JSON or YAML, as -o asks.
func printStructured(w io.Writer, format string, obj any) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "    ")
		return enc.Encode(obj)
	case "yaml":
		out, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	return fmt.Errorf("unknown output format %q", format)
}

// listObject is what -o json|yaml prints for several objects, as kubectl does.
func listObject(items []map[string]any) map[string]any {
	list := make([]any, len(items))
	for i, item := range items {
		list[i] = item
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": list}
}

// table writes aligned columns.
type table struct {
	w *tabwriter.Writer
}

func newTable(w io.Writer, headers ...string) *table {
	t := &table{w: tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)}
	t.row(headers...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "<none>"
		}
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

// age is kubectl's short age of t at now; "<unknown>" for a zero time.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// timestamp is an RFC 3339 time, or "" for a zero time.
func timestamp(t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
