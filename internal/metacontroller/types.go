package metacontroller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ChildMap groups observed objects by "<Kind>.<apiVersion>" (for example "Pod.v1" or
// "Ingress.networking.k8s.io/v1"), then by object name. Within a namespaced parent the name
// alone is unique; Metacontroller uses "<namespace>/<name>" only for cluster-scoped parents.
type ChildMap map[string]map[string]json.RawMessage

// Key returns the ChildMap key Metacontroller uses for a kind and apiVersion.
func Key(kind, apiVersion string) string {
	return kind + "." + apiVersion
}

// Names returns the names observed for one kind in sorted order, so that callers iterating the
// map produce deterministic output.
func (m ChildMap) Names(key string) []string {
	group := m[key]
	names := make([]string, 0, len(group))
	for name := range group {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Decode unmarshals the observed object key/name into out and reports whether it was present.
func (m ChildMap) Decode(key, name string, out any) (bool, error) {
	raw, ok := m[key][name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return true, fmt.Errorf("decode observed %s %q: %w", key, name, err)
	}
	return true, nil
}

// DropAbsent removes entries whose object is JSON null or empty. Metacontroller never sends
// them; an entry without an object is neither kept nor deleted by any answer, so it is dropped
// before the decision sees it, and never echoed back as a null desired child.
func (m ChildMap) DropAbsent() {
	for _, group := range m {
		for name, raw := range group {
			if isAbsent(raw) {
				delete(group, name)
			}
		}
	}
}

// CheckNames fails when an observed object's metadata.name differs from the name it is filed
// under: an answer built from such a request could keep one object and delete another.
func (m ChildMap) CheckNames() error {
	for key, group := range m {
		for name, raw := range group {
			if walked, ok := metadataName(raw); ok && Is(walked, name) {
				continue
			}
			var obj struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(raw, &obj); err != nil {
				return fmt.Errorf("decode observed %s %q: %w", key, name, err)
			}
			if obj.Metadata.Name != name {
				return fmt.Errorf("observed %s %q has metadata.name %q", key, name, obj.Metadata.Name)
			}
		}
	}
	return nil
}

func isAbsent(raw json.RawMessage) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		case 'n':
			return string(bytes.TrimSpace(raw)) == "null"
		}
		return false
	}
	return true
}

// SyncRequest is the body Metacontroller POSTs to the sync and finalize hooks of a
// CompositeController.
type SyncRequest struct {
	// Controller is the CompositeController object itself; the hooks do not need it, so it stays
	// undecoded.
	Controller json.RawMessage `json:"controller,omitempty"`
	// Parent is the parent object as read from the API server.
	Parent json.RawMessage `json:"parent"`
	// Children are the observed children the parent owns.
	Children ChildMap `json:"children"`
	// Related are the objects selected by the customize hook's relatedResources.
	Related ChildMap `json:"related,omitempty"`
	// Finalizing is true when the request is for the finalize hook (the parent is being deleted).
	Finalizing bool `json:"finalizing"`
}

// SyncResponse is what the sync and finalize hooks answer.
type SyncResponse struct {
	// Status replaces the parent's .status wholesale (Metacontroller adds observedGeneration).
	Status any `json:"status"`
	// Children is the complete desired set: an owned child missing here is deleted.
	Children []any `json:"children"`
	// ResyncAfterSeconds asks for one more sync after this delay; 0 means no extra sync.
	ResyncAfterSeconds float64 `json:"resyncAfterSeconds,omitempty"`
	// Finalized is read only from the finalize hook: true lets Metacontroller remove its
	// finalizer from the parent.
	Finalized bool `json:"finalized,omitempty"`
}

// CustomizeRequest is the body of a customize hook call. Metacontroller asks once per parent
// generation, so the answer may depend on the parent alone.
type CustomizeRequest struct {
	Controller json.RawMessage `json:"controller,omitempty"`
	Parent     json.RawMessage `json:"parent"`
}

