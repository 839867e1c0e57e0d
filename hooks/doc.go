// Package hooks is the HTTP shell around the sparkhooks decisions: it routes, limits and decodes
// requests, calls the pure core packages, encodes their answers and records metrics. No decision
// is made here.
package hooks
