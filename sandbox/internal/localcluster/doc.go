// Package localcluster is a Kubernetes control plane in one process, for the end-to-end tests and
// the local sandbox (sandbox/cmd/sparkhooks-local): embedded etcd, an API server serving the core kinds
// sparkhooks makes and the project's CRDs, the controllers a cluster would run for them (garbage
// collection, StatefulSets, default service accounts), and a CompositeController contract
// controller that drives the sparkhooks hooks from the registrations in metacontroller/ as
// Metacontroller would. It is a stand-in, not a cluster: docs/local.md lists where it differs.
package localcluster
