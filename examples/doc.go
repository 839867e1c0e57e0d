// Package examples holds SparkApplication and ScheduledSparkApplication manifests to start from,
// one object per YAML file, named after the object. It has no Go code: its tests check every
// manifest with the API server's validation against the CRDs in crds/, with strict decoding into
// the Go types and with the validation the hooks apply, so that an example that would be refused
// (or silently pruned) cannot be checked in. They also require the examples to keep covering
// the API's main features.
package examples
