package producer_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/producer"
)

// FuzzMessagesAPI posts arbitrary bodies (with an arbitrary Content-Type and
// Idempotency-Key) to the API. Whatever the input: no 5xx other than 503,
// every error is a JSON ErrorBody, and a task is stored exactly when the
// answer is 202 and not a replay, with a payload the worker can decode.
func FuzzMessagesAPI(f *testing.F) {
	h, b := newTestAPI(f, func(c *producer.Config) { c.MaxBodyBytes = 4 << 10 })
	f.Fuzz(func(t *testing.T, body, contentType, idemKey string) {
		header := http.Header{"Content-Type": {contentType}}
		if idemKey != "" {
			header.Set("Idempotency-Key", idemKey)
		}
		if k := b.taskKeys(); len(k) != 0 {
			t.Fatalf("tasks left over from an earlier input: %v", k)
		}
		rec := do(h, request{body: body, header: header})
		stored := b.taskKeys()

		switch {
		case rec.Code == http.StatusAccepted:
			res := accepted(t, rec)
			if res.Duplicate {
				t.Fatalf("a replay on an empty Redis: %s", rec.Body)
			}
			if len(stored) != 1 {
				t.Fatalf("202 but %d tasks stored: %v", len(stored), stored)
			}
			m, _ := b.task(t, res.Queue, res.TaskID)
			if idemKey != "" && m.IdempotencyKey != idemKey {
				t.Fatalf("stored idempotency key %q, header said %q", m.IdempotencyKey, idemKey)
			}
			if _, err := m.Encode(); err != nil {
				t.Fatalf("stored payload does not re-encode: %v", err)
			}
			// Start the next input on an empty Redis: delete the task and
			// Herald's cross-queue claim of its idempotency key, which
			// outlives the task by design.
			if err := b.inspector.DeleteTask(res.Queue, res.TaskID); err != nil {
				t.Fatal(err)
			}
			b.mr.Del(keys.Idempotency(res.TaskID))
			return
		case rec.Code >= 200 && rec.Code < 300:
			t.Fatalf("success status %d other than 202: %s", rec.Code, rec.Body)
		case rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable:
			t.Fatalf("server error %d: %s", rec.Code, rec.Body)
		}
		if len(stored) != 0 {
			t.Fatalf("status %d but tasks stored: %v", rec.Code, stored)
		}
		if !isJSON(rec) {
			t.Fatalf("status %d with Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		var eb struct {
			Error struct {
				Code    string            `json:"code"`
				Message string            `json:"message"`
				Fields  []jobs.FieldError `json:"fields"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error.Code == "" || eb.Error.Message == "" {
			t.Fatalf("status %d with error body %q (%v)", rec.Code, rec.Body, err)
		}
		for _, fe := range eb.Error.Fields {
			if fe.Field == "" || fe.Message == "" {
				t.Fatalf("field error without a name or message: %s", rec.Body)
			}
		}
	})
}
