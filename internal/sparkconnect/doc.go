// Package sparkconnect decides the children and status of a SparkConnect, the Kubeflow
// operator's long-running Spark Connect server, as a pure function of Metacontroller's request
// and the clock.
//
// The server is a SparkApplication driver whose main class is the Spark Connect server
// (v1alpha1.ServerApplication), built by internal/children like any driver: its Pod
// <name>-server, its properties ConfigMap and executor pod template, its headless driver
// Service. This package adds what a server needs besides: TCP probes on the gRPC port, the
// client Service with Kubeflow's four ports, and the status the Kubeflow SDK waits on.
//
// A server is never done. A server Pod that exits or is deleted is started again from the
// current spec; a spec change restarts the server (the old Pod is deleted, then the new one is
// created under the same name). The identity of a server is its submission: derived from the
// parent's uid and the spec's hash, recorded in status.submissionID and carried by the Pod's
// submission-id label. A live Pod is left out of an answer only when the spec changed away
// from its submission; a live Pod of a submission the status does not know is refused (409).
// The one exception is a server the Kubeflow Spark Operator made before a switch-over, which
// has no submission: it is followed as it is, never rebuilt (kubeflow.go).
package sparkconnect
