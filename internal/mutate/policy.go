package mutate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// PolicyVersion is the only policy file format this webhook reads.
const PolicyVersion = 1

// Annotations and labels the policy's scheduler shorthands write.
const (
	labelYuniKornQueue          = "queue"
	labelYuniKornApplicationID  = "applicationId"
	annotationTaskGroupName     = "yunikorn.apache.org/task-group-name"
	annotationTaskGroups        = "yunikorn.apache.org/task-groups"
	annotationSchedulingPolicy  = "yunikorn.apache.org/schedulingPolicyParameters"
	annotationVolcanoGroupName  = "scheduling.k8s.io/group-name"
	defaultVolcanoGroupTemplate = "{{APP_ID}}-podgroup"
	defaultSchedulerName        = "default-scheduler"
)

// PolicySpec is the policy file: rules applied to every Spark pod in file order.
type PolicySpec struct {
	Version int    `json:"version"`
	Rules   []Rule `json:"rules"`
}

// Rule applies its defaults, enforcements and guardrails to the Spark pods it matches.
type Rule struct {
	// Name identifies the rule in denial messages and in sparkhooks_admission_denials_total{rule}.
	Name       string      `json:"name"`
	Match      Match       `json:"match,omitempty"`
	Defaults   *Settings   `json:"defaults,omitempty"`
	Enforce    *Settings   `json:"enforce,omitempty"`
	Guardrails *Guardrails `json:"guardrails,omitempty"`
}

// Match selects pods; every criterion given must hold, and an empty Match selects every Spark pod.
type Match struct {
	// Namespaces lists the namespaces the rule applies in; empty means all.
	Namespaces []string `json:"namespaces,omitempty"`
	// Selector is matched against the labels the pod arrives with, before any rule changes them.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Role is driver, executor or any (the default).
	Role string `json:"role,omitempty"`
}

// Settings are the pod fields a rule sets. Under "defaults" a field is set only where the pod has
// no value; under "enforce" it is always set.
type Settings struct {
	SchedulerName     string              `json:"schedulerName,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
	Labels            map[string]string   `json:"labels,omitempty"`
	Annotations       map[string]string   `json:"annotations,omitempty"`
	NodeSelector      map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations       []corev1.Toleration `json:"tolerations,omitempty"`
	YuniKorn          *YuniKorn           `json:"yunikorn,omitempty"`
	Volcano           *Volcano            `json:"volcano,omitempty"`
}

// YuniKorn is shorthand for the labels and annotations the YuniKorn scheduler reads.
type YuniKorn struct {
	// Queue becomes the "queue" label.
	Queue string `json:"queue,omitempty"`
	// ApplicationID copies spark-app-selector to the "applicationId" label, so that the driver and
	// its executors form one YuniKorn application.
	ApplicationID bool `json:"applicationId,omitempty"`
	// TaskGroupName becomes yunikorn.apache.org/task-group-name.
	TaskGroupName string `json:"taskGroupName,omitempty"`
	// TaskGroups becomes yunikorn.apache.org/task-groups, on drivers only: YuniKorn reads it from
	// the application's first pod.
	TaskGroups []TaskGroup `json:"taskGroups,omitempty"`
	// SchedulingPolicyParameters becomes yunikorn.apache.org/schedulingPolicyParameters, on drivers
	// only, for example "placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard".
	SchedulingPolicyParameters string `json:"schedulingPolicyParameters,omitempty"`
}

// TaskGroup is one YuniKorn gang-scheduling group.
type TaskGroup struct {
	Name                      string                            `json:"name"`
	MinMember                 int32                             `json:"minMember"`
	MinResource               map[string]resource.Quantity      `json:"minResource"`
	NodeSelector              map[string]string                 `json:"nodeSelector,omitempty"`
	Tolerations               []corev1.Toleration               `json:"tolerations,omitempty"`
	Affinity                  *corev1.Affinity                  `json:"affinity,omitempty"`
	Labels                    map[string]string                 `json:"labels,omitempty"`
	Annotations               map[string]string                 `json:"annotations,omitempty"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
}

