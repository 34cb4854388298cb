package producer_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/test/redistest"
)

// newBroadcastAPI is the test API with the broadcasts' routes and the
// tokens "api" and "other" (send) and "ops" (send, operate).
func newBroadcastAPI(t *testing.T) (http.Handler, *testBundle) {
	t.Helper()
	b := newBundle(t)
	k, err := httpapi.NewKeyring(httpapi.NewToken("api", testToken, httpapi.ScopeSend),
		httpapi.NewToken("other", otherToken, httpapi.ScopeSend),
		httpapi.NewToken("ops", opsToken, httpapi.ScopeSend, httpapi.ScopeOperate))
	if err != nil {
		t.Fatal(err)
	}
	svc := broadcast.New(b.rdb, b.enq, chats.NewStore(b.rdb), ledger.NewStore(b.rdb, ledger.Config{}), broadcast.Config{MaxChats: 1000})
	api, err := producer.NewAPI(producer.Config{Enqueuer: b.enq, Redis: b.rdb, Keyring: k, Logger: slog.New(slog.DiscardHandler),
		Mounts: broadcast.Mounts(svc, nil, slog.New(slog.DiscardHandler), nil)})
	if err != nil {
		t.Fatal(err)
	}
	return api.Handler(), b
}

func decodeInto[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return v
}

// TestBroadcastAPI: a sender's broadcast is stored (202, with its id),
// repeated with its Idempotency-Key as a duplicate, read and cancelled by
// its token and by an operator, and unknown to another sender.
func TestBroadcastAPI(t *testing.T) {
	t.Parallel()
	h, b := newBroadcastAPI(t)
	body := `{"chats":[1001,"1002","@Launch_news"],"text":"Hi {{name}}","defaults":{"name":"there"},"values":{"1001":{"name":"Ann"}}}`
	rec := do(h, request{path: "/v1/broadcasts", body: body, header: hdr("Idempotency-Key", "launch")})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	res := decodeInto[broadcast.Result](t, rec.Body.String())
	if res.Queued != 3 || res.Duplicate || res.ID == "" {
		t.Fatalf("POST answered %+v", res)
	}
	if n := len(b.taskKeys()); n != 3 {
		t.Fatalf("%d tasks stored, want 3", n)
	}
	rec = do(h, request{path: "/v1/broadcasts", body: body, header: hdr("Idempotency-Key", "launch")})
	if again := decodeInto[broadcast.Result](t, rec.Body.String()); rec.Code != http.StatusAccepted || !again.Duplicate ||
		again.ID != res.ID || rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat: %d %s", rec.Code, rec.Body)
	}

	path := "/v1/broadcasts/" + res.ID
	errorBody(t, do(h, request{method: "GET", path: path, header: as(otherToken)}), http.StatusNotFound, httpapi.CodeNotFound)
	errorBody(t, do(h, request{method: "DELETE", path: path, header: as(otherToken)}), http.StatusNotFound, httpapi.CodeNotFound)
	for _, tok := range []string{testToken, opsToken} {
		rec = do(h, request{method: "GET", path: path, header: as(tok)})
		st := decodeInto[broadcast.Status](t, rec.Body.String())
		if rec.Code != http.StatusOK || st.Queued != 3 || st.From != "api" || st.State != "sending" {
			t.Fatalf("GET as %s: %d %s", tok, rec.Code, rec.Body)
		}
	}
	rec = do(h, request{method: "DELETE", path: path, header: as(opsToken)})
	if st := decodeInto[broadcast.Status](t, rec.Body.String()); rec.Code != http.StatusAccepted || st.Cancelling != 3 {
		t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
	}
	errorBody(t, do(h, request{method: "PATCH", path: path}), http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed)
}

