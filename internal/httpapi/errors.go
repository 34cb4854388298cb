package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/herald-dev/herald/internal/jobs"
)

// Stable error codes of the JSON errors. Clients may switch on them; the
// message text may change between releases.
const (
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeCrossOrigin      = "cross_origin"
	CodeBadSignature     = "bad_signature"
	CodeInvalidJSON      = "invalid_json"
	CodeInvalidField     = "invalid_field"
	CodeBodyTooLarge     = "body_too_large"
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeUnavailable      = "unavailable"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeNoRoute          = "no_route"
	CodeInternal         = "internal"
	CodeTooLate          = "too_late"
)

// ErrorBody is the JSON body of every non-2xx answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong, and which fields when input was invalid.
type ErrorDetail struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  []jobs.FieldError `json:"fields,omitempty"`
}

// Error is a client-visible failure: the HTTP status, the stable code, a
// message and, for invalid input, the fields at fault.
type Error struct {
	Status  int
	Code    string
	Message string
	Fields  []jobs.FieldError
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Errorf builds an Error.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 invalid_field error naming the fields.
func Invalid(msg string, fields ...jobs.FieldError) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidField, Message: msg, Fields: fields}
}

// WriteJSON sends v as JSON with status, without HTML escaping.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// WriteError sends e as an ErrorBody. A 503 gets Retry-After: 1 unless the
// caller set one.
func WriteError(w http.ResponseWriter, e *Error) {
	if e.Status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	WriteJSON(w, e.Status, ErrorBody{Error: ErrorDetail{Code: e.Code, Message: e.Message, Fields: e.Fields}})
}
