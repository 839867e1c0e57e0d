//go:build e2e

// Package harness is what the end-to-end suites share beside the control plane: a fake node and
// the Kubelets that play its pods, the Kueue controller, and the object stores (MinIO,
// fake-gcs-server) and fixtures that kubectl spark stages to.
package harness
