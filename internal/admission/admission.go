// Package admission holds what the two admission webhooks (pod mutation, spec validation) share
// about the AdmissionReview envelope: the one version they answer, the checks that make a body
// answerable at all, and the answer's wrapping.
package admission

import (
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ReviewAPIVersion is the only AdmissionReview version answered; the webhook registrations must
// list it in admissionReviewVersions.
const ReviewAPIVersion = "admission.k8s.io/v1"

// CheckEnvelope fails when a decoded body is not an AdmissionReview v1 with a request and a uid:
// there is nothing to answer, and the caller should reply 400.
func CheckEnvelope(tm metav1.TypeMeta, hasRequest bool, uid types.UID) error {
	switch {
	case tm.APIVersion != ReviewAPIVersion || tm.Kind != "AdmissionReview":
		return fmt.Errorf("body is %q %q, want %s AdmissionReview (register the webhook with admissionReviewVersions [v1])", tm.APIVersion, tm.Kind, ReviewAPIVersion)
	case !hasRequest:
		return errors.New("AdmissionReview has no request")
	case uid == "":
		return errors.New("AdmissionReview request has no uid")
	}
	return nil
}

// Answer wraps a response in the review the API server expects back.
func Answer(resp *admissionv1.AdmissionResponse) *admissionv1.AdmissionReview {
	out := &admissionv1.AdmissionReview{Response: resp}
	out.APIVersion = ReviewAPIVersion
	out.Kind = "AdmissionReview"
	return out
}
