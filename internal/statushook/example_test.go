package statushook_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/herald-dev/herald/internal/statushook"
)

// A receiver of Herald's status callbacks. The secret is the endpoint's,
// as GET /v1/callbacks/endpoint?url=<this receiver's URL> shows it (an
// operate token). It verifies the signature over the raw body before
// parsing it, answers 2xx quickly, and drops a webhook-id it has seen:
// delivery is at least once.
func Example_receiver() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	var mu sync.Mutex
	seen := map[string]bool{}

	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		if err := statushook.Verify(secret, r.Header, body, time.Now(), 0); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		id := r.Header.Get(statushook.HeaderID)
		mu.Lock()
		repeat := seen[id]
		seen[id] = true
		mu.Unlock()
		if repeat {
			w.WriteHeader(http.StatusNoContent) // already handled
			return
		}
		var ev struct {
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
			Data      struct {
				TaskID string `json:"task_id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		fmt.Println(ev.Type, ev.Data.TaskID, id)
		w.WriteHeader(http.StatusNoContent)
	})

	// What Herald posts: the event, signed with the endpoint's secret.
	body := `{"type":"message.sent","timestamp":"2026-01-02T03:04:05Z","data":{"task_id":"0c6194bf"}}`
	h, _ := statushook.Headers(statushook.EventID("0c6194bf", statushook.TypeMessageSent), time.Now(), []byte(body), secret)
	for range 2 { // the second time is a retry the receiver drops
		req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		receiver.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// message.sent 0c6194bf msg_0c6194bf_message_sent
	// 204
	// 204
}
