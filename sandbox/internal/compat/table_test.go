package compat

import (
	"os"
	"strings"
	"testing"
)

func TestParseTable(t *testing.T) {
	doc := "# title\n\n| a | b |\n|---|---|\n| x | y |\n\n## Differences\n\n" +
		"| object | field | cases | Kubeflow | sparkhooks | why |\n" +
		"|---|---|---|---|---|---|\n" +
		"| driver pod | `metadata.labels[sparkoperator.k8s.io/*]` | all | set | not set | reason one |\n" +
		"| service `*-ui-svc` |  | `kubeflow:examples/spark-pi.yaml`, `sparkhooks:examples/spark-pi.yaml` | made | not made | reason two |\n" +
		"\nafter\n| object | field | cases | Kubeflow | sparkhooks | why |\n|---|---|---|---|---|---|\n| ignored | x | all | a | b | c |\n"
	rows, err := ParseTable([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (the first table with the header only): %+v", len(rows), rows)
	}
	tests := []struct {
		row  int
		name string
		d    Difference
		want bool
	}{
		{0, "any", Difference{Object: "driver pod", Field: "metadata.labels[sparkoperator.k8s.io/app-name]"}, true},
		{0, "any", Difference{Object: "executor pod", Field: "metadata.labels[sparkoperator.k8s.io/app-name]"}, false},
		{0, "any", Difference{Object: "driver pod", Field: "metadata.labels[sparkoperator.k8s.io/app-name].x"}, false},
		{0, "any", Difference{Object: "driver pod", Field: "metadata.labels.version"}, false},
		{1, "kubeflow:examples/spark-pi.yaml", Difference{Object: "service spark-pi-ui-svc"}, true},
		{1, "sparkhooks:examples/spark-pi.yaml", Difference{Object: "service spark-pi-ui-svc"}, true},
		{1, "kubeflow:examples/spark-pi-python.yaml", Difference{Object: "service spark-pi-ui-svc"}, false},
		{1, "kubeflow:examples/spark-pi.yaml", Difference{Object: "service spark-pi-ui-svc", Field: "spec.type"}, false},
	}
	for _, tt := range tests {
		if got := rows[tt.row].Explains(tt.name, tt.d); got != tt.want {
			t.Errorf("row %d explains %s of %s: %v, want %v", tt.row, tt.d, tt.name, got, tt.want)
		}
	}
	used := map[int]int{}
	left := Unexplained(rows, "any", []Difference{{Object: "driver pod", Field: "metadata.labels[sparkoperator.k8s.io/x]"}, {Object: "states", Field: "sequence"}}, used)
	if len(left) != 1 || left[0].Object != "states" || used[0] != 1 || used[1] != 0 {
		t.Errorf("Unexplained: %v, used %v", left, used)
	}
}

func TestParseTableRefuses(t *testing.T) {
	header := "| object | field | cases | Kubeflow | sparkhooks | why |\n|---|---|---|---|---|---|\n"
	for name, doc := range map[string]string{
		"no table":      "# nothing\n",
		"no reason":     header + "| driver pod | x | all | a | b |  |\n",
		"no object":     header + "|  | x | all | a | b | why |\n",
		"cells missing": header + "| driver pod | x | all |\n",
	} {
		if _, err := ParseTable([]byte(doc)); err == nil {
			t.Errorf("%s: ParseTable accepted\n%s", name, doc)
		}
	}
}

// TestTheCompatTable reads docs/kubeflow-compat.md as the differential suite does: every row
// names a known object, and a case of the corpus where it names any.
func TestTheCompatTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/kubeflow-compat.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseTable(doc)
	if err != nil {
		t.Fatal(err)
	}
	objects := []string{"driver pod", "executor pod", "properties", "states", "status"}
	for _, r := range rows {
		known := strings.HasPrefix(r.Object, "service ") || strings.HasPrefix(r.Object, "configmap ")
		for _, o := range objects {
			known = known || r.object.MatchString(o)
		}
		if !known {
			t.Errorf("line %d: object %q matches none of %q, a service or a configmap", r.Line, r.Object, objects)
		}
		for _, c := range r.Cases {
			if !strings.HasPrefix(c, "kubeflow:") && !strings.HasPrefix(c, "sparkhooks:") {
				t.Errorf("line %d: case %q is not kubeflow:<path> or sparkhooks:<path>", r.Line, c)
			}
		}
	}
}
