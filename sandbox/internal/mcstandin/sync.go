package mcstandin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// sync is one CompositeController reconciliation of the parent at key.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	obj, err := c.factory.ForResource(c.parent.gvr).Lister().ByNamespace(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	parent := obj.(*unstructured.Unstructured).DeepCopy()

	if parent, err = c.syncFinalizer(ctx, parent); err != nil {
		return fmt.Errorf("can't sync finalizer for %s %s: %w", c.parent.gvk.Kind, key, err)
	}
	observed, err := c.claimChildren(ctx, parent)
	if err != nil {
		return err
	}
	related, err := c.relatedObjects(ctx, parent)
	if err != nil {
		return err
	}
	resp, err := c.callSyncHook(ctx, parent, observed, related)
	if err != nil {
		return err
	}
	desired, err := c.desiredChildren(parent, resp.Children)
	if err != nil {
		return err
	}
	if resp.ResyncAfterSeconds > 0 {
		c.queue.AddAfter(key, time.Duration(resp.ResyncAfterSeconds*float64(time.Second)))
	}
	if resp.Finalized && slices.Contains(parent.GetFinalizers(), c.finalizer) {
		if parent, err = c.setFinalizer(ctx, parent, false); err != nil {
			return fmt.Errorf("can't remove finalizer for %s %s: %w", c.parent.gvk.Kind, key, err)
		}
	}
	var manageErr error
	if parent.GetDeletionTimestamp() == nil || c.shouldFinalize(parent) {
		if err := c.manageChildren(ctx, parent, observed, desired); err != nil {
			manageErr = fmt.Errorf("can't reconcile children for %s %s: %w", c.parent.gvk.Kind, key, err)
		}
	}
	if err := c.updateStatus(ctx, parent, resp.Status); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			// The parent changed or went away since this sync started; its event brings another.
			return manageErr
		}
		return fmt.Errorf("can't update status for %s %s: %w", c.parent.gvk.Kind, key, err)
	}
	return manageErr
}

func (c *Controller) parentClient(namespace string) dynamic.ResourceInterface {
	return c.dyn.Resource(c.parent.gvr).Namespace(namespace)
}

func (c *Controller) syncFinalizer(ctx context.Context, parent *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	enabled := c.cc.Spec.Hooks.Finalize != nil
	if slices.Contains(parent.GetFinalizers(), c.finalizer) == enabled {
		return parent, nil
	}
	if enabled && parent.GetDeletionTimestamp() != nil {
		// Too late to add it; it may already have been removed.
		return parent, nil
	}
	return c.setFinalizer(ctx, parent, enabled)
}

// setFinalizer adds or removes the controller's finalizer, retrying on conflicts against the
// live object as long as it is the same object (same UID).
func (c *Controller) setFinalizer(ctx context.Context, parent *unstructured.Unstructured, present bool) (*unstructured.Unstructured, error) {
	current := parent
	for attempt := 0; ; attempt++ {
		finalizers := removeString(current.GetFinalizers(), c.finalizer)
		if present {
			finalizers = append(finalizers, c.finalizer)
		}
		updated := current.DeepCopy()
		updated.SetFinalizers(finalizers)
		out, err := c.parentClient(current.GetNamespace()).Update(ctx, updated, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) || attempt == 5 {
			return out, err
		}
		fresh, getErr := c.parentClient(current.GetNamespace()).Get(ctx, current.GetName(), metav1.GetOptions{})
		if getErr != nil {
			return nil, getErr
		}
		if fresh.GetUID() != parent.GetUID() {
			return nil, fmt.Errorf("%s %s was replaced (uid %s, want %s)", c.parent.gvk.Kind, parent.GetName(), fresh.GetUID(), parent.GetUID())
		}
		current = fresh
	}
}

// shouldFinalize mirrors Metacontroller: manage children of a parent being deleted only while
// our finalizer is on it and the garbage collector is not already deleting or orphaning them.
func (c *Controller) shouldFinalize(parent *unstructured.Unstructured) bool {
	if c.cc.Spec.Hooks.Finalize == nil || !slices.Contains(parent.GetFinalizers(), c.finalizer) {
		return false
	}
	return !slices.Contains(parent.GetFinalizers(), metav1.FinalizerDeleteDependents) &&
		!slices.Contains(parent.GetFinalizers(), metav1.FinalizerOrphanDependents)
}

func (c *Controller) selector(parent *unstructured.Unstructured) (labels.Selector, error) {
	ls := &metav1.LabelSelector{}
	if c.cc.Spec.GenerateSelector != nil && *c.cc.Spec.GenerateSelector {
		ls = metav1.AddLabelToSelector(ls, "controller-uid", string(parent.GetUID()))
	} else {
		raw, found, err := unstructured.NestedMap(parent.Object, "spec", "selector")
		if err != nil || !found {
			return nil, fmt.Errorf("can't get label selector from %s %s", c.parent.gvk.Kind, parent.GetName())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, ls); err != nil {
			return nil, err
		}
		if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
			return nil, errors.New(".spec.selector must have either matchLabels, matchExpressions, or both")
		}
	}
	return metav1.LabelSelectorAsSelector(ls)
}

func removeString(list []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(item string) bool { return item == s })
}