// TestBroadcastBadInput: a 400 names the field at fault: the chat at its
// index, too many chats, a callback_url while callbacks are off.
func TestBroadcastBadInput(t *testing.T) {
	t.Parallel()
	h, b := newBroadcastAPI(t)
	many := strings.Repeat(`1,`, 1000) + `2`
	for _, c := range []struct{ body, field, says string }{
		{`{"chats":[1,"x",3],"text":"hi"}`, "chats[1]", "neither a numeric chat id"},
		{`{"chats":[` + many + `],"text":"hi"}`, "chats", "the limit is 1000"},
		{`{"chats":[],"text":"hi"}`, "chats", "is required"},
		{`{"chats":[1],"text":"hi","bot":"No pe"}`, "bot", "is not a bot name"},
		{`{"chats":[1],"text":"hi","callback_url":"https://hooks.example.com/x"}`, "callback_url", "callbacks are off"},
		{`{"chats":[1],"text":"hi","CHATS":[2]}`, "CHATS", ""},
	} {
		eb := errorBody(t, do(h, request{path: "/v1/broadcasts", body: c.body}), http.StatusBadRequest, httpapi.CodeInvalidField)
		if msg, ok := fieldMessages(eb)[c.field]; !ok || !strings.Contains(msg, c.says) {
			t.Errorf("%.40s: fields %v; want %s saying %q", c.body, eb.Error.Fields, c.field, c.says)
		}
	}
	b.requireNoTasks(t)
}

// TestAudienceAPI: an audience is uploaded by PUT, broadcast to by name,
// and deleted; its name is the uploading token's own.
func TestAudienceAPI(t *testing.T) {
	t.Parallel()
	h, _ := newBroadcastAPI(t)
	rec := do(h, request{method: "PUT", path: "/v1/audiences/beta", body: `{"chats":[1,2,3,3]}`})
	if info := decodeInto[broadcast.AudienceInfo](t, rec.Body.String()); rec.Code != http.StatusOK || info.Chats != 3 {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	rec = do(h, request{path: "/v1/broadcasts", body: `{"audience":"beta","text":"hi"}`})
	if res := decodeInto[broadcast.Result](t, rec.Body.String()); rec.Code != http.StatusAccepted || res.Queued != 3 {
		t.Fatalf("POST to the audience: %d %s", rec.Code, rec.Body)
	}
	eb := errorBody(t, do(h, request{path: "/v1/broadcasts", body: `{"audience":"beta","text":"hi"}`, header: as(otherToken)}),
		http.StatusBadRequest, httpapi.CodeInvalidField)
	if fieldMessages(eb)["audience"] == "" {
		t.Errorf("another token's POST: %v", eb.Error.Fields)
	}
	if rec := do(h, request{method: "DELETE", path: "/v1/audiences/beta"}); rec.Code != http.StatusOK {
		t.Errorf("DELETE: %d %s", rec.Code, rec.Body)
	}
	errorBody(t, do(h, request{method: "DELETE", path: "/v1/audiences/beta"}), http.StatusNotFound, httpapi.CodeNotFound)
}

// TestBroadcast100kOverHTTP: POST /v1/broadcasts with 100,000 chats, on a
// real redis-server, answers 202 with every message stored; the time the
// whole request took (body parsing and checks included) is logged.
func TestBroadcast100kOverHTTP(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	k, err := httpapi.NewKeyring(httpapi.NewToken("api", testToken, httpapi.ScopeSend))
	if err != nil {
		t.Fatal(err)
	}
	svc := broadcast.New(rdb, enq, chats.NewStore(rdb), ledger.NewStore(rdb, ledger.Config{}), broadcast.Config{})
	api, err := producer.NewAPI(producer.Config{Enqueuer: enq, Redis: rdb, Keyring: k, Logger: slog.New(slog.DiscardHandler),
		Mounts: broadcast.Mounts(svc, nil, slog.New(slog.DiscardHandler), nil)})
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	body.WriteString(`{"text":"Herald 2.0 is out: <b>broadcasts</b>","parse_mode":"HTML","chats":[`)
	for i := range 100_000 {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(strconv.Itoa(500_000_000 + i))
	}
	body.WriteString(`]}`)
	start := time.Now()
	rec := do(api.Handler(), request{path: "/v1/broadcasts", body: body.String()})
	took := time.Since(start)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %.300s", rec.Code, rec.Body)
	}
	t.Logf("POST /v1/broadcasts with 100,000 chats (%d KiB) answered in %s", body.Len()>>10, took.Round(time.Millisecond))
	if res := decodeInto[broadcast.Result](t, rec.Body.String()); res.Queued != 100_000 {
		t.Fatalf("answered %+v", res)
	}
	if n := rdb.LLen(context.Background(), "asynq:{broadcast}:pending").Val(); n != 100_000 {
		t.Errorf("%d tasks pending, want 100000", n)
	}
}
