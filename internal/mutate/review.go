package mutate

import (
	"bytes"
	"fmt"
	"maps"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	sigsjson "sigs.k8s.io/json"

	"github.com/sparkhooks/sparkhooks/internal/admission"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// ReviewAPIVersion is the only AdmissionReview version answered.
const ReviewAPIVersion = admission.ReviewAPIVersion

// DenialCustomization is the rule name reported when a pod's customization annotation cannot be
// applied.
const DenialCustomization = "pod-customization"

// Status codes of refusals, as the API server reports them to the client. Spelt out here because
// the core does not depend on net/http.
const (
	codeBadRequest    int32 = 400
	codeForbidden     int32 = 403
	codeInternalError int32 = 500
)

// Outcome reports what a review decided, for metrics and logs.
type Outcome struct {
	// Kinds are the mutation kinds in the patch, in the order first applied.
	Kinds []string `json:"kinds,omitempty"`
	// DeniedBy names the rules that refused the pod (DenialCustomization for a bad annotation).
	DeniedBy []string `json:"deniedBy,omitempty"`
}

// Review decodes an AdmissionReview body and answers it. An error means the body is not an
// AdmissionReview v1 with a request and a uid, so there is nothing to answer; the caller should
// reply 400. Every other problem, including a request object that is not a Pod, is answered in
// the review itself.
func Review(body []byte, p *Policy) (*admissionv1.AdmissionReview, Outcome, error) {
	resp, outcome, err := review(body, p)
	if err != nil {
		return nil, Outcome{}, err
	}
	return admission.Answer(resp), outcome, nil
}

// podReview is an AdmissionReview cut down to what the webhook reads, with the object decoded
// straight into a Pod: one pass over the body instead of one for the review and one for the pod,
// which is most of the time a review takes.
type podReview struct {
	metav1.TypeMeta `json:",inline"`
	Request         *struct {
		UID         types.UID               `json:"uid"`
		Kind        metav1.GroupVersionKind `json:"kind"`
		SubResource string                  `json:"subResource,omitempty"`
		Namespace   string                  `json:"namespace,omitempty"`
		Operation   admissionv1.Operation   `json:"operation"`
		Object      *sentPod                `json:"object,omitempty"`
	} `json:"request"`
}

// sentPod is a Pod as the request carries it. Its spec is a pointer because a patch cannot add
// to /spec/... of a pod that has none (absent or null): such a pod is left for the API server
// to refuse.
type sentPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              *corev1.PodSpec `json:"spec"`
}

func review(body []byte, p *Policy) (*admissionv1.AdmissionResponse, Outcome, error) {
	var in podReview
	// Case-sensitive like the API server, so that the pod we reason about is the one it patches.
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &in); err != nil {
		// Either not a review at all, or a review whose object is not a Pod; the general path
		// tells the two apart.
		var full admissionv1.AdmissionReview
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &full); err != nil {
			return nil, Outcome{}, fmt.Errorf("body is not an AdmissionReview: %w", err)
		}
		var uid types.UID
		if full.Request != nil {
			uid = full.Request.UID
		}
		if err := admission.CheckEnvelope(full.TypeMeta, full.Request != nil, uid); err != nil {
			return nil, Outcome{}, err
		}
		resp, outcome := Mutate(full.Request, p)
		return resp, outcome, nil
	}
	var uid types.UID
	if in.Request != nil {
		uid = in.Request.UID
	}
	if err := admission.CheckEnvelope(in.TypeMeta, in.Request != nil, uid); err != nil {
		return nil, Outcome{}, err
	}
	req := in.Request
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if !isPodCreate(req.Operation, req.Kind, req.SubResource) {
		return resp, Outcome{}, nil
	}
	if req.Object == nil {
		return refuse(resp, codeBadRequest, "admission request has no pod object"), Outcome{}, nil
	}
	resp, outcome := mutatePod(resp, req.Namespace, req.Object, p)
	return resp, outcome, nil
}

