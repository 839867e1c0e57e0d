package sparkapp

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Metacontroller does not tell the hooks why it could not create a child, so what the API
// server's admission refuses about a driver Pod is read ahead, from related objects: the
// namespace's ServiceAccounts, the PriorityClasses, and the namespace itself (its Pod Security
// labels). What stays invisible (a ResourceQuota, a LimitRange, a webhook) is left to the
// submission grace.

// keyServiceAccount is the child key of the ServiceAccounts. The Namespace is namespace.go's
// keyNamespace, asked for once by namespaceRule for both uses.
const keyServiceAccount = "ServiceAccount.v1"

// relatedCacheLag is how long after the application's creation a missing ServiceAccount or
// PriorityClass is believed missing. Metacontroller caches each kind through its own watch, so
// an account created with the application (one kubectl apply) may reach the cache after it.
const relatedCacheLag = 3 * time.Second

// admissionRules ask for the objects the driver Pod's admission reads. All ServiceAccounts of the
// namespace and all PriorityClasses, rather than the ones the driver names, because the names
// come from the built Pod (pod templates, Spark properties, operator defaults), which the
// customize hook does not build; both kinds are few. rules are the ones asked for already
// (the namespace among them: namespaceRule).
func admissionRules(namespace string, rules []metacontroller.RelatedResourceRule) []metacontroller.RelatedResourceRule {
	asked := func(apiVersion, resource string) bool {
		for _, r := range rules {
			if r.APIVersion == apiVersion && r.Resource == resource && r.LabelSelector != nil && len(r.LabelSelector.MatchLabels) == 0 && len(r.LabelSelector.MatchExpressions) == 0 {
				return true
			}
		}
		return false
	}
	out := []metacontroller.RelatedResourceRule{
		{APIVersion: "v1", Resource: "serviceaccounts", Namespace: namespace},
	}
	if !asked("scheduling.k8s.io/v1", "priorityclasses") {
		out = append(out, metacontroller.RelatedResourceRule{APIVersion: "scheduling.k8s.io/v1", Resource: "priorityclasses", LabelSelector: &metav1.LabelSelector{}})
	}
	return out
}

// refusal is what admission will refuse about a driver Pod, and from when the hooks believe it.
type refusal struct {
	reason, message string
	from            time.Time
}

// podSecurity is the upstream Pod Security evaluator, the API server's own checks. It is an
// immutable table built once.
var podSecurity = sync.OnceValues(func() (psapolicy.Evaluator, error) {
	return psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
})

// predictRefusal tells what the API server will refuse about the driver Pod, nil when nothing
// the related objects show does. A kind is judged only when Metacontroller sent it: its group
// is in the request (the customize rule was served), and for cluster-scoped kinds the sync hook
// is v2, since a v1 request of a namespaced parent leaves them out. A nil pod is a driver that
// exists already (answered before, not built again): it was not refused.
func (d *decider) predictRefusal(pod *corev1.Pod) *refusal {
	if pod == nil {
		return nil
	}
	ns := d.in.app.Namespace
	believed := d.in.app.CreationTimestamp.Add(relatedCacheLag)
	if accounts, served := d.in.related[keyServiceAccount]; served {
		name := pod.Spec.ServiceAccountName
		if name == "" {
			name = "default"
		}
		if _, ok := accounts[name]; !ok {
			return &refusal{ReasonServiceAccountNotFound, fmt.Sprintf("ServiceAccount %q not found in namespace %s", name, ns), believed}
		}
	}
	if !d.in.clusterRelated {
		return nil
	}
	if name := pod.Spec.PriorityClassName; name != "" {
		if classes, served := d.in.related[keyPriorityClass]; served {
			if _, ok := classes[name]; !ok {
				return &refusal{ReasonPriorityClassNotFound, fmt.Sprintf("PriorityClass %q not found", name), believed}
			}
		}
	}
	if msg := d.podSecurityViolation(pod); msg != "" {
		return &refusal{ReasonPodSecurity, msg, time.Time{}}
	}
	return nil
}

// podSecurityViolation evaluates the driver Pod against the level its namespace enforces, as the
// PodSecurity admission plugin does with the cluster's defaults (privileged). Exemptions of the
// API server's admission configuration are not visible (docs/events.md).
func (d *decider) podSecurityViolation(pod *corev1.Pod) string {
	var ns namespaceView
	if found, err := d.in.related.Decode(keyNamespace, d.in.app.Namespace, &ns); err != nil || !found {
		return ""
	}
	defaults := psaapi.Policy{
		Enforce: psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
		Audit:   psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
		Warn:    psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
	}
	policy, _ := psaapi.PolicyToEvaluate(ns.Metadata.Labels, defaults)
	if policy.Enforce.Level == psaapi.LevelPrivileged {
		return ""
	}
	evaluator, err := podSecurity()
	if err != nil {
		return ""
	}
	result := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(policy.Enforce, &pod.ObjectMeta, &pod.Spec))
	if result.Allowed {
		return ""
	}
	return fmt.Sprintf("violates PodSecurity %q: %s", policy.Enforce.String(), result.ForbiddenDetail())
}

// unseenCauses names what could have kept a driver Pod from being created that the hooks did not
// check: always a ResourceQuota, a LimitRange and an admission webhook, and each kind
// Metacontroller did not send.
func (d *decider) unseenCauses() string {
	causes := []string{"a ResourceQuota", "a LimitRange", "an admission webhook"}
	if _, ok := d.in.related[keyServiceAccount]; !ok {
		causes = append(causes, "a missing ServiceAccount")
	}
	_, classes := d.in.related[keyPriorityClass]
	_, namespace := d.in.related[keyNamespace]
	if !d.in.clusterRelated || !classes {
		causes = append(causes, "a missing PriorityClass")
	}
	if !d.in.clusterRelated || !namespace {
		causes = append(causes, "Pod Security")
	}
	return strings.Join(causes[:len(causes)-1], ", ") + " or " + causes[len(causes)-1]
}

// refuseSubmission ends a submission whose driver Pod admission refuses, as a driver Pod never
// created: no execution attempt, and a retry as onSubmissionFailureRetries allows.
func (d *decider) refuseSubmission(r *refusal) {
	d.status.ExecutionAttempts = max(d.status.ExecutionAttempts-1, 0)
	msg := fmt.Sprintf("the API server refuses driver Pod %s: %s", d.status.DriverInfo.PodName, r.message)
	d.setState(v1beta2.ApplicationStateFailedSubmission, msg)
	d.setCondition(condDriverRequested, metav1.ConditionFalse, r.reason, msg, d.now)
	if !d.shouldRetrySubmission() {
		d.submissionFailed() // FAILED
		return
	}
	// The retry is the next sync's to submit, even when it is due at once: submitting it from
	// here would refuse it again within this decision.
	due := d.retryDue(d.spec.Spec.RestartPolicy.OnSubmissionFailureRetryInterval, d.status.LastSubmissionAttemptTime.Time)
	due = later(due, d.now.Add(promptResync))
	d.retry = d.retryNote(due, d.spec.Spec.RestartPolicy.OnSubmissionFailureRetries, d.status.SubmissionAttempts)
	d.wakeAt(due)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
