package sparkconnect

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// A SparkConnect taken over from the Kubeflow Spark Operator (docs/migrate-from-kubeflow.md)
// has a server Pod Kubeflow made, <name>-server, with its own command, ConfigMap and Service,
// and a status with no submissionID. The hook cannot build that Pod again, and a rebuilt one
// would end the sessions in it, so it follows it instead: every child stays as observed, the
// state comes from the Pod's readiness, and the Adopted condition says whether the Pod is a
// child (labelled for Metacontroller to adopt) or was released, which the hook never deletes.
// A spec edited after the takeover restarts the server as any spec change does, with a server
// of sparkhooks; so does a Kubeflow server that ends.

// RoleConnectServer is the spark-role Kubeflow's operator gives a server Pod (sparkhooks'
// servers are drivers).
const RoleConnectServer = "connect-server"

// Condition type and reasons of a server Kubeflow's operator made.
const (
	condAdopted = "Adopted"
	// ReasonKubeflowServerAdopted: the server Pod is a child, followed until the spec changes
	// or it ends.
	ReasonKubeflowServerAdopted = "KubeflowServerAdopted"
	// ReasonKubeflowServerNotOwned: Metacontroller released the server Pod (it lacks the
	// controller-uid label): it is followed, never deleted, and no server of sparkhooks can
	// take its name until it is labelled or deleted.
	ReasonKubeflowServerNotOwned = "KubeflowServerNotOwned"
)

// madeByKubeflow tells a server Pod Kubeflow's operator made: its name and role, and no
// submission, for a status that names none.
func madeByKubeflow(sc *v1alpha1.SparkConnect, pod *podView) bool {
	return sc.Status.SubmissionID == "" && pod.Metadata.Name == v1alpha1.ServerPodName(sc) &&
		pod.submission() == "" && pod.Metadata.Labels[sparkpod.LabelSparkRole] == RoleConnectServer
}

// kubeflowServerRule asks for the server Pod by name while the status is Kubeflow's (a state
// but no submission), so that the sync sees it even when Metacontroller released it.
func kubeflowServerRule(sc *v1alpha1.SparkConnect) *metacontroller.RelatedResourceRule {
	if sc.Status.SubmissionID != "" || sc.Status.State == "" {
		return nil
	}
	return &metacontroller.RelatedResourceRule{APIVersion: "v1", Resource: "pods", Namespace: sc.Namespace, Names: []string{v1alpha1.ServerPodName(sc)}}
}

// kubeflowServer is the server Pod Kubeflow's operator made, if the request has one to
// follow: a live child, or a released Pod in any phase (its name is taken either way), and
// whether it is a child.
func (d *decider) kubeflowServer() (*podView, bool) {
	for _, pod := range d.in.pods {
		if madeByKubeflow(d.in.sc, pod) && pod.live() {
			return pod, true
		}
	}
	if pod := d.in.releasedServer; pod != nil && madeByKubeflow(d.in.sc, pod) {
		return pod, false
	}
	return nil, false
}

// followKubeflowServer answers for a server Kubeflow's operator made: every observed child as
// it was, the state from the Pod, and the Adopted condition. A child Pod goes only when the
// spec changed since the takeover, as any server goes at a spec change.
func (d *decider) followKubeflowServer(pod *podView, child bool) {
	status, reason := metav1.ConditionTrue, ReasonKubeflowServerAdopted
	msg := fmt.Sprintf("server Pod %s was made by the Kubeflow Spark Operator: sparkhooks follows it as it runs, without restarting it, until the spec changes", pod.Metadata.Name)
	if !child {
		status, reason = metav1.ConditionFalse, ReasonKubeflowServerNotOwned
		msg = fmt.Sprintf("server Pod %s, made by the Kubeflow Spark Operator, is not labelled %s=%s, so Metacontroller released it: sparkhooks follows it but never deletes it, and starts no server of its own while it has that name; label it (deploy/migrate/adopt-kubeflow-children.sh) or delete it",
			pod.Metadata.Name, sparkpod.LabelControllerUID, d.in.sc.UID)
	}
	generation := d.in.sc.Generation
	c := meta.FindStatusCondition(d.status.Conditions, condAdopted)
	if c != nil {
		generation = c.ObservedGeneration
	}
	if c == nil || c.Status != status || c.Reason != reason {
		d.setCondition(condAdopted, status, reason, msg)
		meta.FindStatusCondition(d.status.Conditions, condAdopted).ObservedGeneration = generation
	}
	if child && generation != d.in.sc.Generation {
		// The spec changed since the takeover: the server restarts with it.
		d.result.Restart = "SpecChanged"
		d.keepObservedExcept(pod.Metadata.Name)
		d.setNotReady("Restarting", "the spec changed: the server Kubeflow's operator made restarts as a server of sparkhooks")
		return
	}
	d.keepObserved()
	if !pod.live() {
		d.setNotReady("KubeflowServerEnded", fmt.Sprintf("the server Pod %s, made by the Kubeflow Spark Operator and released by Metacontroller, ended (%s%s): delete it and sparkhooks starts its own", pod.Metadata.Name, pod.Status.Phase, reasonSuffix(pod)))
		return
	}
	d.reportPod(pod)
}
