// Package mcstandin is a stand-in for Metacontroller: a CompositeController controller that
// drives the sparkhooks hooks from their registrations as Metacontroller would, against the real
// API server (Controller), with the registrations' loader and the three-way merge of its
// InPlace updates.
//
// It stays because Metacontroller is absent from a machine without ../shared/metacontroller,
// where the suites and the sandbox still run. The contract suite also runs one stand-in per test
// namespace, for the counts it reports (syncs, writes, stale status writes) that Metacontroller
// does not expose. Where it differs from Metacontroller is listed in docs/local.md; a difference
// found in CI is a defect here.
//
// The controller's parts, one file each: the informers and work queue (queue.go), one parent's
// sync (sync.go), claiming children (claim.go), the customize hook's related objects
// (related.go), the hook call (hookcall.go), creating, updating and deleting children
// (manage.go), and the status write (status.go).
package mcstandin
