// Package kueue holds what the hooks need of Kueue (kubernetes-sigs/kueue, API
// kueue.x-k8s.io/v1beta2): the Workload an application is queued with, read back from the
// observed child, and the placement an admission grants. It is written from Kueue's API types,
// not imported: Kueue's Go module would bring its whole dependency tree into the operator.
package kueue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// API coordinates and the label that queues an application, Kueue's own for every job kind.
const (
	APIVersion     = "kueue.x-k8s.io/v1beta2"
	KindWorkload   = "Workload"
	QueueNameLabel = "kueue.x-k8s.io/queue-name"

	ResourceFlavorResource = "resourceflavors"
	KindResourceFlavor     = "ResourceFlavor"
	WorkloadResource       = "workloads"
)

// PrebuiltWorkloadKey names the Workload another controller made for a job, which the job's
// own controller uses instead of making one: MultiKueue sets it on the copy it creates on a
// worker cluster. Kueue v0.18 and later write it as an annotation (gate
// WorkloadIdentifierAnnotations, on by default), earlier releases as a label of the same key.
const PrebuiltWorkloadKey = "kueue.x-k8s.io/prebuilt-workload-name"

// PrebuiltWorkloadName is the prebuilt Workload an object names, "" when none: the annotation,
// else the label, the order Kueue reads them in.
func PrebuiltWorkloadName(meta metav1.ObjectMeta) string {
	if name := meta.Annotations[PrebuiltWorkloadKey]; name != "" {
		return name
	}
	return meta.Labels[PrebuiltWorkloadKey]
}

// Workload condition types (Kueue's WorkloadQuotaReserved, WorkloadAdmitted, …).
const (
	CondQuotaReserved = "QuotaReserved"
	CondAdmitted      = "Admitted"
	CondEvicted       = "Evicted"
	CondFinished      = "Finished"
)

// PodSet names. Kueue requires DNS labels, unique within the Workload.
const (
	PodSetDriver   = "driver"
	PodSetExecutor = "executor"
)

// WorkloadName names the Workload of an object of a kind (lower case): Kueue's own scheme for
// the jobs it queues is <kind>-<name>-<hash>; sparkhooks needs no hash, as Metacontroller owns
// the child by name within one parent's namespace, and the kind keeps a SparkApplication and a
// SparkConnect of the same name apart. A name over the 253 characters of a DNS subdomain is cut
// and given a hash of the whole, so that it stays unique.
func WorkloadName(kind, name string) string {
	full := kind + "-" + name
	if len(full) <= maxName {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	suffix := "-" + hex.EncodeToString(sum[:5])
	return strings.TrimRight(full[:maxName-len(suffix)], "-.") + suffix
}

const maxName = 253

// PodSet is one group of identical pods of a Workload.
type PodSet struct {
	Name     string                 `json:"name"`
	Template corev1.PodTemplateSpec `json:"template"`
	Count    int32                  `json:"count"`
	// MinCount lets Kueue admit fewer pods than Count (partial admission); at most one pod set
	// may have it.
	MinCount *int32 `json:"minCount,omitempty"`
}

// Workload is the part of a Kueue Workload the hooks write. Fields left out (active,
// maximumExecutionTimeSeconds, …) are Kueue's or the cluster's to default, and a child
// answered without them never fights the values set there.
type Workload struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       WorkloadSpec      `json:"spec"`
}

// WorkloadSpec is kueue.x-k8s.io/v1beta2 WorkloadSpec, the fields sparkhooks sets.
type WorkloadSpec struct {
	PodSets          []PodSet          `json:"podSets"`
	QueueName        string            `json:"queueName"`
	PriorityClassRef *PriorityClassRef `json:"priorityClassRef,omitempty"`
	Priority         *int32            `json:"priority,omitempty"`
}

// PriorityClassRef names the PriorityClass whose value spec.priority carries.
type PriorityClassRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// PodPriorityClassRef refers to a scheduling.k8s.io PriorityClass, the kind a pod names.
func PodPriorityClassRef(name string) *PriorityClassRef {
	return &PriorityClassRef{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: name}
}

// observedWorkload is the part of an observed Workload the decision reads.
type observedWorkload struct {
	Metadata struct {
		Name              string            `json:"name"`
		DeletionTimestamp *metav1.Time      `json:"deletionTimestamp"`
		Annotations       map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		QueueName string `json:"queueName"`
		PodSets   []struct {
			Name  string `json:"name"`
			Count int32  `json:"count"`
		} `json:"podSets"`
	} `json:"spec"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions"`
		Admission  *struct {
			ClusterQueue      string `json:"clusterQueue"`
			PodSetAssignments []struct {
				Name    string            `json:"name"`
				Flavors map[string]string `json:"flavors"`
				Count   *int32            `json:"count"`
			} `json:"podSetAssignments"`
		} `json:"admission"`
		AdmissionChecks []struct {
			Name          string         `json:"name"`
			PodSetUpdates []PodSetUpdate `json:"podSetUpdates"`
		} `json:"admissionChecks"`
	} `json:"status"`
}