// Volcano is shorthand for the annotation that puts a pod into a Volcano PodGroup.
type Volcano struct {
	// GroupName becomes scheduling.k8s.io/group-name; empty means "{{APP_ID}}-podgroup", the name
	// Spark's VolcanoFeatureStep gives the group.
	GroupName string `json:"groupName,omitempty"`
}

// Guardrails refuse pods; they are checked on the pod after every customization and rule has been
// applied, so an application cannot smuggle a forbidden setting in through its annotation.
type Guardrails struct {
	DenyPrivileged  bool `json:"denyPrivileged,omitempty"`
	DenyHostPath    bool `json:"denyHostPath,omitempty"`
	DenyHostNetwork bool `json:"denyHostNetwork,omitempty"`
	// AllowedServiceAccounts, when not empty, lists the only service accounts a pod may run as.
	AllowedServiceAccounts []string `json:"allowedServiceAccounts,omitempty"`
	// ExemptNamespaces are namespaces where this rule's guardrails do not apply.
	ExemptNamespaces []string `json:"exemptNamespaces,omitempty"`
}

// Policy is a validated, compiled PolicySpec. It is immutable and safe for concurrent use; a nil
// *Policy has no rules.
type Policy struct {
	rules []compiledRule
}

type compiledRule struct {
	name       string
	namespaces []string // nil: every namespace
	selector   labels.Selector
	role       string // "" matches every role
	defaults   *compiledSettings
	enforce    *compiledSettings
	guardrails *Guardrails
}

type compiledSettings struct {
	schedulerName     string
	priorityClassName string
	labels            []entry
	annotations       []entry
	nodeSelector      []entry
	tolerations       []corev1.Toleration
}

// entry is one label, annotation or node-selector key to set.
type entry struct {
	key, value string
	kind       string
	driverOnly bool
	template   bool // value may contain placeholders
}

// LoadPolicy reads and validates a policy file.
func LoadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// ParsePolicy parses and validates a policy document (YAML or JSON). Unknown fields are errors, so
// that a misspelt guardrail is reported instead of silently not enforced.
func ParsePolicy(data []byte) (*Policy, error) {
	// Decoding against the Go types lets YAML scalars such as "yes" or "1" stay the strings a
	// label value needs; strict mode refuses unknown and duplicate keys.
	var spec PolicySpec
	if err := yaml.UnmarshalStrict(data, &spec); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	return NewPolicy(spec)
}

// NewPolicy validates and compiles spec.
func NewPolicy(spec PolicySpec) (*Policy, error) {
	if spec.Version != PolicyVersion {
		return nil, fmt.Errorf("version must be %d, got %d", PolicyVersion, spec.Version)
	}
	p := &Policy{rules: make([]compiledRule, 0, len(spec.Rules))}
	seen := make(map[string]bool, len(spec.Rules))
	var errs []error
	for i := range spec.Rules {
		r := &spec.Rules[i]
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("rules[%d]: name %q is used twice", i, r.Name))
			continue
		}
		seen[r.Name] = true
		cr, err := compileRule(r)
		if err != nil {
			errs = append(errs, withPrefix(fmt.Sprintf("rules[%d] (%q)", i, r.Name), err)...)
			continue
		}
		p.rules = append(p.rules, cr)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// RuleNames lists the rules in the order they apply.
func (p *Policy) RuleNames() []string {
	if p == nil {
		return nil
	}
	names := make([]string, len(p.rules))
	for i := range p.rules {
		names[i] = p.rules[i].name
	}
	return names
}

