package coretest

// The accessors below reach into a sync request decoded as map[string]any, as mutations edit
// it: each step creates the object it names when it is absent, so that a mutation can set a
// field of a request that lacks its parents.

// Obj is m[key] as an object, put there empty when it is absent or not an object.
func Obj(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	if v == nil {
		v = map[string]any{}
		m[key] = v
	}
	return v
}

// Parent is the request's parent.
func Parent(req map[string]any) map[string]any { return Obj(req, "parent") }

// Spec is the parent's spec.
func Spec(req map[string]any) map[string]any { return Obj(Parent(req), "spec") }

// Status is the parent's status.
func Status(req map[string]any) map[string]any { return Obj(Parent(req), "status") }

// Group is the request's observed children of one key, such as "Pod.v1".
func Group(req map[string]any, key string) map[string]any { return Obj(Obj(req, "children"), key) }

// Labels is an object's metadata.labels.
func Labels(obj map[string]any) map[string]any { return Obj(Obj(obj, "metadata"), "labels") }

// EachChild is a mutation that applies edit to every observed child of key.
func EachChild(key string, edit func(child map[string]any)) func(req map[string]any) {
	return func(req map[string]any) {
		for _, c := range Group(req, key) {
			if child, ok := c.(map[string]any); ok {
				edit(child)
			}
		}
	}
}