// PodSetUpdate is what an admission check asks to add to a pod set's pods.
type PodSetUpdate struct {
	Name         string              `json:"name"`
	Labels       map[string]string   `json:"labels,omitempty"`
	Annotations  map[string]string   `json:"annotations,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
}

// Observed is an observed Workload as the decision sees it.
type Observed struct {
	Name      string
	QueueName string
	// Deleting is true once the Workload has a deletionTimestamp.
	Deleting bool
	// Counts are the pod-set counts of the spec, by name.
	Counts   map[string]int32
	conds    []metav1.Condition
	specHash string
	applied  string // Metacontroller's last-applied annotation
	raw      *observedWorkload
}

// Observe decodes an observed Workload child.
func Observe(raw []byte) (*Observed, error) {
	var wl observedWorkload
	if err := json.Unmarshal(raw, &wl); err != nil {
		return nil, fmt.Errorf("decode Workload: %w", err)
	}
	o := &Observed{
		Name:      wl.Metadata.Name,
		QueueName: wl.Spec.QueueName,
		Deleting:  wl.Metadata.DeletionTimestamp != nil,
		Counts:    make(map[string]int32, len(wl.Spec.PodSets)),
		conds:     wl.Status.Conditions,
		specHash:  wl.Metadata.Annotations[AnnotationSpecHash],
		applied:   wl.Metadata.Annotations[metacontroller.LastAppliedAnnotation],
		raw:       &wl,
	}
	for _, ps := range wl.Spec.PodSets {
		o.Counts[ps.Name] = ps.Count
	}
	return o, nil
}

// Answered is the observed Workload as the hook answered it when Metacontroller created it,
// for the answer: the recorded bytes as they are, which saves decoding a Workload with its pod
// templates into a map on every sync of a queued application. raw is the observed object, read
// by metacontroller.AsAnswered when the annotation is missing or records another object.
func (o *Observed) Answered(raw []byte) any {
	var id struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if o.applied != "" && json.Unmarshal([]byte(o.applied), &id) == nil &&
		id.APIVersion == APIVersion && id.Kind == KindWorkload && id.Metadata.Name == o.Name {
		return json.RawMessage(o.applied)
	}
	return metacontroller.AsAnswered(raw)
}

// Condition returns the condition of type t, nil when absent.
func (o *Observed) Condition(t string) *metav1.Condition {
	for i := range o.conds {
		if o.conds[i].Type == t {
			return &o.conds[i]
		}
	}
	return nil
}

func (o *Observed) isTrue(t string) bool {
	c := o.Condition(t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// Admitted is true when Kueue admitted the Workload (quota reserved and every admission check
// ready) and has not taken the admission back.
func (o *Observed) Admitted() bool {
	return o.isTrue(CondAdmitted) && o.raw.Status.Admission != nil && !o.Spent()
}

// Spent is true for a Workload that can no longer admit anything: evicted (preempted,
// deactivated, its queue stopped), finished, or being deleted. Kueue frees an evicted
// Workload's quota only when the job's controller unsets the reservation, which a hook cannot
// do (it writes no status); deleting the Workload frees it, so a spent Workload is replaced.
func (o *Observed) Spent() bool {
	return o.Deleting || o.isTrue(CondEvicted) || o.isTrue(CondFinished)
}

// Message is Kueue's own account of why the Workload waits or was taken back: the Evicted
// condition when true, else the Admitted or QuotaReserved one that is false, else a generic line.
func (o *Observed) Message() (reason, message string) {
	for _, t := range []string{CondEvicted, CondFinished} {
		if c := o.Condition(t); c != nil && c.Status == metav1.ConditionTrue {
			return c.Reason, c.Message
		}
	}
	for _, t := range []string{CondQuotaReserved, CondAdmitted} {
		if c := o.Condition(t); c != nil && c.Status != metav1.ConditionTrue {
			return c.Reason, c.Message
		}
	}
	if o.isTrue(CondQuotaReserved) {
		return "QuotaReserved", "quota reserved, waiting for admission checks"
	}
	return "Pending", "waiting for Kueue to evaluate the Workload"
}

// AdmittedCount is the number of pods Kueue admitted for a pod set: the assignment's count
// (below the spec's under partial admission), else the spec's.
func (o *Observed) AdmittedCount(podSet string) int32 {
	if adm := o.raw.Status.Admission; adm != nil {
		for _, a := range adm.PodSetAssignments {
			if a.Name == podSet && a.Count != nil {
				return *a.Count
			}
		}
	}
	return o.Counts[podSet]
}

// Flavor is what a ResourceFlavor asks of the pods admitted on it.
type Flavor struct {
	NodeLabels  map[string]string
	Tolerations []corev1.Toleration
}

type flavorView struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		NodeLabels  map[string]string   `json:"nodeLabels"`
		Tolerations []corev1.Toleration `json:"tolerations"`
	} `json:"spec"`
}

// DecodeFlavors reads related ResourceFlavors, keyed by name.
func DecodeFlavors(related map[string]json.RawMessage) (map[string]Flavor, error) {
	out := make(map[string]Flavor, len(related))
	for key, raw := range related {
		var f flavorView
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("decode related ResourceFlavor %q: %w", key, err)
		}
		name := f.Metadata.Name
		if name == "" {
			name = key[strings.LastIndex(key, "/")+1:]
		}
		out[name] = Flavor{NodeLabels: f.Spec.NodeLabels, Tolerations: f.Spec.Tolerations}
	}
	return out, nil
}

// Placement is what an admission adds to one pod set's pods: the node labels and tolerations of
// the flavors assigned to it, and the pod-set updates of admission checks. It is what Kueue's
// job integrations apply when they start a job.
type Placement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	Labels       map[string]string
	Annotations  map[string]string
}

// MissingFlavorError names a flavor an admission assigned that the request does not carry.
type MissingFlavorError struct{ Flavor string }

func (e *MissingFlavorError) Error() string {
	return fmt.Sprintf("ResourceFlavor %q, assigned by the admission, is not among the related objects yet", e.Flavor)
}

// Placement computes the placement of an admitted pod set. A flavor the request does not carry
// is a MissingFlavorError: starting pods without its node labels could put them where the
// quota does not hold.
func (o *Observed) Placement(podSet string, flavors map[string]Flavor) (Placement, error) {
	var p Placement
	if adm := o.raw.Status.Admission; adm != nil {
		for _, a := range adm.PodSetAssignments {
			if a.Name != podSet {
				continue
			}
			// The same flavor often covers several resources; apply each once, in name order.
			names := slices.Sorted(maps.Values(a.Flavors))
			names = slices.Compact(names)
			for _, name := range names {
				f, ok := flavors[name]
				if !ok {
					return Placement{}, &MissingFlavorError{Flavor: name}
				}
				p.NodeSelector = mergeMap(p.NodeSelector, f.NodeLabels)
				p.Tolerations = appendTolerations(p.Tolerations, f.Tolerations)
			}
		}
	}
	for _, check := range o.raw.Status.AdmissionChecks {
		for _, u := range check.PodSetUpdates {
			if u.Name != podSet {
				continue
			}
			p.NodeSelector = mergeMap(p.NodeSelector, u.NodeSelector)
			p.Tolerations = appendTolerations(p.Tolerations, u.Tolerations)
			p.Labels = mergeMap(p.Labels, u.Labels)
			p.Annotations = mergeMap(p.Annotations, u.Annotations)
		}
	}
	return p, nil
}

func mergeMap(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]string, len(src))
	}
	for _, k := range slices.Sorted(maps.Keys(src)) {
		dst[k] = src[k]
	}
	return dst
}

func appendTolerations(dst, src []corev1.Toleration) []corev1.Toleration {
	for _, t := range src {
		if !slices.ContainsFunc(dst, func(have corev1.Toleration) bool { return have.MatchToleration(&t) }) {
			dst = append(dst, t)
		}
	}
	return dst
}

// RelatedRules are what a queued application's customize hook asks Metacontroller for: every
// ResourceFlavor (an admission names flavors, and only the flavor says which nodes and taints
// it stands for) and every PriorityClass (the Workload carries the value of the driver's).
// Both are cluster-scoped and few, and a hook cannot read the API itself.
func RelatedRules() []metacontroller.RelatedResourceRule {
	return []metacontroller.RelatedResourceRule{
		{APIVersion: APIVersion, Resource: ResourceFlavorResource, LabelSelector: &metav1.LabelSelector{}},
		{APIVersion: "scheduling.k8s.io/v1", Resource: "priorityclasses", LabelSelector: &metav1.LabelSelector{}},
	}
}