func compileRule(r *Rule) (compiledRule, error) {
	var errs []error
	if r.Name == "" {
		errs = append(errs, errors.New("name is required"))
	} else if msgs := validation.IsValidLabelValue(r.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("name: %s", strings.Join(msgs, "; ")))
	}
	if r.Defaults == nil && r.Enforce == nil && r.Guardrails == nil {
		errs = append(errs, errors.New("sets no defaults, enforcements or guardrails"))
	}
	cr := compiledRule{name: r.Name}
	switch r.Match.Role {
	case "", "any":
	case sparkpod.RoleDriver, sparkpod.RoleExecutor:
		cr.role = r.Match.Role
	default:
		errs = append(errs, fmt.Errorf("match.role must be driver, executor or any, got %q", r.Match.Role))
	}
	for _, ns := range r.Match.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("match.namespaces: %q: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	if len(r.Match.Namespaces) > 0 {
		cr.namespaces = slices.Clone(r.Match.Namespaces)
	}
	if r.Match.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(r.Match.Selector)
		if err != nil {
			errs = append(errs, fmt.Errorf("match.selector: %w", err))
		}
		cr.selector = sel
	}
	var err error
	if cr.defaults, err = compileSettings(r.Defaults); err != nil {
		errs = append(errs, withPrefix("defaults", err)...)
	}
	if cr.enforce, err = compileSettings(r.Enforce); err != nil {
		errs = append(errs, withPrefix("enforce", err)...)
	}
	if g := r.Guardrails; g != nil {
		if !g.DenyPrivileged && !g.DenyHostPath && !g.DenyHostNetwork && len(g.AllowedServiceAccounts) == 0 {
			errs = append(errs, errors.New("guardrails: no check is enabled"))
		}
		copied := *g
		copied.AllowedServiceAccounts = slices.Clone(g.AllowedServiceAccounts)
		copied.ExemptNamespaces = slices.Clone(g.ExemptNamespaces)
		cr.guardrails = &copied
	}
	return cr, errors.Join(errs...)
}

func compileSettings(s *Settings) (*compiledSettings, error) {
	if s == nil {
		return nil, nil
	}
	var errs []error
	cs := &compiledSettings{schedulerName: s.SchedulerName, priorityClassName: s.PriorityClassName}
	if s.SchedulerName != "" {
		if msgs := validation.IsDNS1123Subdomain(s.SchedulerName); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("schedulerName: %s", strings.Join(msgs, "; ")))
		}
	}
	if s.PriorityClassName != "" {
		if msgs := validation.IsDNS1123Subdomain(s.PriorityClassName); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("priorityClassName: %s", strings.Join(msgs, "; ")))
		}
	}
	for _, key := range sortedKeys(s.Labels) {
		cs.labels = append(cs.labels, entry{key: key, value: s.Labels[key], kind: kindLabels, template: true})
	}
	for _, key := range sortedKeys(s.Annotations) {
		cs.annotations = append(cs.annotations, entry{key: key, value: s.Annotations[key], kind: kindAnnotations, template: true})
	}
	for _, key := range sortedKeys(s.NodeSelector) {
		cs.nodeSelector = append(cs.nodeSelector, entry{key: key, value: s.NodeSelector[key], kind: kindNodeSelector})
	}
	if yk := s.YuniKorn; yk != nil {
		if err := addYuniKorn(cs, yk); err != nil {
			errs = append(errs, withPrefix("yunikorn", err)...)
		}
	}
	if v := s.Volcano; v != nil {
		name := v.GroupName
		if name == "" {
			name = defaultVolcanoGroupTemplate
		}
		cs.annotations = append(cs.annotations, entry{key: annotationVolcanoGroupName, value: name, kind: kindVolcano, template: true})
	}
	for i, t := range s.Tolerations {
		if err := validateToleration(t); err != nil {
			errs = append(errs, fmt.Errorf("tolerations[%d]: %w", i, err))
		}
	}
	cs.tolerations = slices.Clone(s.Tolerations)
	errs = append(errs, validateEntries("labels", cs.labels, true)...)
	errs = append(errs, validateEntries("annotations", cs.annotations, false)...)
	errs = append(errs, refuseReserved("labels", cs.labels)...)
	errs = append(errs, refuseReserved("annotations", cs.annotations)...)
	errs = append(errs, validateEntries("nodeSelector", cs.nodeSelector, true)...)
	if len(cs.labels)+len(cs.annotations)+len(cs.nodeSelector)+len(cs.tolerations) == 0 &&
		cs.schedulerName == "" && cs.priorityClassName == "" {
		errs = append(errs, errors.New("sets nothing"))
	}
	return cs, errors.Join(errs...)
}

