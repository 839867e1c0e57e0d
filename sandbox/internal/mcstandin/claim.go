package mcstandin

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// childMap is the children/related shape of a sync request: "Kind.apiVersion" → name → object.
type childMap map[string]map[string]*unstructured.Unstructured

func childKey(gvk schema.GroupVersionKind) string {
	return gvk.Kind + "." + gvk.GroupVersion().String()
}

// claimChildren lists each child type in the parent's namespace and keeps what the parent owns,
// adopting matching orphans and releasing owned objects that no longer match, like Kubernetes'
// ControllerRefManager.
func (c *Controller) claimChildren(ctx context.Context, parent *unstructured.Unstructured) (childMap, error) {
	selector, err := c.selector(parent)
	if err != nil {
		return nil, err
	}
	observed := childMap{}
	for _, child := range c.children {
		group := map[string]*unstructured.Unstructured{}
		observed[childKey(child.gvk)] = group
		objs, err := c.factory.ForResource(child.gvr).Lister().ByNamespace(parent.GetNamespace()).List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("can't list %s children: %w", child.gvk.Kind, err)
		}
		for _, o := range objs {
			obj := o.(*unstructured.Unstructured)
			claimed, err := c.claim(ctx, parent, child, obj, selector)
			if err != nil {
				return nil, fmt.Errorf("can't claim %s %s: %w", child.gvk.Kind, obj.GetName(), err)
			}
			if claimed != nil {
				group[claimed.GetName()] = claimed
			}
		}
	}
	return observed, nil
}

func (c *Controller) claim(ctx context.Context, parent *unstructured.Unstructured, child childInfo, obj *unstructured.Unstructured,
	selector labels.Selector,
) (*unstructured.Unstructured, error) {
	matches := selector.Matches(labels.Set(obj.GetLabels()))
	ref := metav1.GetControllerOf(obj)
	client := c.dyn.Resource(child.gvr).Namespace(obj.GetNamespace())
	switch {
	case ref != nil && ref.UID != parent.GetUID():
		return nil, nil
	case ref != nil && matches:
		return obj, nil
	case ref != nil:
		if parent.GetDeletionTimestamp() != nil {
			return nil, nil
		}
		released := obj.DeepCopy()
		released.SetOwnerReferences(removeOwner(obj.GetOwnerReferences(), parent.GetUID()))
		_, err := client.Update(ctx, released, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	case !matches || parent.GetDeletionTimestamp() != nil || obj.GetDeletionTimestamp() != nil:
		return nil, nil
	}
	// An orphan that matches: adopt it, after checking with the API server that the parent is
	// still this object and not being deleted.
	fresh, err := c.parentClient(parent.GetNamespace()).Get(ctx, parent.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if fresh.GetUID() != parent.GetUID() || fresh.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	adopted := obj.DeepCopy()
	adopted.SetOwnerReferences(append(obj.GetOwnerReferences(), controllerRef(parent)))
	return client.Update(ctx, adopted, metav1.UpdateOptions{})
}

func controllerRef(parent *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(), UID: parent.GetUID(),
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

func removeOwner(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	return slices.DeleteFunc(slices.Clone(refs), func(ref metav1.OwnerReference) bool { return ref.UID == uid })
}
