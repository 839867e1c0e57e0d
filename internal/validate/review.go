package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/sparkhooks/sparkhooks/internal/admission"
)

// ReviewAPIVersion is the only AdmissionReview version answered.
const ReviewAPIVersion = admission.ReviewAPIVersion

// Refusal reasons, the values of Outcome.Refusal.
const (
	// RefusalInvalid: the object failed the hooks' validation.
	RefusalInvalid = "invalid"
	// RefusalBadRequest: the request cannot be validated, because it is for another kind, has no
	// object, or its object does not decode. Either the registration or the caller is wrong.
	RefusalBadRequest = "bad_request"
)

// codeBadRequest is spelt out because the core does not depend on net/http.
const codeBadRequest int32 = 400

// Outcome reports what a review decided, for metrics and logs.
type Outcome struct {
	// Refusal is empty when the request was allowed, else RefusalInvalid or RefusalBadRequest.
	Refusal string `json:"refusal,omitempty"`
}

// admissionReview is an AdmissionReview cut down to what the webhook reads. The objects stay raw
// until the request is known to be one to validate.
type admissionReview struct {
	metav1.TypeMeta `json:",inline"`
	Request         *request `json:"request"`
}

type request struct {
	UID         types.UID                   `json:"uid"`
	Kind        metav1.GroupVersionKind     `json:"kind"`
	Resource    metav1.GroupVersionResource `json:"resource"`
	SubResource string                      `json:"subResource,omitempty"`
	Name        string                      `json:"name,omitempty"`
	Namespace   string                      `json:"namespace,omitempty"`
	Operation   admissionv1.Operation       `json:"operation"`
	Object      json.RawMessage             `json:"object,omitempty"`
	OldObject   json.RawMessage             `json:"oldObject,omitempty"`
}

// Review decodes an AdmissionReview body for kind and answers it at now. An error means the body
// is not an AdmissionReview v1 with a request and a uid, so there is nothing to answer; the
// caller should reply 400. Every other problem, a request for another kind included, is a
// refusal in the review itself.
func Review(body []byte, kind Kind, now time.Time) (*admissionv1.AdmissionReview, Outcome, error) {
	var in admissionReview
	// Case-sensitive like the API server, so that the object validated is the one it stores.
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &in); err != nil {
		return nil, Outcome{}, fmt.Errorf("body is not an AdmissionReview: %w", err)
	}
	var uid types.UID
	if in.Request != nil {
		uid = in.Request.UID
	}
	if err := admission.CheckEnvelope(in.TypeMeta, in.Request != nil, uid); err != nil {
		return nil, Outcome{}, err
	}
	resp, outcome := decide(in.Request, kind, now)
	return admission.Answer(resp), outcome, nil
}

func decide(req *request, kind Kind, now time.Time) (*admissionv1.AdmissionResponse, Outcome) {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	case admissionv1.Delete, admissionv1.Connect:
		// Nothing to validate; refusing a delete would keep an object nobody could fix.
		return resp, Outcome{}
	default:
		return refuse(resp, fmt.Sprintf("unknown operation %q", req.Operation))
	}
	if req.SubResource != "" {
		// The spec changes only through the main resource; status, the one subresource, is
		// what Metacontroller writes from the hooks' answers.
		return resp, Outcome{}
	}
	if req.Kind.Group != kind.GroupVersion.Group || req.Kind.Version != kind.GroupVersion.Version || req.Kind.Kind != kind.Kind ||
		req.Resource.Group != kind.GroupVersion.Group || req.Resource.Resource != kind.Resource {
		return refuse(resp, fmt.Sprintf("this webhook validates %s %s (%s); the request is for %s %s (%s): check the webhook's rules and path",
			kind.GroupVersion, kind.Kind, kind.Resource, gv(req.Kind.Group, req.Kind.Version), req.Kind.Kind, req.Resource.Resource))
	}
	if isNull(req.Object) {
		return refuse(resp, "admission request has no object")
	}
	obj, err := kind.decode(req.Object)
	if err != nil {
		return refuse(resp, fmt.Sprintf("admission request object is not a %s: %v", kind.Kind, err))
	}
	var changeErrs field.ErrorList
	if req.Operation == admissionv1.Update && !isNull(req.OldObject) {
		// An object stored before this webhook (or while it was down, under failurePolicy
		// Ignore) may be invalid; an update that leaves its spec alone, such as the finalizer
		// Metacontroller adds and removes, must still go through. The hook reports the spec
		// in the status.
		if old, err := kind.decode(req.OldObject); err == nil {
			if equality.Semantic.DeepEqual(old.spec(), obj.spec()) {
				return resp, Outcome{}
			}
			if u, ok := obj.(updater); ok {
				changeErrs = u.validateUpdate(old)
			}
		}
	}
	if obj.GetNamespace() == "" {
		// The hook sees the stored object, which always has its namespace.
		obj.SetNamespace(req.Namespace)
	}
	name := obj.GetName()
	if name == "" {
		name = req.Name
	}
	errs := append(changeErrs, obj.validate(now)...)
	if len(errs) == 0 {
		return resp, Outcome{}
	}
	// The API server's own shape for an invalid object (422, reason Invalid, a cause per field),
	// so kubectl shows it like a schema error.
	status := apierrors.NewInvalid(kind.GroupVersion.WithKind(kind.Kind).GroupKind(), name, errs).Status()
	resp.Allowed = false
	resp.Result = &status
	return resp, Outcome{Refusal: RefusalInvalid}
}

func refuse(resp *admissionv1.AdmissionResponse, msg string) (*admissionv1.AdmissionResponse, Outcome) {
	resp.Allowed = false
	resp.Result = &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    codeBadRequest,
		Reason:  metav1.StatusReasonBadRequest,
		Message: msg,
	}
	return resp, Outcome{Refusal: RefusalBadRequest}
}

func gv(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

func isNull(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))
}
