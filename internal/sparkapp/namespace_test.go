package sparkapp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

func TestNewNamespaceSelector(t *testing.T) {
	for _, tc := range []struct {
		name      string
		names     []string
		selector  string
		namespace string
		labels    map[string]string
		selected  bool
		wantErr   bool
	}{
		{name: "nothing set selects all", namespace: "a", selected: true},
		{name: "an empty name selects all", names: []string{""}, selector: "x=y", namespace: "a", selected: true},
		{name: "named", names: []string{"a"}, namespace: "a", selected: true},
		{name: "not named", names: []string{"a"}, namespace: "b"},
		{name: "selector matches", selector: "spark=on,env in (prod,dev)", namespace: "b", labels: map[string]string{"spark": "on", "env": "dev"}, selected: true},
		{name: "selector does not match", selector: "spark=on,env in (prod,dev)", namespace: "b", labels: map[string]string{"spark": "on", "env": "test"}},
		{name: "named or matching", names: []string{"a"}, selector: "spark", namespace: "b", labels: map[string]string{"spark": ""}, selected: true},
		{name: "not a selector", selector: "spark in (", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewNamespaceSelector(tc.names, tc.selector)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			in := &input{related: metacontroller.ChildMap{}}
			in.app = &v1beta2.SparkApplication{}
			in.app.Namespace = tc.namespace
			raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"name": tc.namespace, "labels": tc.labels}})
			require.NoError(t, err)
			in.related[keyNamespace] = map[string]json.RawMessage{tc.namespace: raw}
			why, err := s.notSelected(in)
			require.NoError(t, err)
			require.Equal(t, tc.selected, why == "", why)
		})
	}
}

// TestNamespaceNotSelectedStartsNothing: in a namespace that is not selected, whatever the
// request (every golden sync request, mutated as the invariant test mutates them), the answer
// keeps the invariant and starts no attempt: every driver Pod it holds was observed or belongs to
// the attempt the observed status already names. What runs goes on, nothing new starts.
func TestNamespaceNotSelectedStartsNothing(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync", "*", "request.json"))
	require.NoError(t, err)
	cfg := DefaultConfig()
	cfg.Namespaces, err = NewNamespaceSelector(nil, "spark-operator=enabled")
	require.NoError(t, err)
	for _, file := range files {
		dir := filepath.Dir(file)
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		now := caseNow(t, dir)
		var probe map[string]any
		require.NoError(t, json.Unmarshal(body, &probe))
		for _, m := range append(mutations(probe), mutation{name: "as-is", apply: func(map[string]any) {}}) {
			var req map[string]any
			require.NoError(t, json.Unmarshal(body, &req))
			m.apply(req)
			ns, _ := obj(obj(req, "parent"), "metadata")["namespace"].(string)
			obj(obj(req, "related"), "Namespace.v1")[ns] = map[string]any{
				"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": ns, "labels": map[string]any{"kubernetes.io/metadata.name": ns}},
			}
			mutated, err := json.Marshal(req)
			require.NoError(t, err)
			t.Run(filepath.Base(dir)+"/"+m.name, func(t *testing.T) {
				var sr metacontroller.SyncRequest
				if json.Unmarshal(mutated, &sr) != nil {
					return
				}
				observed := map[string]bool{}
				for name := range sr.Children[keyPod] {
					observed[name] = true
				}
				var parent struct {
					Status struct {
						SubmissionID string `json:"submissionID"`
					} `json:"status"`
				}
				_ = json.Unmarshal(sr.Parent, &parent)
				resp, _, err := Sync(&sr, now.Add(m.shift), cfg)
				checkInvariant(t, mutated, resp, err)
				if err != nil {
					return
				}
				for _, c := range resp.Children {
					var child struct {
						Kind     string `json:"kind"`
						Metadata struct {
							Name   string            `json:"name"`
							Labels map[string]string `json:"labels"`
						} `json:"metadata"`
					}
					require.NoError(t, json.Unmarshal(coretest.MustJSON(t, c), &child))
					sub := child.Metadata.Labels["sparkoperator.k8s.io/submission-id"]
					if child.Kind == "Pod" && !observed[child.Metadata.Name] && (sub == "" || sub != parent.Status.SubmissionID) {
						t.Fatalf("a driver Pod %s of a new attempt %s starts in a namespace that is not selected (the status names %q)", child.Metadata.Name, sub, parent.Status.SubmissionID)
					}
				}
			})
		}
	}
}
