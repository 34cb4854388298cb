package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/jobs"
)

// checkJSONContentType accepts a missing Content-Type, application/json and
// any +json type.
func checkJSONContentType(r *http.Request) *Error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return Errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "Content-Type %q is not supported; send application/json", ct)
	}
	return nil
}

// DecodeJSON reads one JSON object into v, refusing unknown fields, wrong
// types, trailing data, bodies over maxBytes, and keys that encoding/json
// would silently merge (a key given twice, or in two letter cases: see
// CheckKeys). The returned error, when not nil, is an *Error that names the
// field at fault. A body over LargeBody waits for its turn (bodies.go).
func DecodeJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) error {
	return DecodeJSONBounded(w, r, maxBytes, nil, v)
}

// DecodeJSONBounded is DecodeJSON refusing, as the body is read and before
// it is decoded, a top-level member over its bound: an array or object
// with more entries, a string of more bytes (boundsScanner).
func DecodeJSONBounded(w http.ResponseWriter, r *http.Request, maxBytes int64, bounds map[string]Bound, v any) error {
	if e := checkJSONContentType(r); e != nil {
		return e
	}
	body, release, err := readBounded(w, r, maxBytes, bounds)
	defer release()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		err = trailingData(dec)
	}
	if err != nil {
		return jsonError(err)
	}
	// Only one well-formed JSON value gets here (decoded, no trailing
	// data), so the error names a key.
	if fe := checkDecodedKeys(body, v); fe != nil {
		return Invalid("duplicate or case-variant key", *fe)
	}
	return nil
}

// ReadJSON is DecodeJSON for a handler: it answers a bad body itself (the
// 4xx naming the field) and returns false, after which the handler returns.
func ReadJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) bool {
	err := DecodeJSON(w, r, maxBytes, v)
	if err == nil {
		return true
	}
	var he *Error
	if !errors.As(err, &he) {
		he = Errorf(http.StatusBadRequest, CodeInvalidJSON, "%v", err)
	}
	WriteError(w, he)
	return false
}

// ReadBody returns the raw body, at most maxBytes of it, for endpoints that
// verify a signature over the exact bytes before decoding them.
func ReadBody(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, Errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "body exceeds %d bytes", tooLarge.Limit)
	case err != nil:
		return nil, Errorf(http.StatusBadRequest, CodeInvalidJSON, "reading the body failed: %v", err)
	}
	return b, nil
}

// Unmarshal decodes a body read by ReadBody into v. Unlike DecodeJSON it
// tolerates unknown fields: senders such as GitHub add fields over time.
func Unmarshal(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return Errorf(http.StatusBadRequest, CodeInvalidJSON, "body is empty; send a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return jsonError(err)
	}
	return nil
}

func jsonError(err error) *Error {
	var (
		tooLarge *http.MaxBytesError
		typeErr  *json.UnmarshalTypeError
		syntax   *json.SyntaxError
		already  *Error
	)
	switch {
	case errors.As(err, &already):
		return already
	case errors.Is(err, errTrailingData):
		return Errorf(http.StatusBadRequest, CodeInvalidJSON, "body must hold exactly one JSON object")
	case errors.As(err, &tooLarge):
		return Errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "body exceeds %d bytes", tooLarge.Limit)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return Errorf(http.StatusBadRequest, CodeInvalidJSON, "body must be a JSON object")
		}
		want := "a " + jsonKind(typeErr.Type.Kind().String())
		if k, ok := reflect.Zero(typeErr.Type).Interface().(interface{ JSONKind() string }); ok {
			want = k.JSONKind()
		}
		return Invalid("invalid field type", jobs.FieldError{Field: field,
			Message: fmt.Sprintf("must be %s, got a JSON %s", want, typeErr.Value)})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if unq, err := strconv.Unquote(name); err == nil && unq != "" {
			name = unq
		}
		// An empty key stays quoted (""), so the error still names it.
		return Invalid("unknown field", jobs.FieldError{Field: name, Message: "is not a known field"})
	case errors.As(err, &syntax):
		return Errorf(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON at byte %d: %v", syntax.Offset, err)
	case errors.Is(err, io.EOF):
		return Errorf(http.StatusBadRequest, CodeInvalidJSON, "body is empty; send a JSON object")
	default:
		return Errorf(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON: %v", err)
	}
}

// errTrailingData reports a body that holds more than one JSON value.
var errTrailingData = errors.New("trailing data after the JSON object")

// trailingData returns nil when nothing but white space follows the decoded
// value, the read error when reading on failed (an oversized body among
// them), and errTrailingData otherwise.
func trailingData(dec *json.Decoder) error {
	_, err := dec.Token()
	var tooLarge *http.MaxBytesError
	switch {
	case err == io.EOF:
		return nil
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
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "whole number"
	case "float64", "float32":
		return "number"
	case "slice":
		return "array"
	case "map", "struct":
		return "object"
	}
	return goKind
}
