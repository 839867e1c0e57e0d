package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/metrics"
)

// EventRecorder takes the Events of answered syncs. Record runs on the answer's goroutine after
// the answer is written, so it must return at once and derive later.
type EventRecorder interface {
	Record(hook string, derive func() (event.Story, error))
}

// badRequest is implemented by core errors that mean "this request cannot be understood": they
// become a 400, anything else a 500. Either way Metacontroller leaves children and status alone
// and retries with back-off.
type badRequest interface {
	BadRequest() bool
}

// conflict is implemented by core errors that refuse to decide because the observed world
// contradicts the status (metacontroller.Refusal): a 409, counted by reason, not a 5xx.
type conflict interface {
	Conflict() string
}

type hookRecorder struct {
	name    string
	metrics *metrics.Metrics
	logger  *slog.Logger
}

func (h hookRecorder) fail(w http.ResponseWriter, r *http.Request, start time.Time, err error) {
	status, result := classify(err)
	var c conflict
	if errors.As(err, &c) {
		h.metrics.HookRefusals.WithLabelValues(h.name, c.Conflict()).Inc()
	}
	h.metrics.HookDuration.WithLabelValues(h.name, result).Observe(time.Since(start).Seconds())
	h.logger.LogAttrs(r.Context(), slog.LevelWarn, "hook refused request",
		slog.String("hook", h.name), slog.Int("status", status), slog.String("error", err.Error()))
	writeError(w, status, err.Error())
}

func (h hookRecorder) ok(w http.ResponseWriter, r *http.Request, start time.Time, body []byte) {
	h.metrics.HookDuration.WithLabelValues(h.name, "ok").Observe(time.Since(start).Seconds())
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(body); err != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelDebug, "write response", slog.String("error", err.Error()))
	}
}

func (h hookRecorder) record(o hook.Outcome) {
	if o.Kind == "" {
		return
	}
	if o.From != o.To {
		h.metrics.SyncTransitions.WithLabelValues(o.Kind, stateLabel(o.From), stateLabel(o.To)).Inc()
	}
	if o.Submitted {
		h.metrics.Submissions.WithLabelValues(o.Kind).Inc()
	}
	if o.RestartReason != "" {
		h.metrics.Restarts.WithLabelValues(o.RestartReason).Inc()
	}
	if o.ValidationFailed {
		h.metrics.ValidationFailures.WithLabelValues(o.Kind).Inc()
	}
	if o.Application != nil && h.metrics.Kubeflow != nil {
		h.metrics.Kubeflow.Record(*o.Application)
	}
}

// stateLabel names the empty state, which a new parent has, so that dashboards can show it.
func stateLabel(s string) string {
	if s == "" {
		return "NEW"
	}
	return s
}

// newSyncHandler serves a sync or finalize decision. With a recorder, the story of every
// answered decision that tells one is handed to the recorder once the answer is written: the
// answer itself stays a pure function of the request.
func newSyncHandler(name string, decide hook.SyncFunc, events EventRecorder, now func() time.Time, m *metrics.Metrics, logger *slog.Logger) http.HandlerFunc {
	rec := hookRecorder{name: name, metrics: m, logger: logger}
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var req metacontroller.SyncRequest
		if err := decodeBody(r, func(data []byte) error { return metacontroller.DecodeSyncRequest(data, &req) }); err != nil {
			rec.fail(w, r, start, err)
			return
		}
		if isNull(req.Parent) {
			rec.fail(w, r, start, requestError("request has no parent object"))
			return
		}
		if r.Context().Err() != nil {
			// The caller gave up while the body was read (Metacontroller's hook timeout): it
			// will not read the answer, and deciding a large request would only hold memory and
			// CPU that its retry needs.
			rec.logger.LogAttrs(r.Context(), slog.LevelDebug, "caller gone before the decision", slog.String("hook", name))
			return
		}
		resp, outcome, err := decide(&req, now())
		if err != nil {
			rec.fail(w, r, start, err)
			return
		}
		body, err := json.Marshal(resp)
		if err != nil {
			rec.fail(w, r, start, fmt.Errorf("encode response: %w", err))
			return
		}
		rec.record(outcome)
		rec.ok(w, r, start, body)
		if events != nil && outcome.Story != nil {
			events.Record(name, outcome.Story)
		}
	}
}

func newCustomizeHandler(name string, decide hook.CustomizeFunc, m *metrics.Metrics, logger *slog.Logger) http.HandlerFunc {
	rec := hookRecorder{name: name, metrics: m, logger: logger}
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var req metacontroller.CustomizeRequest
		if err := decodeBody(r, func(data []byte) error { return json.Unmarshal(data, &req) }); err != nil {
			rec.fail(w, r, start, err)
			return
		}
		if isNull(req.Parent) {
			rec.fail(w, r, start, requestError("request has no parent object"))
			return
		}
		resp, err := decide(&req)
		if err != nil {
			rec.fail(w, r, start, err)
			return
		}
		body, err := json.Marshal(resp)
		if err != nil {
			rec.fail(w, r, start, fmt.Errorf("encode response: %w", err))
			return
		}
		rec.ok(w, r, start, body)
	}
}

// requestError is a client error found by the HTTP shell itself.
type requestError string

func (e requestError) Error() string    { return string(e) }
func (e requestError) BadRequest() bool { return true }

// tooLarge marks a body that exceeded the configured limit.
type tooLarge struct{ limit int64 }

func (e tooLarge) Error() string {
	return fmt.Sprintf("request body exceeds the %d-byte limit (see --max-body-bytes)", e.limit)
}

// decodeBody reads the body and decodes it with decode. A decoded sync request's parent and
// observed objects are slices of the body's buffer, not copies (metacontroller.DecodeSyncRequest),
// so the buffer lives as long as the decision and nothing writes to it.
func decodeBody(r *http.Request, decode func(data []byte) error) error {
	data, err := readBody(r)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return tooLarge{limit: maxErr.Limit}
		}
		return fmt.Errorf("read request body: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return requestError("request body is empty")
	}
	if err := decode(data); err != nil {
		return requestError("request body is not valid JSON for this hook: " + err.Error())
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))
}

func classify(err error) (status int, result string) {
	var big tooLarge
	if errors.As(err, &big) {
		return http.StatusRequestEntityTooLarge, "bad_request"
	}
	var c conflict
	if errors.As(err, &c) {
		return http.StatusConflict, "refused"
	}
	var br badRequest
	if errors.As(err, &br) && br.BadRequest() {
		return http.StatusBadRequest, "bad_request"
	}
	return http.StatusInternalServerError, "error"
}

func writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{message})
	_, _ = w.Write(append(body, '\n'))
}

// readBody reads the body in one piece. A body with a Content-Length goes into a buffer of
// exactly that size, which admitBody has checked against the limit and reserved in the budget;
// a body of unknown length grows its buffer as it arrives, up to the limit the body reader
// enforces.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n >= 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(r.Body)
	return buf.Bytes(), err
}