// CustomizeResponse lists the related objects the sync and finalize hooks want to see.
type CustomizeResponse struct {
	RelatedResources []RelatedResourceRule `json:"relatedResources"`
}

// RelatedResourceRule selects related objects by resource and label selector, or by names.
// An empty namespace means the parent's namespace for a namespaced parent.
type RelatedResourceRule struct {
	APIVersion    string                `json:"apiVersion"`
	Resource      string                `json:"resource"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	Namespace     string                `json:"namespace,omitempty"`
	Names         []string              `json:"names,omitempty"`
}

// TidyObserved prepares the observed objects of a sync request for a decision, for a parent in
// namespace (the hooks have decoded the parent already): objects that are absent (null) are
// dropped from children and related, since no answer can keep or delete them; the maps of a v2
// hook request are filed as a v1 request files them (see fileAsV1); and a child filed under
// another name than its own is a request error, since keeping one name could delete the other.
func (r *SyncRequest) TidyObserved(namespace string) error {
	r.Children.DropAbsent()
	r.Related.DropAbsent()
	r.Children.fileAsV1(namespace)
	r.Related.fileAsV1(namespace)
	if err := r.Children.CheckNames(); err != nil {
		return RequestErrorf("%w", err)
	}
	return nil
}

// fileAsV1 files the objects of a namespaced parent's v2 hook request as a v1 request does. A
// v2 request (the registration's hook version v2) files a namespaced object under
// "<namespace>/<name>" and a cluster-scoped one under its name (and, under a v2 customize hook,
// related objects selected by labels come from every namespace); a v1 request files every
// object under its name and, for a namespaced parent, leaves out every cluster-scoped related
// object (Metacontroller v4.17 filters them in its v1 conversion), which is why the
// registrations whose hooks need ResourceFlavors and PriorityClasses use v2. Objects of another
// namespace than the parent's are dropped: nothing a namespaced parent decides concerns them. A
// cluster-scoped parent's maps are left as they are. The key alone says where an object is
// filed (a name has no "/"), so nothing is decoded: a thousand executor Pods cost a thousand
// string splits; CheckNames still holds every child's key to its metadata.name.
func (m ChildMap) fileAsV1(namespace string) {
	if namespace == "" {
		return
	}
	for _, group := range m {
		for filed, raw := range group {
			ns, name, namespaced := strings.Cut(filed, "/")
			if !namespaced {
				continue
			}
			delete(group, filed)
			if ns == namespace {
				group[name] = raw
			}
		}
	}
}

// DeclaresChild tells whether the CompositeController a hook request carries declares the child
// resource (apiVersion, plural resource). Optional child kinds are the operator's switches: a
// registration declares them only where the cluster serves them.
func DeclaresChild(controller json.RawMessage, apiVersion, resource string) bool {
	var cc struct {
		Spec struct {
			ChildResources []struct {
				APIVersion string `json:"apiVersion"`
				Resource   string `json:"resource"`
			} `json:"childResources"`
		} `json:"spec"`
	}
	if len(controller) == 0 || json.Unmarshal(controller, &cc) != nil {
		return false
	}
	for _, c := range cc.Spec.ChildResources {
		if c.APIVersion == apiVersion && c.Resource == resource {
			return true
		}
	}
	return false
}

// HookVersion is the version of a hook ("sync", "finalize", "customize") of the
// CompositeController a hook request carries: "v2" when the registration says so, "v1"
// (Metacontroller's default) otherwise, a request without its controller included.
func HookVersion(controller json.RawMessage, hook string) string {
	var cc struct {
		Spec struct {
			Hooks map[string]struct {
				Version string `json:"version"`
			} `json:"hooks"`
		} `json:"spec"`
	}
	if len(controller) == 0 || json.Unmarshal(controller, &cc) != nil || cc.Spec.Hooks[hook].Version != "v2" {
		return "v1"
	}
	return "v2"
}
