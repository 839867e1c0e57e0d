package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestCeilingSync(t *testing.T) {
	tests := []struct {
		name, request, phase string
	}{
		{name: "no Pod yet", request: `{"parent":{"metadata":{"name":"app-0001"}},"children":{"Pod.v1":{}}}`, phase: ""},
		{name: "its Pod running", request: `{"parent":{"metadata":{"name":"app-0001"}},"children":{"Pod.v1":{"app-0001-driver":{"status":{"phase":"Running"}}}}}`, phase: "Running"},
		{name: "its Pod succeeded", request: `{"parent":{"metadata":{"name":"app-0001"}},"children":{"Pod.v1":{"app-0001-driver":{"status":{"phase":"Succeeded"}}}}}`, phase: "Succeeded"},
		{name: "another parent's Pod is not its own", request: `{"parent":{"metadata":{"name":"app-0001"}},"children":{"Pod.v1":{"app-0002-driver":{"status":{"phase":"Failed"}}}}}`, phase: ""},
	}
	var first any
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ceilingSync([]byte(tt.request))
			if err != nil {
				t.Fatal(err)
			}
			var resp struct {
				Status   map[string]string `json:"status"`
				Children []struct {
					Kind     string `json:"kind"`
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
					Spec map[string]any `json:"spec"`
				} `json:"children"`
			}
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.Status["phase"] != tt.phase {
				t.Errorf("phase %q, want %q", resp.Status["phase"], tt.phase)
			}
			if len(resp.Children) != 1 || resp.Children[0].Kind != "Pod" || resp.Children[0].Metadata.Name != "app-0001-driver" {
				t.Fatalf("children %+v, want the one Pod app-0001-driver", resp.Children)
			}
			// The Pod is the same whatever its phase: Metacontroller sees nothing to update.
			if first == nil {
				first = resp.Children[0]
			} else if !reflect.DeepEqual(first, any(resp.Children[0])) {
				t.Errorf("the Pod changed across syncs: %+v, then %+v", first, resp.Children[0])
			}
		})
	}
	if _, err := ceilingSync([]byte("{")); err == nil {
		t.Error("a request that is not JSON was answered")
	}
}
