package hooks

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sparkhooks/sparkhooks/internal/metrics"
	"github.com/sparkhooks/sparkhooks/internal/validate"
)

// ValidatePath is the route of the validating admission webhook for a kind's route segment
// (validate.Kind.Route), such as /sparkapplication/validate for SparkApplication.
func ValidatePath(route string) string {
	return "/" + strings.ToLower(route) + "/validate"
}

// validatePaths lists the route of every kind package validate knows.
func validatePaths() []string {
	var paths []string
	for _, k := range validate.Kinds() {
		paths = append(paths, ValidatePath(k.Route()))
	}
	return paths
}

// newValidateHandler serves the validating admission webhook for kind: it decodes an
// AdmissionReview v1, lets package validate decide at now(), and answers with the review. A body
// that is not an AdmissionReview gets 400 (413 when the body-limit middleware cut it off);
// every decision, refusals included, is a 200 carrying the review, and each refusal is
// counted by kind and reason.
func newValidateHandler(kind validate.Kind, now func() time.Time, m *metrics.Metrics, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readReview(w, r)
		if !ok {
			return
		}
		out, outcome, err := validate.Review(body, kind, now())
		if err != nil {
			logger.LogAttrs(r.Context(), slog.LevelWarn, "admission review refused", slog.String("kind", kind.Kind), slog.String("error", err.Error()))
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if outcome.Refusal != "" {
			m.ValidationRefusals.WithLabelValues(kind.Kind, outcome.Refusal).Inc()
			logger.LogAttrs(r.Context(), slog.LevelInfo, "object refused",
				slog.String("kind", kind.Kind),
				slog.String("uid", string(out.Response.UID)),
				slog.String("reason", outcome.Refusal),
				slog.String("message", out.Response.Result.Message))
		}
		writeReview(w, r, logger, out)
	})
}
