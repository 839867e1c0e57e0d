//go:build e2e

package mcstandin

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// UpdateStatus is updateStatus for the tests that run on the stack's control plane, which are
// an external package: the stack imports this one.
func (c *Controller) UpdateStatus(ctx context.Context, parent *unstructured.Unstructured, status map[string]any) error {
	return c.updateStatus(ctx, parent, status)
}
