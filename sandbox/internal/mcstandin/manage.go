package mcstandin

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"
)

// desiredChildren groups the hook's children like observed ones, after Metacontroller's
// defaulting (the parent's namespace, the controller-uid label) and checks.
func (c *Controller) desiredChildren(parent *unstructured.Unstructured, children []map[string]any) (childMap, error) {
	selector, err := c.selector(parent)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, child := range c.children {
		declared[childKey(child.gvk)] = true
	}
	desired := childMap{}
	for i, raw := range children {
		if raw == nil {
			continue
		}
		obj := &unstructured.Unstructured{Object: raw}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("desired child %d has no apiVersion, kind or metadata.name", i)
		}
		key := childKey(obj.GroupVersionKind())
		if !declared[key] {
			return nil, fmt.Errorf("desired child %s %s is not of a declared child resource of CompositeController %s", key, obj.GetName(), c.cc.Metadata.Name)
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(parent.GetNamespace())
		}
		if obj.GetNamespace() != parent.GetNamespace() {
			return nil, fmt.Errorf("desired child %s %s is in namespace %s, not the parent's %s", key, obj.GetName(), obj.GetNamespace(), parent.GetNamespace())
		}
		objLabels, _, err := unstructured.NestedStringMap(obj.Object, "metadata", "labels")
		if err != nil {
			return nil, fmt.Errorf("invalid labels on desired child %s %s: %w", key, obj.GetName(), err)
		}
		if c.cc.Spec.GenerateSelector != nil && *c.cc.Spec.GenerateSelector {
			if objLabels == nil {
				objLabels = map[string]string{}
			}
			if _, ok := objLabels["controller-uid"]; !ok {
				objLabels["controller-uid"] = string(parent.GetUID())
				obj.SetLabels(objLabels)
			}
		}
		if !selector.Matches(labels.Set(objLabels)) {
			return nil, fmt.Errorf("labels on desired child %s %s don't match parent selector", key, obj.GetName())
		}
		if desired[key] == nil {
			desired[key] = map[string]*unstructured.Unstructured{}
		}
		if _, dup := desired[key][obj.GetName()]; dup {
			return nil, fmt.Errorf("desired child %s %s appears twice", key, obj.GetName())
		}
		desired[key][obj.GetName()] = obj
	}
	return desired, nil
}

// manageChildren deletes owned children that are not desired, creates missing ones and updates
// existing ones per update method. It keeps going after an error so one failure does not block
// the rest, and returns them all.
func (c *Controller) manageChildren(ctx context.Context, parent *unstructured.Unstructured, observed, desired childMap) error {
	var errs []error
	for _, child := range c.children {
		key := childKey(child.gvk)
		client := c.dyn.Resource(child.gvr).Namespace(parent.GetNamespace())
		for _, name := range sortedNames(observed[key]) {
			obj := observed[key][name]
			if obj.GetDeletionTimestamp() != nil || desired[key][name] != nil {
				continue
			}
			if err := deleteWithUID(ctx, client, obj); err != nil {
				errs = append(errs, err)
				continue
			}
			c.countChild(parent, func(w *ChildWrites) { w.Deletes++ })
		}
		for _, name := range sortedNames(desired[key]) {
			if err := c.applyChild(ctx, client, child, parent, observed[key][name], desired[key][name]); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", child.gvk.Kind, name, err))
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

func (c *Controller) applyChild(ctx context.Context, client dynamic.ResourceInterface, child childInfo, parent, observed, desired *unstructured.Unstructured) error {
	if observed == nil {
		obj := desired.DeepCopy()
		if err := setLastApplied(obj, obj.Object); err != nil {
			return err
		}
		obj.SetOwnerReferences(append(obj.GetOwnerReferences(), controllerRef(parent)))
		_, err := client.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// Metacontroller swallows this too; it is a child someone else owns, or one our
			// cache has not seen yet.
			return nil
		}
		if err == nil {
			c.countChild(parent, func(w *ChildWrites) { w.Creates++ })
		}
		return err
	}
	updated, err := applyUpdate(observed, desired)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(updated.Object, observed.Object) || observed.GetDeletionTimestamp() != nil {
		return nil
	}
	changed := desired.GetKind() + "/" + desired.GetName()
	switch child.method {
	case "OnDelete":
		c.countChild(parent, func(w *ChildWrites) { w.Drifts++; w.Changed = append(w.Changed, changed) })
		return nil
	case "Recreate", "RollingRecreate":
		c.countChild(parent, func(w *ChildWrites) { w.Updates++; w.Changed = append(w.Changed, changed) })
		return deleteWithUID(ctx, client, observed)
	default: // InPlace, RollingInPlace
		c.countChild(parent, func(w *ChildWrites) { w.Updates++; w.Changed = append(w.Changed, changed) })
		_, err := client.Update(ctx, updated, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
}

// countChild records a child write for parent's stats.
func (c *Controller) countChild(parent *unstructured.Unstructured, count func(*ChildWrites)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := parent.GetNamespace() + "/" + parent.GetName()
	if c.stats[key] == nil {
		c.stats[key] = &ParentStats{}
	}
	count(&c.stats[key].Children)
}

func deleteWithUID(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	uid := obj.GetUID()
	background := metav1.DeletePropagationBackground
	err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &background,
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("can't delete %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func sortedNames(m map[string]*unstructured.Unstructured) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
