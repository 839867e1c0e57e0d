package metacontroller

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// specOnly is a built object as a sync answer carries it: kind, metadata and spec, no status.
// The API server owns status. Metacontroller stores the object as answered at creation in its
// last-applied annotation and rewrites the child whenever a later answer differs from that; an
// empty "status": {} stanza, which the typed objects always encode, is absent from an object
// answered as observed, so it would make the same child look different from one sync to the
// next.
type specOnly[S any] struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        *metav1.ObjectMeta `json:"metadata"`
	Spec            *S                 `json:"spec"`
}

// Wire returns obj in the form a sync answer carries: without status for the built kinds that
// have one (the SparkCluster hook's StatefulSets and autoscalers included), unchanged otherwise.
func Wire(obj any) any {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &specOnly[corev1.PodSpec]{TypeMeta: o.TypeMeta, Metadata: &o.ObjectMeta, Spec: &o.Spec}
	case *corev1.Service:
		return &specOnly[corev1.ServiceSpec]{TypeMeta: o.TypeMeta, Metadata: &o.ObjectMeta, Spec: &o.Spec}
	case *networkingv1.Ingress:
		return &specOnly[networkingv1.IngressSpec]{TypeMeta: o.TypeMeta, Metadata: &o.ObjectMeta, Spec: &o.Spec}
	case *policyv1.PodDisruptionBudget:
		return &specOnly[policyv1.PodDisruptionBudgetSpec]{TypeMeta: o.TypeMeta, Metadata: &o.ObjectMeta, Spec: &o.Spec}
	case *appsv1.StatefulSet:
		return &specOnly[appsv1.StatefulSetSpec]{TypeMeta: o.TypeMeta, Metadata: &o.ObjectMeta, Spec: &o.Spec}
	case *autoscalingv2.HorizontalPodAutoscaler:
		return &specOnly[autoscalingv2.HorizontalPodAutoscalerSpec]{TypeMeta: o.TypeMeta, Metadata: &o.ObjectMeta, Spec: &o.Spec}
	}
	return obj
}

// Identity is the kind and name a desired child is answered with, read from the object rather
// than from its encoding: the cores answer typed objects and, for children kept as observed,
// maps. Anything else is encoded and read back.
func Identity(obj any) (kind, name string, err error) {
	switch o := obj.(type) {
	case interface {
		GetObjectKind() schema.ObjectKind
		GetName() string
	}:
		return o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), nil
	case map[string]any:
		md, _ := o["metadata"].(map[string]any)
		k, kindOK := o["kind"].(string)
		n, nameOK := md["name"].(string)
		if (kindOK || o["kind"] == nil) && (nameOK || md["name"] == nil) {
			return k, n, nil
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return "", "", err
	}
	var id struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return "", "", err
	}
	return id.Kind, id.Metadata.Name, nil
}
