package sparkapp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// NamespaceSelector chooses the namespaces whose SparkApplications start, as the Kubeflow
// operator's --namespaces and --namespace-selector do: a namespace is selected when it is named,
// or when its labels match the selector. Neither set selects every namespace.
type NamespaceSelector struct {
	names    []string
	selector labels.Selector // nil without --namespace-selector
	text     string          // the selector as given, for messages
}

// NewNamespaceSelector parses a label selector in kubectl's syntax ("team=data,env in (prod)").
// An empty name in names selects every namespace, as in Kubeflow's chart.
func NewNamespaceSelector(names []string, selector string) (NamespaceSelector, error) {
	s := NamespaceSelector{names: slices.Clone(names), text: selector}
	if slices.Contains(names, "") {
		return NamespaceSelector{}, nil
	}
	if selector != "" {
		parsed, err := labels.Parse(selector)
		if err != nil {
			return NamespaceSelector{}, fmt.Errorf("namespace selector %q: %w", selector, err)
		}
		s.selector = parsed
	}
	return s, nil
}

// UnmarshalJSON reads {"names": [...], "selector": "..."}, so that a golden case's config.json
// can set the selection as the flags do.
func (s *NamespaceSelector) UnmarshalJSON(b []byte) error {
	var v struct {
		Names    []string `json:"names"`
		Selector string   `json:"selector"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	parsed, err := NewNamespaceSelector(v.Names, v.Selector)
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// All tells whether every namespace is selected.
func (s NamespaceSelector) All() bool { return len(s.names) == 0 && s.selector == nil }

// keyNamespace is the related object the customize hook asks for: the parent's own Namespace.
var keyNamespace = metacontroller.Key("Namespace", "v1")

// condNamespaceSelected is False while the parent's namespace is not selected and a new attempt
// waits for it; absent otherwise.
const condNamespaceSelected = "NamespaceSelected"

// ReasonNamespaceNotSelected is the reason of that condition and of its Event.
const ReasonNamespaceNotSelected = "NamespaceNotSelected"

// namespaceRule asks for the parent's Namespace: a cluster-scoped object, which reaches the sync
// hook only in a v2 request (Metacontroller's v1 conversion leaves cluster-scoped related
// objects out for a namespaced parent). Its labels decide whether the application may start.
func namespaceRule(app *v1beta2.SparkApplication) metacontroller.RelatedResourceRule {
	return metacontroller.RelatedResourceRule{APIVersion: "v1", Resource: "namespaces", Names: []string{app.Namespace}}
}

// namespaceView is the part of a Namespace the decision reads.
type namespaceView struct {
	Metadata struct {
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

// notSelected is why the parent's namespace is not selected; empty when it is.
func (s NamespaceSelector) notSelected(in *input) (string, error) {
	ns := in.app.Namespace
	if s.All() || slices.Contains(s.names, ns) {
		return "", nil
	}
	var view namespaceView
	found, err := in.related.Decode(keyNamespace, ns, &view)
	if err != nil {
		return "", metacontroller.RequestErrorf("%w", err)
	}
	if !found {
		return fmt.Sprintf("the sync request carries no Namespace %q, so its labels cannot be matched against %s: the registration's customize hook must ask for it and its sync hook must be version v2", ns, s.describe()), nil
	}
	if s.selector != nil && s.selector.Matches(labels.Set(view.Metadata.Labels)) {
		return "", nil
	}
	return fmt.Sprintf("namespace %s is not selected by %s: no new attempt starts until it is", ns, s.describe()), nil
}

func (s NamespaceSelector) describe() string {
	var parts []string
	if len(s.names) > 0 {
		parts = append(parts, fmt.Sprintf("--namespaces %s", strings.Join(s.names, ",")))
	}
	if s.text != "" {
		parts = append(parts, fmt.Sprintf("--namespace-selector %q", s.text))
	}
	return strings.Join(parts, " or ")
}

// leftAlone answers for a new application whose namespace is not selected: no children, and
// the observed status with only the NamespaceSelected condition, which says why and tells its
// Event once. Metacontroller writes observedGeneration whatever the answer, so this costs no
// write of its own beyond the condition's first.
func leftAlone(in *input, now time.Time, why string) *metacontroller.SyncResponse {
	d := &decider{in: in, status: in.app.Status}
	d.status.ObservedGeneration = in.app.Generation
	d.setCondition(condNamespaceSelected, metav1.ConditionFalse, ReasonNamespaceNotSelected, why, firstDecisionTime(in.app, now.UTC().Truncate(time.Second)))
	return &metacontroller.SyncResponse{Status: &d.status, Children: []any{}}
}

// holdForNamespace keeps a new attempt from starting in a namespace that is no longer selected:
// what runs goes on (only new attempts wait), and the condition says why.
func (d *decider) holdForNamespace(waitState v1beta2.ApplicationStateType) {
	d.setState(waitState, d.status.AppState.ErrorMessage)
	d.setCondition(condNamespaceSelected, metav1.ConditionFalse, ReasonNamespaceNotSelected, d.namespaceHold, d.now)
}
