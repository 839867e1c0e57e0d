// Package validate decides the validating admission webhook for sparkhooks' custom resources: it
// refuses, at kubectl apply, a spec the sync hooks would only report later as failed
// validation. It runs the hooks' own validation (package v1beta2 after the sync hook's defaults,
// schedule.Validate for a ScheduledSparkApplication), so the webhook and the hooks never
// disagree.
//
// Everything here is pure: the answer depends only on the AdmissionReview, the kind the route
// serves and the clock (a schedule must fire within five years of now). The HTTP adapter lives
// in package hooks.
package validate
