package mcstandin

import (
	"fmt"
	"net/url"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// CompositeController is the part of Metacontroller's metacontroller.k8s.io/v1alpha1
// CompositeController that Controller implements. Decoding is strict, so a field
// Metacontroller's CRD does not have fails the load instead of being ignored.
type CompositeController struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		GenerateSelector    *bool                    `json:"generateSelector,omitempty"`
		ResyncPeriodSeconds *int32                   `json:"resyncPeriodSeconds,omitempty"`
		ParentResource      ParentResourceRule       `json:"parentResource"`
		ChildResources      []ChildResourceRule      `json:"childResources,omitempty"`
		Hooks               CompositeControllerHooks `json:"hooks"`
	} `json:"spec"`
}

// ResourceRule names a resource by apiVersion and plural resource name.
type ResourceRule struct {
	APIVersion string `json:"apiVersion"`
	Resource   string `json:"resource"`
}

// ParentResourceRule is the parent type, and whether its status-only updates bring a sync.
type ParentResourceRule struct {
	ResourceRule `json:",inline"`
	// IgnoreStatusChanges: an update of the parent that leaves its generation, labels,
	// annotations and deletion timestamp as they were (a status write, above all the
	// controller's own) enqueues no sync.
	IgnoreStatusChanges *bool `json:"ignoreStatusChanges,omitempty"`
}

// ignoresStatusChanges reports whether the parent's status-only updates are ignored.
func (p ParentResourceRule) ignoresStatusChanges() bool {
	return p.IgnoreStatusChanges != nil && *p.IgnoreStatusChanges
}

// ChildResourceRule is a child type with its update strategy.
type ChildResourceRule struct {
	ResourceRule   `json:",inline"`
	UpdateStrategy *struct {
		Method string `json:"method,omitempty"`
	} `json:"updateStrategy,omitempty"`
}

// Method returns the child update method, OnDelete when none is set (Metacontroller's default).
func (c ChildResourceRule) Method() string {
	if c.UpdateStrategy == nil || c.UpdateStrategy.Method == "" {
		return "OnDelete"
	}
	return c.UpdateStrategy.Method
}

// CompositeControllerHooks are the hooks of a CompositeController.
type CompositeControllerHooks struct {
	Sync      *Hook `json:"sync,omitempty"`
	Finalize  *Hook `json:"finalize,omitempty"`
	Customize *Hook `json:"customize,omitempty"`
}

// Hook is a webhook hook.
type Hook struct {
	// Version is the request format, v1 (the default) or v2; see Controller.callSyncHook.
	Version string `json:"version,omitempty"`
	Webhook *struct {
		URL     *string          `json:"url,omitempty"`
		Timeout *metav1.Duration `json:"timeout,omitempty"`
	} `json:"webhook,omitempty"`
}

// defaultHookTimeout is Metacontroller's webhook timeout when none is set.
const defaultHookTimeout = 10 * time.Second

func (h *Hook) url() string {
	if h == nil || h.Webhook == nil || h.Webhook.URL == nil {
		return ""
	}
	return *h.Webhook.URL
}

func (h *Hook) timeout() time.Duration {
	if h == nil || h.Webhook == nil || h.Webhook.Timeout == nil {
		return defaultHookTimeout
	}
	return h.Webhook.Timeout.Duration
}

// LoadCompositeController reads a CompositeController YAML file and points its hook URLs at
// baseURL, keeping their paths: the registration's paths are what the test checks, the host is
// the test's own sparkhooks server.
func LoadCompositeController(path, baseURL string) (*CompositeController, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading CompositeController: %w", err)
	}
	var cc CompositeController
	if err := yaml.UnmarshalStrict(data, &cc); err != nil {
		return nil, fmt.Errorf("decoding CompositeController %s: %w", path, err)
	}
	if cc.APIVersion != "metacontroller.k8s.io/v1alpha1" || cc.Kind != "CompositeController" {
		return nil, fmt.Errorf("%s: got %s %s, want metacontroller.k8s.io/v1alpha1 CompositeController", path, cc.APIVersion, cc.Kind)
	}
	if cc.Spec.Hooks.Sync.url() == "" {
		return nil, fmt.Errorf("%s: no sync hook URL", path)
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("hook base URL: %w", err)
	}
	for _, hook := range []*Hook{cc.Spec.Hooks.Sync, cc.Spec.Hooks.Finalize, cc.Spec.Hooks.Customize} {
		if hook.url() == "" {
			continue
		}
		u, err := url.Parse(hook.url())
		if err != nil {
			return nil, fmt.Errorf("%s: hook URL %q: %w", path, hook.url(), err)
		}
		u.Scheme, u.Host = base.Scheme, base.Host
		rewritten := u.String()
		hook.Webhook.URL = &rewritten
	}
	return &cc, nil
}