func addYuniKorn(cs *compiledSettings, yk *YuniKorn) error {
	if yk.Queue != "" {
		cs.labels = append(cs.labels, entry{key: labelYuniKornQueue, value: yk.Queue, kind: kindYuniKorn, template: true})
	}
	if yk.ApplicationID {
		cs.labels = append(cs.labels, entry{key: labelYuniKornApplicationID, value: "{{APP_ID}}", kind: kindYuniKorn, template: true})
	}
	if yk.TaskGroupName != "" {
		cs.annotations = append(cs.annotations, entry{key: annotationTaskGroupName, value: yk.TaskGroupName, kind: kindYuniKorn, template: true})
	}
	if yk.SchedulingPolicyParameters != "" {
		cs.annotations = append(cs.annotations, entry{key: annotationSchedulingPolicy, value: yk.SchedulingPolicyParameters, kind: kindYuniKorn, driverOnly: true})
	}
	if len(yk.TaskGroups) == 0 {
		return nil
	}
	if err := validateTaskGroups(yk.TaskGroups); err != nil {
		return err
	}
	groups, err := json.Marshal(yk.TaskGroups)
	if err != nil {
		return fmt.Errorf("taskGroups: %w", err)
	}
	cs.annotations = append(cs.annotations, entry{key: annotationTaskGroups, value: string(groups), kind: kindYuniKorn, driverOnly: true})
	return nil
}

// validateTaskGroups applies YuniKorn's own checks, which otherwise reject the whole annotation
// only once the pod is being scheduled.
func validateTaskGroups(groups []TaskGroup) error {
	var errs []error
	names := map[string]bool{}
	for i, g := range groups {
		switch {
		case g.Name == "":
			errs = append(errs, fmt.Errorf("taskGroups[%d]: name is required", i))
		case names[g.Name]:
			errs = append(errs, fmt.Errorf("taskGroups[%d]: name %q is used twice", i, g.Name))
		}
		names[g.Name] = true
		if g.MinMember <= 0 {
			errs = append(errs, fmt.Errorf("taskGroups[%d]: minMember must be positive", i))
		}
		if len(g.MinResource) == 0 {
			errs = append(errs, fmt.Errorf("taskGroups[%d]: minResource is required", i))
		}
		for name, q := range g.MinResource {
			if q.Sign() < 0 {
				errs = append(errs, fmt.Errorf("taskGroups[%d]: minResource %s is negative", i, name))
			}
		}
	}
	return errors.Join(errs...)
}

func validateEntries(field string, entries []entry, labelValues bool) []error {
	var errs []error
	for _, e := range entries {
		if msgs := validation.IsQualifiedName(e.key); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: key %q: %s", field, e.key, strings.Join(msgs, "; ")))
		}
		value := e.value
		if e.template {
			if err := checkPlaceholders(e.value); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", field, e.key, err))
				continue
			}
			// Placeholders stand for label values, so a sample one checks the rest of the text.
			value, _ = expand(e.value, func(string) string { return "x" })
		}
		if labelValues {
			if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("%s: %s: value %q: %s", field, e.key, e.value, strings.Join(msgs, "; ")))
			}
		}
	}
	return errs
}

// refuseReserved refuses keys the hooks, Spark or Metacontroller depend on: a rule that set
// spark-role or a submission id would make the sync hook lose track of its pods.
func refuseReserved(field string, entries []entry) []error {
	var errs []error
	for _, e := range entries {
		if reservedKey(e.key) {
			errs = append(errs, fmt.Errorf("%s: key %q is reserved for Spark, the sync hook and Metacontroller, which set it and depend on it", field, e.key))
		}
	}
	return errs
}

func validateToleration(t corev1.Toleration) error {
	switch t.Operator {
	case "", corev1.TolerationOpEqual, corev1.TolerationOpExists:
	default:
		return fmt.Errorf("operator must be Equal or Exists, got %q", t.Operator)
	}
	if t.Operator == corev1.TolerationOpExists && t.Value != "" {
		return errors.New("value must be empty when operator is Exists")
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return fmt.Errorf("effect %q is not a taint effect", t.Effect)
	}
	if t.Key != "" {
		if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
			return fmt.Errorf("key %q: %s", t.Key, strings.Join(msgs, "; "))
		}
	}
	return nil
}

// withPrefix puts prefix in front of every error err joins, so that each line of a multi-line
// report says where it comes from.
func withPrefix(prefix string, err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, withPrefix(prefix, e)...)
		}
		return out
	}
	return []error{fmt.Errorf("%s: %w", prefix, err)}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
