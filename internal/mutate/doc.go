// Package mutate decides how the admission webhook changes a Spark pod: it applies the per-app
// customization the sync hook carries on the pod as an annotation, then the cluster policy's
// defaults, enforcements and guardrails, and answers with an AdmissionResponse holding a JSONPatch.
//
// Everything here is pure: the answer depends only on the AdmissionReview and the Policy, never on
// the cluster, the clock or earlier requests. The HTTP adapter lives in package hooks.
package mutate
