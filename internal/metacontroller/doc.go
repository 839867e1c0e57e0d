// Package metacontroller holds the wire types of Metacontroller's CompositeController hook
// protocol (sync, finalize and customize), as documented at
// https://metacontroller.github.io/metacontroller/api/compositecontroller.html and
// https://metacontroller.github.io/metacontroller/api/customize.html.
//
// Objects inside a request are kept as raw JSON: a sync request for a running application can
// carry a thousand executor pods with their managedFields, and each consumer decodes only the
// fields it needs instead of paying for a full typed decode of everything.
package metacontroller
