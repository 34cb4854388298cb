package botapi

import (
	"net/http"

	"github.com/herald-dev/herald/internal/httpapi"
)

// refusal is an answer with ok false, in Telegram's words: the HTTP status
// is error_code, and description starts as Telegram's do ("Bad Request:
// ...", "Unauthorized", "Not Found").
type refusal struct {
	Code        int
	Description string
}

func (r *refusal) Error() string { return r.Description }

// badRequest is a 400 refusal with Telegram's "Bad Request: " in front.
func badRequest(what string) *refusal {
	return &refusal{Code: http.StatusBadRequest, Description: "Bad Request: " + what}
}

// Refusals Telegram gives with a fixed text.
var (
	errNotFound     = &refusal{Code: http.StatusNotFound, Description: "Not Found"}
	errUnauthorized = &refusal{Code: http.StatusUnauthorized, Description: "Unauthorized"}
)

// errorBody is Telegram's answer to a refused request.
type errorBody struct {
	OK          bool   `json:"ok"`
	ErrorCode   int    `json:"error_code"`
	Description string `json:"description"`
}

// okBody is Telegram's answer to a request that succeeded, with Herald's
// own note on the message beside it (tools read ok and result only).
type okBody struct {
	OK     bool        `json:"ok"`
	Result any         `json:"result"`
	Herald *heraldNote `json:"herald,omitempty"`
}

// heraldNote names the message Herald stored and where it stands.
type heraldNote struct {
	// ID is Herald's message id: GET /v1/messages/{id}.
	ID string `json:"id"`
	// State is the ledger's state when the answer went: queued while the
	// message waits for its send, sent once Telegram took it.
	State string `json:"state"`
}

// writeRefusal answers r. A 503 tells the client when to come back.
func writeRefusal(w http.ResponseWriter, r *refusal) {
	if r.Code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	httpapi.WriteJSON(w, r.Code, errorBody{ErrorCode: r.Code, Description: r.Description})
}

// writeResult answers ok with result.
func writeResult(w http.ResponseWriter, result any, note *heraldNote) {
	if note != nil {
		w.Header().Set("Herald-Message-Id", note.ID)
	}
	httpapi.WriteJSON(w, http.StatusOK, okBody{OK: true, Result: result, Herald: note})
}