// isPodCreate reports whether a request is ours. Only pod creation is: the registration asks for
// nothing else, and a pod's spec barely changes after creation. Anything else arriving here is a
// registration mistake, which must not block the cluster, so it is allowed unchanged.
func isPodCreate(op admissionv1.Operation, kind metav1.GroupVersionKind, subResource string) bool {
	return op == admissionv1.Create && kind.Group == "" && kind.Kind == "Pod" && subResource == ""
}

// Mutate answers one decoded admission request: Spark pods being created get the per-app
// customization from their annotation, then the matching policy rules in file order; everything
// else is allowed unchanged. The request is not modified.
func Mutate(req *admissionv1.AdmissionRequest, p *Policy) (*admissionv1.AdmissionResponse, Outcome) {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if !isPodCreate(req.Operation, req.Kind, req.SubResource) {
		return resp, Outcome{}
	}
	raw := bytes.TrimSpace(req.Object.Raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return refuse(resp, codeBadRequest, "admission request has no pod object"), Outcome{}
	}
	var pod sentPod
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &pod); err != nil {
		return refuse(resp, codeBadRequest, "admission request object is not a Pod: "+err.Error()), Outcome{}
	}
	return mutatePod(resp, req.Namespace, &pod, p)
}

// mutatePod decides for a pod being created in namespace; it edits sent's labels and
// annotations in place.
func mutatePod(resp *admissionv1.AdmissionResponse, namespace string, sent *sentPod, p *Policy) (*admissionv1.AdmissionResponse, Outcome) {
	if sent.Spec == nil {
		return resp, Outcome{}
	}
	pod := &corev1.Pod{TypeMeta: sent.TypeMeta, ObjectMeta: sent.ObjectMeta, Spec: *sent.Spec}
	facts := podFacts{
		namespace: namespace,
		role:      pod.Labels[sparkpod.LabelSparkRole],
		appID:     pod.Labels[sparkpod.LabelAppSelector],
		appName:   pod.Labels[sparkpod.LabelAppName],
	}
	if facts.role == "" {
		return resp, Outcome{}
	}
	if facts.namespace == "" {
		facts.namespace = pod.Namespace
	}
	// Rules select on the labels the pod arrived with; the editor changes the map in place.
	rules := p.matching(&facts, maps.Clone(pod.Labels))

	e := newPodEditor(pod)
	if value, ok := pod.Annotations[sparkpod.CustomizationAnnotation]; ok {
		c, err := sparkpod.DecodeCustomization(value)
		if err != nil {
			msg := fmt.Sprintf("annotation %s: %v", sparkpod.CustomizationAnnotation, err)
			return refuse(resp, codeBadRequest, msg), Outcome{DeniedBy: []string{DenialCustomization}}
		}
		e.applyCustomization(c)
	}
	for _, r := range rules {
		if r.defaults != nil {
			e.applySettings(r.defaults, false, &facts)
		}
		if r.enforce != nil {
			e.applySettings(r.enforce, true, &facts)
		}
	}

	var denied, reasons []string
	for _, r := range rules {
		if v := r.violations(pod, facts.namespace); len(v) > 0 {
			denied = append(denied, r.name)
			reasons = append(reasons, fmt.Sprintf("rule %q: %s", r.name, strings.Join(v, ", ")))
		}
	}
	if len(denied) > 0 {
		msg := "refused by sparkhooks policy: " + strings.Join(reasons, "; ")
		return refuse(resp, codeForbidden, msg), Outcome{DeniedBy: denied}
	}

	data, err := e.patch.encode()
	if err != nil {
		return refuse(resp, codeInternalError, err.Error()), Outcome{}
	}
	if data != nil {
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch = data
		resp.PatchType = &pt
	}
	return resp, Outcome{Kinds: e.patch.kinds}
}

func refuse(resp *admissionv1.AdmissionResponse, code int32, msg string) *admissionv1.AdmissionResponse {
	resp.Allowed = false
	resp.Result = &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reasonFor(code),
		Message: msg,
	}
	return resp
}

func reasonFor(code int32) metav1.StatusReason {
	switch code {
	case codeBadRequest:
		return metav1.StatusReasonBadRequest
	case codeForbidden:
		return metav1.StatusReasonForbidden
	}
	return metav1.StatusReasonInternalError
}
