package producer_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
)

// testToken is the API token of every test API.
const testToken = "t0ken-for-tests"

// Enqueue policy of the test APIs; not the defaults, so a test sees that the
// configured values reach the task.
const (
	testMaxRetry = 7
	testTimeout  = 45 * time.Second
)

// testBundle is what a test needs around the API under test.
type testBundle struct {
	mr        *miniredis.Miniredis
	rdb       *redis.Client
	enq       *jobs.Enqueuer
	inspector *asynq.Inspector
}

// newTestAPI starts a miniredis, an Enqueuer and the API on it, with mutate
// (if any) applied to the config first. Everything is closed at cleanup.
func newTestAPI(tb testing.TB, mutate func(*producer.Config)) (http.Handler, *testBundle) {
	tb.Helper()
	b := newBundle(tb)
	cfg := producer.Config{
		Enqueuer: b.enq,
		Redis:    b.rdb,
		Keyring:  testKeyring(tb, testToken, ""),
		Logger:   slog.New(slog.DiscardHandler),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	api, err := producer.NewAPI(cfg)
	if err != nil {
		tb.Fatalf("NewAPI: %v", err)
	}
	return api.Handler(), b
}

// testKeyring holds api as the token "api" (send) and, when set, admin as
// "admin" (every scope), as the producer builds them from its settings.
func testKeyring(tb testing.TB, api, admin string) *httpapi.Keyring {
	tb.Helper()
	tokens := []httpapi.Token{httpapi.NewToken("api", api, httpapi.ScopeSend)}
	if admin != "" {
		tokens = append(tokens, httpapi.NewToken("admin", admin, httpapi.AllScopes...))
	}
	k, err := httpapi.NewKeyring(tokens...)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// newBundle starts a miniredis with an Enqueuer and an inspector on it.
func newBundle(tb testing.TB) *testBundle {
	tb.Helper()
	mr := miniredis.RunT(tb)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	tb.Cleanup(func() { _ = rdb.Close() })
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{MaxRetry: testMaxRetry, Timeout: testTimeout})
	tb.Cleanup(func() { _ = enq.Close() })
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	tb.Cleanup(func() { _ = insp.Close() })
	return &testBundle{mr: mr, rdb: rdb, enq: enq, inspector: insp}
}

// taskKeys lists the asynq task hashes stored in any queue. It reads Redis
// directly, so it also sees queues asynq has not registered.
func (b *testBundle) taskKeys() []string {
	var out []string
	for _, k := range b.mr.Keys() {
		if strings.HasPrefix(k, "asynq:{") && strings.Contains(k, "}:t:") {
			out = append(out, k)
		}
	}
	return out
}

// requireNoTasks fails when anything was enqueued.
func (b *testBundle) requireNoTasks(tb testing.TB) {
	tb.Helper()
	if k := b.taskKeys(); len(k) != 0 {
		tb.Fatalf("tasks were stored: %v", k)
	}
}

// task returns the decoded payload and the info of a stored task.
func (b *testBundle) task(tb testing.TB, queue, id string) (jobs.SendMessage, *asynq.TaskInfo) {
	tb.Helper()
	info, err := b.inspector.GetTaskInfo(queue, id)
	if err != nil {
		tb.Fatalf("task %s not in queue %s: %v", id, queue, err)
	}
	m, err := jobs.Decode(info.Payload)
	if err != nil {
		tb.Fatalf("stored payload %s does not decode: %v", info.Payload, err)
	}
	return m, info
}

// request describes one HTTP request to the handler.
type request struct {
	method string // default POST
	path   string // default /v1/messages
	body   string
	header http.Header // merged over the defaults
	noAuth bool        // send no Authorization header
}

// do serves req on h and returns the recorded answer. By default it sends
// the test token as a bearer token and Content-Type application/json.
func do(h http.Handler, req request) *httptest.ResponseRecorder {
	if req.method == "" {
		req.method = http.MethodPost
	}
	if req.path == "" {
		req.path = "/v1/messages"
	}
	r := httptest.NewRequest(req.method, "http://127.0.0.1"+req.path, strings.NewReader(req.body))
	r.Header.Set("Content-Type", "application/json")
	if !req.noAuth {
		r.Header.Set("Authorization", "Bearer "+testToken)
	}
	for k, v := range req.header {
		r.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// post sends body to POST /v1/messages with default headers.
func post(h http.Handler, body string) *httptest.ResponseRecorder {
	return do(h, request{body: body})
}

// hdr builds a header from name/value pairs.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// isJSON reports whether the answer declares a JSON body.
func isJSON(rec *httptest.ResponseRecorder) bool {
	mt, _, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// errorBody checks that rec is a JSON error answer with status and code, and
// returns its body.
func errorBody(tb testing.TB, rec *httptest.ResponseRecorder, status int, code string) httpapi.ErrorBody {
	tb.Helper()
	if rec.Code != status {
		tb.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if !isJSON(rec) {
		tb.Fatalf("Content-Type %q, want application/json; body %s", rec.Header().Get("Content-Type"), rec.Body)
	}
	var eb httpapi.ErrorBody
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&eb); err != nil {
		tb.Fatalf("error body is not an ErrorBody: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		tb.Fatalf("error body holds more than one JSON value")
	}
	if eb.Error.Code != code {
		tb.Fatalf("error code %q, want %q (message %q)", eb.Error.Code, code, eb.Error.Message)
	}
	if eb.Error.Message == "" {
		tb.Fatalf("error %q has no message", code)
	}
	return eb
}

// fieldMessages maps each reported field to its message.
func fieldMessages(eb httpapi.ErrorBody) map[string]string {
	out := map[string]string{}
	for _, f := range eb.Error.Fields {
		out[f.Field] = f.Message
	}
	return out
}

// accepted checks a 202 answer and returns its body.
func accepted(tb testing.TB, rec *httptest.ResponseRecorder) jobs.Result {
	tb.Helper()
	if rec.Code != http.StatusAccepted {
		tb.Fatalf("status %d, want 202; body %s", rec.Code, rec.Body)
	}
	if !isJSON(rec) {
		tb.Fatalf("Content-Type %q, want application/json", rec.Header().Get("Content-Type"))
	}
	var raw map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		tb.Fatalf("body %s: %v", rec.Body, err)
	}
	if len(raw) != 3 {
		tb.Fatalf("body %s, want exactly task_id, queue and duplicate", rec.Body)
	}
	var res jobs.Result
	dec := json.NewDecoder(strings.NewReader(rec.Body.String()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		tb.Fatalf("body %s: %v", rec.Body, err)
	}
	if res.TaskID == "" || res.Queue == "" {
		tb.Fatalf("body %s lacks task_id or queue", rec.Body)
	}
	return res
}
