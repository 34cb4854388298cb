package producer

import (
	"net/http"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// Stable error codes of the API's JSON errors (see package httpapi).
const (
	CodeUnauthorized     = httpapi.CodeUnauthorized
	CodeInvalidJSON      = httpapi.CodeInvalidJSON
	CodeInvalidField     = httpapi.CodeInvalidField
	CodeBodyTooLarge     = httpapi.CodeBodyTooLarge
	CodeUnsupportedMedia = httpapi.CodeUnsupportedMedia
	CodeUnavailable      = httpapi.CodeUnavailable
	CodeNotFound         = httpapi.CodeNotFound
	CodeMethodNotAllowed = httpapi.CodeMethodNotAllowed
)

// ErrorBody is the JSON body of every non-2xx answer.
type ErrorBody = httpapi.ErrorBody

func writeJSON(w http.ResponseWriter, status int, v any) { httpapi.WriteJSON(w, status, v) }

func writeError(w http.ResponseWriter, status int, code, msg string, fields ...jobs.FieldError) {
	httpapi.WriteError(w, &httpapi.Error{Status: status, Code: code, Message: msg, Fields: fields})
}
