package kueue

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// Related-object keys as Metacontroller files them in a request.
var (
	KeyWorkload       = KindWorkload + "." + APIVersion
	KeyResourceFlavor = KindResourceFlavor + "." + APIVersion
	KeyPriorityClass  = "PriorityClass.scheduling.k8s.io/v1"
)

// ApplyAdmission adds to a spec (decoded for one sync alone) what the admission of o grants:
// the flavors' node labels and tolerations and the admission checks' pod-set updates on driver
// and executors, and, under partial admission, the admitted executor count as the ceiling of
// dynamic allocation. The same admission always yields the same spec, so an attempt's objects
// stay the same from one sync to the next. An error means the placement is not known yet.
func ApplyAdmission(o *Observed, related map[string]json.RawMessage, spec *v1beta2.SparkApplicationSpec) error {
	flavors, err := DecodeFlavors(related)
	if err != nil {
		return err
	}
	for _, role := range []struct {
		podSet string
		pod    *v1beta2.SparkPodSpec
	}{{PodSetDriver, &spec.Driver.SparkPodSpec}, {PodSetExecutor, &spec.Executor.SparkPodSpec}} {
		p, err := o.Placement(role.podSet, flavors)
		if err != nil {
			return err
		}
		role.pod.NodeSelector = withEntries(role.pod.NodeSelector, p.NodeSelector)
		role.pod.Tolerations = append(slices.Clone(role.pod.Tolerations), p.Tolerations...)
		role.pod.Labels = withEntries(role.pod.Labels, p.Labels)
		role.pod.Annotations = withEntries(role.pod.Annotations, p.Annotations)
	}
	if da := spec.DynamicAllocation; da != nil && da.Enabled && da.MaxExecutors != nil {
		admitted := o.AdmittedCount(PodSetExecutor)
		for _, v := range []*int32{da.InitialExecutors, da.MinExecutors, da.MaxExecutors} {
			if v != nil && *v > admitted {
				*v = admitted
			}
		}
	}
	return nil
}

// withEntries returns a copy of dst with add's entries over it; dst itself may be shared.
func withEntries(dst, add map[string]string) map[string]string {
	if len(add) == 0 {
		return dst
	}
	out := maps.Clone(dst)
	if out == nil {
		out = make(map[string]string, len(add))
	}
	maps.Copy(out, add)
	return out
}

// PriorityValue is the value of the named PriorityClass among the related objects.
func PriorityValue(related map[string]json.RawMessage, name string) (int32, error) {
	for key, raw := range related {
		if key != name && !strings.HasSuffix(key, "/"+name) {
			continue
		}
		var pc struct {
			Value int32 `json:"value"`
		}
		if err := json.Unmarshal(raw, &pc); err != nil {
			return 0, fmt.Errorf("decode PriorityClass %s: %w", name, err)
		}
		return pc.Value, nil
	}
	return 0, fmt.Errorf("PriorityClass %s, which the driver names, is not among the related objects (does it exist?)", name)
}

// NewWorkload is the Workload that queues an application: its pod sets in the named LocalQueue,
// with the driver's PriorityClass and that class's value (Kueue orders and preempts by the
// Workload's spec.priority, which it does not look up for a Workload it did not make). The
// spec hash in an annotation tells a Workload built for an older spec, which is replaced: pod
// sets cannot change. An error means the PriorityClass is not among the related objects.
func NewWorkload(meta metav1.ObjectMeta, specHash, queue string, podSets []PodSet, priorityClasses map[string]json.RawMessage) (*Workload, error) {
	meta.Annotations = withEntries(meta.Annotations, map[string]string{AnnotationSpecHash: specHash})
	w := &Workload{APIVersion: APIVersion, Kind: KindWorkload, Metadata: meta, Spec: WorkloadSpec{PodSets: podSets, QueueName: queue}}
	if len(podSets) > 0 {
		if pc := podSets[0].Template.Spec.PriorityClassName; pc != "" {
			value, err := PriorityValue(priorityClasses, pc)
			if err != nil {
				return nil, err
			}
			w.Spec.PriorityClassRef = PodPriorityClassRef(pc)
			w.Spec.Priority = &value
		}
	}
	return w, nil
}

// AnnotationSpecHash marks the spec a Workload was built for.
const AnnotationSpecHash = "sparkoperator.k8s.io/spec-hash"

// Reusable tells whether an observed Workload still stands for the application: the same
// LocalQueue and spec. One that does not is replaced, not updated, as pod sets cannot change.
func (o *Observed) Reusable(queue, specHash string) bool {
	return o.QueueName == queue && o.specHash == specHash
}

// QueueNameProblem is why a queue-name label value cannot name a LocalQueue, "" when it can.
func QueueNameProblem(name string) string {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("label %s=%q does not name a LocalQueue: %s", QueueNameLabel, name, strings.Join(errs, "; "))
	}
	return ""
}
