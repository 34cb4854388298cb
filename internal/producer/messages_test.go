package producer_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/statushook"
)

const (
	otherToken = "0ther-t0ken-for-tests"
	opsToken   = "0ps-t0ken-for-tests"
)

// newLedgerAPIWithMessages is the test API with the ledger's routes, a
// second sender token ("other") and an operator token ("ops").
func newLedgerAPIWithMessages(t *testing.T) (http.Handler, *testBundle) {
	t.Helper()
	b := newBundle(t)
	k, err := httpapi.NewKeyring(httpapi.NewToken("api", testToken, httpapi.ScopeSend),
		httpapi.NewToken("other", otherToken, httpapi.ScopeSend),
		httpapi.NewToken("ops", opsToken, httpapi.ScopeSend, httpapi.ScopeOperate))
	if err != nil {
		t.Fatal(err)
	}
	api, err := producer.NewAPI(producer.Config{
		Enqueuer: b.enq, Redis: b.rdb, Keyring: k, Logger: slog.New(slog.DiscardHandler),
		Messages: ledger.NewMessages(ledger.NewStore(b.rdb, ledger.Config{}), b.inspector, jobs.DefaultQueues(), nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	return api.Handler(), b
}

func status(t *testing.T, rec interface{ Result() *http.Response }, want int) ledger.Status {
	t.Helper()
	res := rec.Result()
	if res.StatusCode != want {
		t.Fatalf("status %d, want %d", res.StatusCode, want)
	}
	var st ledger.Status
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func as(token string) http.Header { return hdr("Authorization", "Bearer "+token) }

// TestMessageLedgerAPI: a queued message reads as queued to its token (by
// id and by idempotency key) and as unknown to another sender; its token
// cancels it, after which it reads as cancelled and a second cancel is too
// late; a settled record written by a worker is read back with its parts'
// links.
func TestMessageLedgerAPI(t *testing.T) {
	t.Parallel()
	h, _ := newLedgerAPIWithMessages(t)
	res := accepted(t, post(h, `{"chat":"-1001234567890","text":"disk full"}`))
	st := status(t, do(h, request{method: "GET", path: "/v1/messages/" + res.TaskID}), http.StatusOK)
	if st.State != ledger.StateQueued || st.Chat != "-1001234567890" || st.From != "api" || st.Bot != "default" || st.CreatedAt == nil {
		t.Fatalf("queued message reads %+v", st)
	}
	errorBody(t, do(h, request{method: "GET", path: "/v1/messages/" + res.TaskID, header: as(otherToken)}), http.StatusNotFound, httpapi.CodeNotFound)
	errorBody(t, do(h, request{method: "DELETE", path: "/v1/messages/" + res.TaskID, header: as(otherToken)}), http.StatusNotFound, httpapi.CodeNotFound)

	keyed := accepted(t, do(h, request{body: `{"chat":"5","text":"k"}`, header: hdr("Idempotency-Key", "order-1")}))
	if st := status(t, do(h, request{method: "GET", path: "/v1/messages?idempotency_key=order-1"}), http.StatusOK); st.ID != keyed.TaskID {
		t.Fatalf("lookup by key found %q, want %q", st.ID, keyed.TaskID)
	}
	// The same key from another token names another message: none here.
	errorBody(t, do(h, request{method: "GET", path: "/v1/messages?idempotency_key=order-1", header: as(otherToken)}), http.StatusNotFound, httpapi.CodeNotFound)
	eb := errorBody(t, do(h, request{method: "GET", path: "/v1/messages"}), http.StatusBadRequest, httpapi.CodeInvalidField)
	if fieldMessages(eb)["idempotency_key"] == "" {
		t.Fatalf("a lookup without a key: %+v; want the field named", eb)
	}

	if st := status(t, do(h, request{method: "DELETE", path: "/v1/messages/" + res.TaskID}), http.StatusOK); st.State != ledger.StateCancelled {
		t.Fatalf("cancel answered %+v", st)
	}
	if st := status(t, do(h, request{method: "GET", path: "/v1/messages/" + res.TaskID}), http.StatusOK); st.State != ledger.StateCancelled {
		t.Fatalf("a cancelled message reads %+v", st)
	}
	tooLate(t, do(h, request{method: "DELETE", path: "/v1/messages/" + res.TaskID}), ledger.StateCancelled)
	tooLate(t, do(h, request{method: "POST", path: "/v1/messages/" + res.TaskID + "/retry"}), ledger.StateCancelled)
}

// tooLate checks a 409: the too_late error and the message's status.
func tooLate(t *testing.T, rec *httptest.ResponseRecorder, state ledger.State) {
	t.Helper()
	var body struct {
		Error   httpapi.ErrorDetail `json:"error"`
		Message ledger.Status       `json:"message"`
	}
	if rec.Code != http.StatusConflict || json.NewDecoder(rec.Body).Decode(&body) != nil ||
		body.Error.Code != httpapi.CodeTooLate || body.Error.Message == "" || body.Message.State != state {
		t.Fatalf("answer %d %+v; want 409 too_late with the message %s", rec.Code, body, state)
	}
}

// TestSettledRecordReadBack: a worker's record of a sent message reads
// back with every part, and links where Telegram can form them; an
// operator reads any token's messages; the bulk retry needs operate.
func TestSettledRecordReadBack(t *testing.T) {
	t.Parallel()
	h, b := newLedgerAPIWithMessages(t)
	store := ledger.NewStore(b.rdb, ledger.Config{})
	rec := ledger.Record{State: ledger.StateSent, Chat: "-1009876", Queue: "default", From: "other", MessageIDs: []int{41, 42}, Settled: 1764648000000}
	if err := store.Put(context.Background(), keys.DefaultBot, "m1", rec); err != nil {
		t.Fatal(err)
	}
	errorBody(t, do(h, request{method: "GET", path: "/v1/messages/m1"}), http.StatusNotFound, httpapi.CodeNotFound)
	st := status(t, do(h, request{method: "GET", path: "/v1/messages/m1", header: as(opsToken)}), http.StatusOK)
	if st.State != ledger.StateSent || len(st.Parts) != 2 || st.Parts[1].MessageID != 42 || st.Parts[1].Link != "https://t.me/c/9876/42" || st.SettledAt == nil {
		t.Fatalf("sent record reads %+v", st)
	}
	errorBody(t, do(h, request{method: "POST", path: "/v1/messages/retry", body: `{}`}), http.StatusForbidden, httpapi.CodeForbidden)
	var out ledger.Replayed
	r := do(h, request{method: "POST", path: "/v1/messages/retry", body: `{"reason":"chat_blocked"}`, header: as(opsToken)})
	if r.Code != http.StatusOK || json.NewDecoder(r.Body).Decode(&out) != nil || len(out.Retried) != 0 {
		t.Fatalf("bulk retry with nothing failed: %d %s", r.Code, r.Body.String())
	}
	eb := errorBody(t, do(h, request{method: "POST", path: "/v1/messages/retry", body: `{"queue":"nope"}`, header: as(opsToken)}), http.StatusBadRequest, httpapi.CodeInvalidField)
	if fieldMessages(eb)["queue"] == "" {
		t.Fatalf("unknown queue: %+v", eb)
	}
}

// TestCallbackURLRefusedForInternalAddresses: a sender's callback_url to
// loopback or the cloud metadata address is a 400 naming the field, and
// nothing is stored; one to a public host is taken.
func TestCallbackURLRefusedForInternalAddresses(t *testing.T) {
	t.Parallel()
	secret, err := statushook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	h, b := newTestAPI(t, func(c *producer.Config) {
		ev, err := statushook.NewEmitter(c.Redis, statushook.Config{Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		c.Callbacks = ev
	})
	for _, u := range []string{"http://127.0.0.1:9000/hook", "https://127.0.0.1/hook", "http://169.254.169.254/latest/meta-data/", "https://[::1]/x", "https://10.0.0.5/x"} {
		eb := errorBody(t, post(h, `{"chat":"5","text":"x","callback_url":"`+u+`"}`), http.StatusBadRequest, httpapi.CodeInvalidField)
		if fieldMessages(eb)["callback_url"] == "" {
			t.Errorf("%s: %+v; want the field callback_url named", u, eb)
		}
	}
	b.requireNoTasks(t)
	res := accepted(t, post(h, `{"chat":"5","text":"x","callback_url":"https://app.example.com/herald"}`))
	if m, _ := b.task(t, "default", res.TaskID); m.CallbackURL != "https://app.example.com/herald" {
		t.Fatalf("stored callback_url %q", m.CallbackURL)
	}
	// Without callbacks configured, a callback_url is refused too.
	h2, _ := newTestAPI(t, nil)
	eb := errorBody(t, post(h2, `{"chat":"5","text":"x","callback_url":"https://app.example.com/herald"}`), http.StatusBadRequest, httpapi.CodeInvalidField)
	if !strings.Contains(fieldMessages(eb)["callback_url"], "HERALD_CALLBACK_SECRET") {
		t.Fatalf("callbacks off: %+v", eb)
	}
}
