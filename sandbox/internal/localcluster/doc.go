// Package localcluster is what stays of the sandbox's own cluster now that the real control
// plane runs it (sandbox/internal/stack): the CompositeController contract controller, a
// stand-in for Metacontroller that drives the sparkhooks hooks from the registrations as
// Metacontroller would, and two helpers of the suites (kubectl, klog's output).
//
// The stand-in stays because Metacontroller is absent from a machine without
// ../shared/metacontroller, where the suites and the sandbox still run. The contract suite also runs one stand-in per test namespace, for the counts it reports
// (syncs, writes, stale status writes) that Metacontroller does not expose. Where it differs from
// Metacontroller is listed in docs/local.md; a difference found in CI is a defect here.
package localcluster
