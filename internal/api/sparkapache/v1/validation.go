package v1

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// MaxNameLength keeps <name>-worker a StatefulSet name whose Pods' controller-revision-hash
// label (the name, a dash and ten characters) fits in 63 characters.
const MaxNameLength = 45

// kueueQueueNameLabel is Kueue's label for the LocalQueue of a job (internal/kueue.QueueNameLabel).
const kueueQueueNameLabel = "kueue.x-k8s.io/queue-name"

// ValidateSparkCluster checks what Apache's operator leaves to a failed apply, or does not
// check at all: the name, the version, the bounds of the worker pool and Service types.
func ValidateSparkCluster(c *SparkCluster) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	for _, msg := range validation.IsDNS1035Label(c.Name) {
		errs = append(errs, field.Invalid(name, c.Name, msg))
	}
	if len(c.Name) > MaxNameLength {
		errs = append(errs, field.TooLong(name, c.Name, MaxNameLength))
	}
	if q, ok := c.Labels[kueueQueueNameLabel]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(kueueQueueNameLabel),
			fmt.Sprintf("sparkhooks does not queue SparkClusters with Kueue (a standalone cluster holds its workers for its whole life); queue the applications that run on it instead, and remove the label (%q)", q)))
	}
	spec := field.NewPath("spec")
	if c.Spec.RuntimeVersions.SparkVersion == "" {
		errs = append(errs, field.Required(spec.Child("runtimeVersions", "sparkVersion"), "the Spark version of the image, for example 4.0.1"))
	}
	ic := c.Spec.ClusterTolerations.InstanceConfig
	icPath := spec.Child("clusterTolerations", "instanceConfig")
	for _, f := range []struct {
		name string
		n    int32
	}{{"initWorkers", ic.InitWorkers}, {"minWorkers", ic.MinWorkers}, {"maxWorkers", ic.MaxWorkers}} {
		if f.n < 0 {
			errs = append(errs, field.Invalid(icPath.Child(f.name), f.n, "must be >= 0"))
		}
	}
	if ic.MinWorkers > ic.MaxWorkers {
		errs = append(errs, field.Invalid(icPath.Child("minWorkers"), ic.MinWorkers, fmt.Sprintf("must be <= maxWorkers (%d)", ic.MaxWorkers)))
	}
	if ic.InitWorkers < ic.MinWorkers || ic.InitWorkers > ic.MaxWorkers {
		errs = append(errs, field.Invalid(icPath.Child("initWorkers"), ic.InitWorkers,
			fmt.Sprintf("must be between minWorkers (%d) and maxWorkers (%d)", ic.MinWorkers, ic.MaxWorkers)))
	}
	for key := range c.Spec.SparkConf {
		if key == "" {
			errs = append(errs, field.Invalid(spec.Child("sparkConf"), key, "keys must not be empty"))
		}
	}
	if m := c.Spec.MasterSpec; m != nil {
		errs = append(errs, serviceSpec(spec.Child("masterSpec", "serviceSpec"), m.ServiceSpec)...)
		errs = append(errs, objectMeta(spec.Child("masterSpec", "statefulSetMetadata"), m.StatefulSetMetadata)...)
		errs = append(errs, objectMeta(spec.Child("masterSpec", "serviceMetadata"), m.ServiceMetadata)...)
	}
	if w := c.Spec.WorkerSpec; w != nil {
		errs = append(errs, serviceSpec(spec.Child("workerSpec", "serviceSpec"), w.ServiceSpec)...)
		errs = append(errs, objectMeta(spec.Child("workerSpec", "statefulSetMetadata"), w.StatefulSetMetadata)...)
		errs = append(errs, objectMeta(spec.Child("workerSpec", "serviceMetadata"), w.ServiceMetadata)...)
	}
	return errs
}

// serviceSpec refuses what cannot work: Apache forces clusterIP None on every Service, which
// the API server refuses for NodePort and LoadBalancer ones; sparkhooks keeps those with a
// cluster IP, and refuses a headless one of those types and ExternalName.
func serviceSpec(p *field.Path, s *corev1.ServiceSpec) field.ErrorList {
	if s == nil {
		return nil
	}
	switch s.Type {
	case "", corev1.ServiceTypeClusterIP:
	case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		if s.ClusterIP == corev1.ClusterIPNone {
			return field.ErrorList{field.Invalid(p.Child("clusterIP"), s.ClusterIP, fmt.Sprintf("a %s Service cannot be headless", s.Type))}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), s.Type,
			[]corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer})}
	}
	return nil
}

func objectMeta(p *field.Path, m *metav1.ObjectMeta) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	for k, v := range m.Labels {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Child("labels").Key(k), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(p.Child("labels").Key(k), v, msg))
		}
	}
	return errs
}

// DecodeSparkCluster reads a SparkCluster as the API server stores it; its templates are
// schemaless, so a spec that does not decode comes back as field errors next to the object.
func DecodeSparkCluster(raw []byte) (*SparkCluster, field.ErrorList, error) {
	// The common case, a spec that decodes, in one pass.
	if obj := new(SparkCluster); json.Unmarshal(raw, obj) == nil {
		return obj, nil, nil
	}
	var stored struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              json.RawMessage `json:"spec"`
		Status            ClusterStatus   `json:"status,omitempty"`
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, nil, err
	}
	c := &SparkCluster{TypeMeta: stored.TypeMeta, ObjectMeta: stored.ObjectMeta, Status: stored.Status}
	return c, v1beta2.DecodeSpec(stored.Spec, &c.Spec), nil
}
