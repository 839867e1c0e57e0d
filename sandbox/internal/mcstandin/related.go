package mcstandin

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// relatedObjects asks the customize hook (once per parent name and generation, as Metacontroller
// caches it) and lists what its rules select.
func (c *Controller) relatedObjects(ctx context.Context, parent *unstructured.Unstructured) (childMap, error) {
	related := childMap{}
	if c.cc.Spec.Hooks.Customize == nil {
		return related, nil
	}
	rules, err := c.customize(ctx, parent)
	if err != nil {
		return nil, err
	}
	for _, rule := range rules {
		info, err := c.resolve(ResourceRule{APIVersion: rule.APIVersion, Resource: rule.Resource})
		if err != nil {
			return nil, fmt.Errorf("related rule: %w", err)
		}
		informer, err := c.relatedInformer(info)
		if err != nil {
			return nil, err
		}
		group := related[childKey(info.gvk)]
		if group == nil {
			group = map[string]*unstructured.Unstructured{}
			related[childKey(info.gvk)] = group
		}
		for _, obj := range informer.GetStore().List() {
			u := obj.(*unstructured.Unstructured)
			ok, err := matchesRule(parent, u, rule)
			if err != nil {
				return nil, err
			}
			if ok {
				group[relativeName(parent, u)] = u
			}
		}
	}
	return related, nil
}

// forHookVersion files the objects of a request as Metacontroller v4.17 does for the hook's
// version. v1 (the default): by name relative to the parent, and for a namespaced parent
// without the cluster-scoped objects, which its v1 conversion filters out. v2: a namespaced
// object as "<namespace>/<name>", a cluster-scoped one by name, all kept.
func forHookVersion(version string, parent *unstructured.Unstructured, m childMap) childMap {
	out := childMap{}
	for key, group := range m {
		filed := map[string]*unstructured.Unstructured{}
		out[key] = filed
		for name, obj := range group {
			switch {
			case version == "v2" && obj.GetNamespace() != "":
				filed[obj.GetNamespace()+"/"+obj.GetName()] = obj
			case version != "v2" && parent.GetNamespace() != "" && obj.GetNamespace() == "":
				continue
			default:
				filed[name] = obj
			}
		}
	}
	return out
}

// relativeName is Metacontroller's v1 name of obj relative to parent: "<namespace>/<name>" for a
// namespaced object of a cluster-scoped parent, the name otherwise (a cluster-scoped object too).
func relativeName(parent, obj *unstructured.Unstructured) string {
	if parent.GetNamespace() == "" && obj.GetNamespace() != "" {
		return obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetName()
}

func matchesRule(parent, obj *unstructured.Unstructured, rule relatedRule) (bool, error) {
	// Metacontroller matches cluster-scoped related objects whatever the parent's namespace (a v1
	// sync request then leaves them out: forHookVersion); only namespaced ones must share it.
	sameNamespace := obj.GetNamespace() == "" || obj.GetNamespace() == parent.GetNamespace()
	if rule.LabelSelector != nil && len(rule.Names) > 0 {
		return false, fmt.Errorf("related rule for %s has both labelSelector and names", rule.Resource)
	}
	if rule.Namespace != "" && rule.Namespace != parent.GetNamespace() {
		return false, fmt.Errorf("related rule namespace %s differs from the parent's %s", rule.Namespace, parent.GetNamespace())
	}
	// Names, or a namespace alone, select by name; a namespace with a label selector selects
	// by labels within it (Metacontroller's NamespaceAndLabels rule).
	if len(rule.Names) > 0 || rule.Namespace != "" && rule.LabelSelector == nil {
		return sameNamespace && (len(rule.Names) == 0 || slices.Contains(rule.Names, obj.GetName())), nil
	}
	if !sameNamespace {
		return false, nil
	}
	selector := labels.Everything()
	if rule.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(rule.LabelSelector)
		if err != nil {
			return false, fmt.Errorf("related rule label selector: %w", err)
		}
		selector = s
	}
	return selector.Matches(labels.Set(obj.GetLabels())), nil
}

func (c *Controller) customize(ctx context.Context, parent *unstructured.Unstructured) ([]relatedRule, error) {
	c.mu.Lock()
	entry, ok := c.customizeCache[parent.GetNamespace()+"/"+parent.GetName()]
	c.mu.Unlock()
	if ok && entry.generation == parent.GetGeneration() {
		return entry.rules, nil
	}
	request := map[string]any{"controller": c.ccJSON, "parent": parent.Object}
	var response struct {
		RelatedResources []relatedRule `json:"relatedResources"`
	}
	if err := c.post(ctx, c.cc.Spec.Hooks.Customize, "customize", request, &response); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.customizeCache[parent.GetNamespace()+"/"+parent.GetName()] = customizeEntry{generation: parent.GetGeneration(), rules: response.RelatedResources}
	c.mu.Unlock()
	return response.RelatedResources, nil
}

// relatedInformer starts (once) an informer for a related resource; its events enqueue every
// parent whose customize rules select the object.
func (c *Controller) relatedInformer(info resourceInfo) (cache.SharedIndexInformer, error) {
	gvr := info.gvr
	c.mu.Lock()
	informer, ok := c.related[gvr]
	c.mu.Unlock()
	if ok {
		return informer, nil
	}
	factory := c.factory
	if !info.namespaced {
		factory = c.clusterFactory
	}
	informer = factory.ForResource(gvr).Informer()
	handler := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			c.notifyRelatedParents(u)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handler,
		UpdateFunc: func(_, cur any) { handler(cur) },
		DeleteFunc: handler,
	}); err != nil {
		return nil, err
	}
	factory.Start(c.stopCh)
	if !cache.WaitForCacheSync(c.stopCh, informer.HasSynced) {
		return nil, fmt.Errorf("informer for related %s did not sync", gvr)
	}
	c.mu.Lock()
	c.related[gvr] = informer
	c.mu.Unlock()
	return informer, nil
}

func (c *Controller) notifyRelatedParents(obj *unstructured.Unstructured) {
	lister := c.factory.ForResource(c.parent.gvr).Lister()
	parents, err := lister.ByNamespace(obj.GetNamespace()).List(labels.Everything())
	if obj.GetNamespace() == "" {
		parents, err = lister.List(labels.Everything()) // a cluster-scoped object relates to parents anywhere
	}
	if err != nil {
		return
	}
	for _, p := range parents {
		parent := p.(*unstructured.Unstructured)
		c.mu.Lock()
		entry, ok := c.customizeCache[parent.GetNamespace()+"/"+parent.GetName()]
		c.mu.Unlock()
		if !ok {
			continue
		}
		for _, rule := range entry.rules {
			if matched, err := matchesRule(parent, obj, rule); err == nil && matched {
				c.enqueue(parent)
				break
			}
		}
	}
}
