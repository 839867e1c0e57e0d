// Package deploytest checks what a cluster receives from this repository: the Metacontroller
// registrations in metacontroller/, the Helm chart rendered with default and all-features values,
// the CRDs the chart ships, the kube-state-metrics configuration and the Grafana dashboard.
//
// Every object is decoded strictly into its Go type (the Kubernetes API types, or local copies of
// Metacontroller's and kube-state-metrics' configuration types), so a misspelt field fails here
// rather than being dropped by the API server. The package has no code outside its tests.
//
// The checks of the rendered chart need the output of hack/helm-check.sh; they are skipped unless
// SPARKHOOKS_RENDERED_DIR names that directory (make chart-check sets it). Everything else runs
// with plain go test.
package deploytest
