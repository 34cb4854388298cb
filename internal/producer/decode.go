package producer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/herald-dev/herald/internal/jobs"
)

// MessageRequest is the body of POST /v1/messages.
type MessageRequest struct {
	Chat                string `json:"chat"`
	Text                string `json:"text"`
	ParseMode           string `json:"parse_mode,omitempty"`
	DisableNotification bool   `json:"disable_notification,omitempty"`
	MessageThreadID     int    `json:"message_thread_id,omitempty"`
	DisableLinkPreview  bool   `json:"disable_link_preview,omitempty"`
	ProtectContent      bool   `json:"protect_content,omitempty"`
	IdempotencyKey      string `json:"idempotency_key,omitempty"`
	// Queue is "critical", "default" or "low" (or as configured).
	Queue string `json:"queue,omitempty"`
}

// requestError is a client error with its HTTP status and code.
type requestError struct {
	status int
	code   string
	msg    string
	fields []jobs.FieldError
}

func (e *requestError) Error() string { return e.msg }

// decodeJSON reads one JSON object into v, refusing unknown fields, wrong
// types, trailing data and oversized bodies with errors that name the field.
func decodeJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return &requestError{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedMedia,
				msg: fmt.Sprintf("Content-Type %q is not supported; send application/json", ct)}
		}
	}
	body := http.MaxBytesReader(w, r.Body, maxBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		err = trailingData(dec)
		if err == nil {
			return nil
		}
	}
	var (
		tooLarge *http.MaxBytesError
		typeErr  *json.UnmarshalTypeError
		syntax   *json.SyntaxError
	)
	switch {
	case errors.Is(err, errTrailingData):
		return &requestError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: "body must hold exactly one JSON object"}
	case errors.As(err, &tooLarge):
		return &requestError{status: http.StatusRequestEntityTooLarge, code: CodeBodyTooLarge,
			msg: fmt.Sprintf("body exceeds %d bytes", tooLarge.Limit)}
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return &requestError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: "body must be a JSON object"}
		}
		return &requestError{status: http.StatusBadRequest, code: CodeInvalidField, msg: "invalid field type",
			fields: []jobs.FieldError{{Field: field, Message: fmt.Sprintf("must be a %s, got a JSON %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value)}}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &requestError{status: http.StatusBadRequest, code: CodeInvalidField, msg: "unknown field",
			fields: []jobs.FieldError{{Field: name, Message: "is not a known field"}}}
	case errors.As(err, &syntax):
		return &requestError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: fmt.Sprintf("malformed JSON at byte %d: %v", syntax.Offset, err)}
	case errors.Is(err, io.EOF):
		return &requestError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: "body is empty; send a JSON object"}
	default:
		return &requestError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: "malformed JSON: " + err.Error()}
	}
}

// errTrailingData reports a body that holds more than one JSON value.
var errTrailingData = errors.New("trailing data after the JSON object")

// trailingData returns nil when nothing but white space follows the decoded
// value, the read error when reading on failed (an oversized body among them),
// and errTrailingData otherwise.
func trailingData(dec *json.Decoder) error {
	_, err := dec.Token()
	var tooLarge *http.MaxBytesError
	switch {
	case err == io.EOF:
		return nil
	case errors.Is(err, errTrailingData):
		return &requestError{status: http.StatusBadRequest, code: CodeInvalidJSON, msg: "body must hold exactly one JSON object"}
	case errors.As(err, &tooLarge):
		return err
	}
	return errTrailingData
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int64", "int32":
		return "whole number"
	case "float64":
		return "number"
	}
	return goKind
}
