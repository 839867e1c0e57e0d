package sparkapp

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/kueue"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Finalize is the finalize hook: on deletion every child is released, and the parent may go
// once none is observed any more.
func Finalize(req *metacontroller.SyncRequest) (*metacontroller.SyncResponse, error) {
	if req != nil {
		if resp, _, handled, err := leaveToManager(req, true, time.Time{}, Config{}); handled {
			return resp, err
		}
	}
	in, err := decodeRequest(req)
	if err != nil {
		return nil, err
	}
	if err := requireDeletion(in.app); err != nil {
		return nil, err
	}
	return finalize(in), nil
}

func finalize(in *input) *metacontroller.SyncResponse {
	status := in.app.Status
	return &metacontroller.SyncResponse{
		Status:    &status,
		Children:  []any{},
		Finalized: in.observedCount() == 0,
	}
}

// Customize is the customize hook: it asks Metacontroller to send the application's executor
// Pods, which the driver creates and owns, along with every sync, and what the driver Pod's
// admission reads (admissionRules).
func Customize(req *metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("empty request")
	}
	// The executor selector needs only the name; a spec that did not decode is the sync's to report.
	app, _, err := decodeParent(req.Parent)
	if err != nil {
		return nil, err
	}
	return CustomizeTranslated(req, app), nil
}

// CustomizeTranslated is the customize hook of an application of another API translated into
// app (see SyncTranslated).
func CustomizeTranslated(req *metacontroller.CustomizeRequest, app *v1beta2.SparkApplication) *metacontroller.CustomizeResponse {
	// The executors, in the parent's namespace only: a v2 rule without one lists every
	// namespace's Pods on each sync, and would take in another namespace's application of the
	// same name.
	rules := []metacontroller.RelatedResourceRule{{
		APIVersion:    "v1",
		Resource:      "pods",
		Namespace:     app.Namespace,
		LabelSelector: &metav1.LabelSelector{MatchLabels: children.ExecutorSelector(app)},
	}}
	prebuilt := kueue.PrebuiltWorkloadName(app.ObjectMeta)
	if (app.Labels[kueue.QueueNameLabel] != "" || prebuilt != "") && metacontroller.DeclaresChild(req.Controller, kueue.APIVersion, kueue.WorkloadResource) {
		rules = append(rules, kueue.RelatedRules()...)
		switch {
		case app.Spec.ManagedBy != nil && *app.Spec.ManagedBy == v1beta2.ManagedByMultiKueue:
			// The application itself: MultiKueue's copy of the worker's status is a status-only
			// change, which the registration's ignoreStatusChanges keeps from bringing a sync,
			// and the sync that sees the final status releases the Workload (dispatchedWorkload).
			rules = append(rules, metacontroller.RelatedResourceRule{APIVersion: v1beta2.GroupVersion.String(),
				Resource: "sparkapplications", Namespace: app.Namespace, Names: []string{app.Name}})
		case prebuilt != "":
			// The Workload MultiKueue made, which is not our child (see queue.prebuilt).
			rules = append(rules, metacontroller.RelatedResourceRule{APIVersion: kueue.APIVersion,
				Resource: kueue.WorkloadResource, Namespace: app.Namespace, Names: []string{prebuilt}})
		}
	}
	if rule := kubeflowDriverRule(app); rule != nil {
		rules = append(rules, *rule)
	}
	rules = append(rules, namespaceRule(app))
	rules = append(rules, admissionRules(app.Namespace, rules)...)
	return &metacontroller.CustomizeResponse{RelatedResources: rules}
}
