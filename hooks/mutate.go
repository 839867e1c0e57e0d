package hooks

import (
	"log/slog"
	"net/http"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
)

// NewMutateHandler serves the pod-mutation admission webhook: it decodes an AdmissionReview v1,
// lets package mutate decide with the policy in force at that moment, and answers with the
// review. A body that is not an AdmissionReview gets 400 (413 when the body-limit middleware cut
// it off); everything the webhook decides, refusals included, is a 200 carrying the review.
//
// onMutation is called once per mutation kind in an admitted patch and onDenial once per rule that
// refused a pod; either may be nil. They let the caller count without this package knowing the
// metrics.
func NewMutateHandler(policy mutate.PolicySource, logger *slog.Logger, m *metrics.Metrics) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readReview(w, r)
		if !ok {
			return
		}
		out, outcome, err := mutate.Review(body, policy.Policy())
		if err != nil {
			logger.LogAttrs(r.Context(), slog.LevelWarn, "admission review refused", slog.String("error", err.Error()))
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if m != nil {
			for _, kind := range outcome.Kinds {
				m.Mutations.WithLabelValues(kind).Inc()
			}
			for _, rule := range outcome.DeniedBy {
				m.AdmissionDenials.WithLabelValues(rule).Inc()
			}
		}
		if !out.Response.Allowed {
			logger.LogAttrs(r.Context(), slog.LevelInfo, "pod refused",
				slog.String("uid", string(out.Response.UID)),
				slog.Any("rules", outcome.DeniedBy),
				slog.String("message", out.Response.Result.Message))
		}
		writeReview(w, r, logger, out)
	})
}
