package mcstandin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "sigs.k8s.io/json"
)

type syncResponse struct {
	Status             map[string]any   `json:"status"`
	Children           []map[string]any `json:"children"`
	ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
	Finalized          bool             `json:"finalized"`
}

func (c *Controller) callSyncHook(ctx context.Context, parent *unstructured.Unstructured, observed, related childMap) (*syncResponse, error) {
	hook, name := c.cc.Spec.Hooks.Sync, "sync"
	finalizing := parent.GetDeletionTimestamp() != nil && c.cc.Spec.Hooks.Finalize != nil
	if finalizing {
		hook, name = c.cc.Spec.Hooks.Finalize, "finalize"
	}
	request := map[string]any{
		"controller": c.ccJSON,
		"parent":     parent.Object,
		"children":   forHookVersion(hook.Version, parent, observed),
		"related":    forHookVersion(hook.Version, parent, related),
		"finalizing": finalizing,
	}
	var resp syncResponse
	if err := c.post(ctx, hook, name, request, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// post calls a hook. Anything but 200 with a JSON body is an error, which leaves children and
// status as they are and retries the sync with back-off.
func (c *Controller) post(ctx context.Context, hook *Hook, name string, request, response any) error {
	body, err := json.Marshal(request)
	if err != nil {
		return fmt.Errorf("%s hook: encoding the request: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, hook.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.url(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s hook: %w", name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s hook failed: %w", name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s hook failed: reading the response: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s hook failed: POST %s: HTTP %d: %s", name, hook.url(), resp.StatusCode, truncate(string(data), 500))
	}
	// As Metacontroller decodes it (sigs.k8s.io/json): whole numbers become int64, as in objects
	// read from the API server, so an unchanged child compares equal to its observed self.
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, response); err != nil {
		return fmt.Errorf("%s hook failed: POST %s: invalid JSON response: %w", name, hook.url(), err)
	}
	return nil
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
