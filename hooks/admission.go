package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// readReview reads an AdmissionReview body for the admission webhooks. When it cannot, it has
// already answered (405, 413 when the body-limit middleware cut the body off, else 400) and
// returns false.
func readReview(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return nil, false
	}
	body, err := readBody(r)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds the %d-byte limit (see --max-body-bytes)", maxErr.Limit))
			return nil, false
		}
		writeError(w, http.StatusBadRequest, "read request body: "+err.Error())
		return nil, false
	}
	return body, true
}

// writeReview answers with a decided AdmissionReview.
func writeReview(w http.ResponseWriter, r *http.Request, logger *slog.Logger, review any) {
	data, err := json.Marshal(review)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode admission review: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(data); err != nil {
		logger.LogAttrs(r.Context(), slog.LevelDebug, "write admission review", slog.String("error", err.Error()))
	}
}
