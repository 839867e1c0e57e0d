package hooks

import (
	"errors"
	"fmt"
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
