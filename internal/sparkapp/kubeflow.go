package sparkapp

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// An application taken over from the Kubeflow Spark Operator (docs/migrate-from-kubeflow.md)
// comes with the status Kubeflow wrote: a submission id and attempt counts but no
// submittedSpecHash, which only this hook writes. Its attempt was submitted by Kubeflow's
// spark-submit, so the hook cannot build its children again: it follows the driver Pod that
// exists, as a child when the administrator labelled it for Metacontroller to adopt, else as a
// related object found by the name status.driverInfo.podName gives, and never submits that
// attempt again. The Adopted condition says which, and records in its observedGeneration the
// spec the attempt is taken to run: a later edit gives the attempt up as any spec change does.

// Condition type and reasons of an application whose status Kubeflow's operator wrote.
const (
	condAdopted = "Adopted"
	// ReasonKubeflowDriverAdopted: the attempt's driver Pod is a child, with everything Kubeflow
	// made for it, and goes with the application.
	ReasonKubeflowDriverAdopted = "KubeflowDriverAdopted"
	// ReasonKubeflowDriverNotOwned: Metacontroller released the driver Pod (it lacks the
	// controller-uid label), so it is followed but would outlive the application.
	ReasonKubeflowDriverNotOwned = "KubeflowDriverNotOwned"
	// ReasonKubeflowStatusAdopted: the attempt had ended, or its driver is not seen yet.
	ReasonKubeflowStatusAdopted = "KubeflowStatusAdopted"
)

// submittedByKubeflow tells whether the attempt a status names was submitted by Kubeflow's
// operator: it has a submission but no spec hash.
func submittedByKubeflow(st *v1beta2.SparkApplicationStatus) bool {
	return st.SubmissionID != "" && st.SubmittedSpecHash == ""
}

// kubeflowDriverRule asks for the driver Pod of an attempt Kubeflow submitted by its name, so
// that the sync sees it even when Metacontroller did not adopt it: to follow it while it runs,
// and after, since a retry's driver would take its name. Metacontroller keeps the answer for
// the parent's generation, which suits: the status that asks for it stays until a submission of
// this hook, whose driver is a child.
func kubeflowDriverRule(app *v1beta2.SparkApplication) *metacontroller.RelatedResourceRule {
	st := &app.Status
	if !submittedByKubeflow(st) || st.DriverInfo.PodName == "" {
		return nil
	}
	return &metacontroller.RelatedResourceRule{APIVersion: "v1", Resource: "pods", Namespace: app.Namespace, Names: []string{st.DriverInfo.PodName}}
}

// releasedDriver is the related driver Pod of an attempt Kubeflow submitted, nil unless it
// carries that attempt's submission id.
func (d *decider) releasedDriver() *podView {
	pod := d.in.kubeflowDriver
	if pod == nil || !submittedByKubeflow(&d.status) || pod.Metadata.Labels.SubmissionID != d.status.SubmissionID {
		return nil
	}
	return pod
}

// adoptKubeflowStatus marks, once, a status Kubeflow's operator wrote as taken over, before the
// decision reads it: specChanged compares the spec with the generation recorded here.
func (d *decider) adoptKubeflowStatus() {
	if !submittedByKubeflow(&d.status) || d.condition(condAdopted) != nil {
		return
	}
	d.setCondition(condAdopted, metav1.ConditionTrue, ReasonKubeflowStatusAdopted,
		fmt.Sprintf("the status of submission %s was written by the Kubeflow Spark Operator; sparkhooks goes on from it and does not submit that attempt again", d.status.SubmissionID), d.now)
}

// followKubeflowDriver reports how the driver Pod of an attempt Kubeflow submitted is followed:
// as a child (adopted) or as a related object (released by Metacontroller, and left behind
// when the application is deleted). The condition changes only with that, so that its
// observedGeneration keeps the generation of the adoption.
func (d *decider) followKubeflowDriver(pod *podView, child bool) {
	if !submittedByKubeflow(&d.status) {
		return
	}
	status, reason := metav1.ConditionTrue, ReasonKubeflowDriverAdopted
	msg := fmt.Sprintf("driver Pod %s of submission %s, which the Kubeflow Spark Operator submitted, is adopted: sparkhooks follows it to its end and it goes with the application", pod.Metadata.Name, d.status.SubmissionID)
	if !child {
		status, reason = metav1.ConditionFalse, ReasonKubeflowDriverNotOwned
		msg = fmt.Sprintf("driver Pod %s of submission %s, which the Kubeflow Spark Operator submitted, is not labelled %s=%s, so Metacontroller released it instead of adopting it: sparkhooks follows it to its end, but it would outlive the application; label it (deploy/migrate/adopt-kubeflow-children.sh) and Metacontroller adopts it",
			pod.Metadata.Name, d.status.SubmissionID, sparkpod.LabelControllerUID, d.in.app.UID)
	}
	if c := d.condition(condAdopted); c != nil && c.Status == status && c.Reason == reason {
		return
	}
	generation := d.in.app.Generation
	if c := d.condition(condAdopted); c != nil {
		generation = c.ObservedGeneration
	}
	d.setCondition(condAdopted, status, reason, msg, d.now)
	d.condition(condAdopted).ObservedGeneration = generation
}

// kubeflowSpecChanged is specChanged for an attempt Kubeflow submitted: the spec was edited
// since the status was taken over.
func (d *decider) kubeflowSpecChanged() bool {
	c := d.condition(condAdopted)
	return submittedByKubeflow(&d.status) && c != nil && c.ObservedGeneration != d.in.app.Generation
}
