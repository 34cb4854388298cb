package telegramfake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// responseParameters is the "parameters" object of an error answer.
type responseParameters struct {
	MigrateToChatID int64 `json:"migrate_to_chat_id,omitempty"`
	RetryAfter      int   `json:"retry_after,omitempty"`
}

// apiError is an error answer of the Bot API.
type apiError struct {
	code   int
	desc   string
	params *responseParameters
}

func badRequest(what string) *apiError {
	return &apiError{code: http.StatusBadRequest, desc: "Bad Request: " + what}
}

func forbidden(what string) *apiError {
	return &apiError{code: http.StatusForbidden, desc: "Forbidden: " + what}
}

var (
	errUnauthorized = &apiError{code: http.StatusUnauthorized, desc: "Unauthorized"}
	errNotFound     = &apiError{code: http.StatusNotFound, desc: "Not Found"}
	errInternal     = &apiError{code: http.StatusInternalServerError, desc: "Internal Server Error"}
)

// tooMany is the 429 answer telling the client to wait seconds.
func tooMany(seconds int) *apiError {
	return &apiError{
		code:   http.StatusTooManyRequests,
		desc:   "Too Many Requests: retry after " + strconv.Itoa(seconds),
		params: &responseParameters{RetryAfter: seconds},
	}
}

// errorEnvelope and okEnvelope are the two shapes of every Bot API answer.
type errorEnvelope struct {
	OK          bool                `json:"ok"`
	ErrorCode   int                 `json:"error_code"`
	Description string              `json:"description"`
	Parameters  *responseParameters `json:"parameters,omitempty"`
}

type okEnvelope struct {
	OK     bool `json:"ok"`
	Result any  `json:"result"`
}

// writeJSON sends v as the body with status, without the HTML escaping
// encoding/json applies by default, since Telegram sends text verbatim.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeResult(w http.ResponseWriter, result any) {
	writeJSON(w, http.StatusOK, okEnvelope{OK: true, Result: result})
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.code, errorEnvelope{ErrorCode: e.code, Description: e.desc, Parameters: e.params})
}

// gatewayPage is what the reverse proxy in front of the Bot API serves when
// the backend is unreachable: HTML, not JSON.
const gatewayPage = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
	"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

func writeGatewayPage(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html")
	h.Set("Content-Length", strconv.Itoa(len(gatewayPage)))
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write([]byte(gatewayPage))
}
