package reliability

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/webhooks"
	"github.com/herald-dev/herald/test/redistest"
)

// fxAPIToken is the producer's API token in the bad-input sweep.
const fxAPIToken = "fx-bad-input-api-token"

// fxAuth says how a bad request authenticates.
type fxAuth int

const (
	fxBearer    fxAuth = iota // the right bearer token
	fxNoAuth                  // no Authorization header
	fxWrongAuth               // a wrong bearer token
	fxBasicBad                // basic auth with a wrong password
	fxBasicUser               // basic auth with the token as user name, no password
)

// fxBadRequest is one request that must be refused.
type fxBadRequest struct {
	name        string
	method      string
	path        string
	body        string
	contentType string // "" means application/json for bodies, none otherwise
	auth        fxAuth
	header      map[string]string
	// jsonError: the answer must be a JSON error body (API routes).
	jsonError bool
}

// fxBadRequests lists malformed, oversized, wrongly typed, unauthenticated
// and misrouted requests for every endpoint of the producer.
func fxBadRequests() []fxBadRequest {
	post := func(name, body string) fxBadRequest {
		return fxBadRequest{name: "body/" + name, method: http.MethodPost, path: "/v1/messages", body: body, jsonError: true}
	}
	const ok = `{"chat":"5000","text":"hello"}`
	long := strings.Repeat("x", 32769)
	huge := `{"chat":"5000","text":"` + strings.Repeat("y", 2<<20) + `"}`
	reqs := []fxBadRequest{
		post("empty", ""),
		post("whitespace", " \n\t "),
		post("null", "null"),
		post("array", `[]`),
		post("array-of-object", `[`+ok+`]`),
		post("string", `"hello"`),
		post("number", `42`),
		post("bool", `true`),
		post("truncated", `{"chat":"5000","text":"hel`),
		post("unquoted-key", `{chat:"5000",text:"hello"}`),
		post("single-quotes", `{'chat':'5000','text':'hello'}`),
		post("trailing-comma", `{"chat":"5000","text":"hello",}`),
		post("trailing-object", ok+`{}`),
		post("trailing-garbage", ok+` x`),
		post("two-objects", ok+"\n"+ok),
		// A whole number is a chat id (as Telegram takes it); these are not.
		post("chat-number-fraction", `{"chat":5000.5,"text":"hello"}`),
		post("chat-number-exponent", `{"chat":5e3,"text":"hello"}`),
		post("chat-number-overflow", `{"chat":99999999999999999999,"text":"hello"}`),
		post("chat-number-zero", `{"chat":0,"text":"hello"}`),
		post("chat-bool", `{"chat":true,"text":"hello"}`),
		// Keys encoding/json would merge silently (issue 13).
		post("duplicate-key", `{"chat":"5000","text":"hello","chat":"5001"}`),
		post("case-variant-duplicate", `{"chat":"5000","CHAT":"5001","text":"hello"}`),
		post("case-variant-key", `{"Chat":"5000","text":"hello"}`),
		post("long-s-key", `{"chat":"5000","text":"<b>x","par\u017fe_mode":"none"}`), // ſ folds to s
		// Markup Telegram would refuse (issue 14).
		post("html-unclosed", `{"chat":"5000","text":"<b>disk full","parse_mode":"HTML"}`),
		post("html-mismatched", `{"chat":"5000","text":"<b>x</i>","parse_mode":"HTML"}`),
		post("html-bare-lt", `{"chat":"5000","text":"a < b","parse_mode":"HTML"}`),
		post("markdownv2-unescaped-dot", `{"chat":"5000","text":"v1.2 released","parse_mode":"MarkdownV2"}`),
		post("markdownv2-unclosed-bold", `{"chat":"5000","text":"*disk full","parse_mode":"MarkdownV2"}`),
		post("chat-object", `{"chat":{"id":5000},"text":"hello"}`),
		post("chat-null-text-missing", `{"chat":null}`),
		post("text-number", `{"chat":"5000","text":5}`),
		post("text-array", `{"chat":"5000","text":["a","b"]}`),
		post("text-object", `{"chat":"5000","text":{"a":1}}`),
		post("notification-string", `{"chat":"5000","text":"hello","disable_notification":"yes"}`),
		post("thread-string", `{"chat":"5000","text":"hello","message_thread_id":"7"}`),
		post("thread-float", `{"chat":"5000","text":"hello","message_thread_id":1.5}`),
		post("thread-overflow", `{"chat":"5000","text":"hello","message_thread_id":1e400}`),
		post("queue-number", `{"chat":"5000","text":"hello","queue":1}`),
		post("unknown-field", `{"chat":"5000","text":"hello","priority":"high"}`),
		post("max-retry-not-accepted", `{"chat":"5000","text":"hello","max_retry":1000}`),
		post("created-at-not-accepted", `{"chat":"5000","text":"hello","created_at":"2020-01-01T00:00:00Z"}`),
		post("missing-chat", `{"text":"hello"}`),
		post("missing-text", `{"chat":"5000"}`),
		post("empty-object", `{}`),
		post("empty-text", `{"chat":"5000","text":""}`),
		post("chat-letters", `{"chat":"abc","text":"hello"}`),
		post("chat-spaces", `{"chat":"50 00","text":"hello"}`),
		post("chat-short-username", `{"chat":"@ab","text":"hello"}`),
		post("chat-nul", `{"chat":"5000\u0000","text":"hello"}`),
		post("parse-mode-unknown", `{"chat":"5000","text":"hello","parse_mode":"XML"}`),
		post("queue-unknown", `{"chat":"5000","text":"hello","queue":"urgent"}`),
		post("text-too-long", `{"chat":"5000","text":"`+long+`"}`),
		post("body-over-limit", huge),
		post("deep-nesting", strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)),
		{name: "body/idempotency-conflict", method: http.MethodPost, path: "/v1/messages",
			body: `{"chat":"5000","text":"hello","idempotency_key":"a"}`, header: map[string]string{"Idempotency-Key": "b"}, jsonError: true},
		{name: "content-type/text-plain", method: http.MethodPost, path: "/v1/messages", body: ok, contentType: "text/plain", jsonError: true},
		{name: "content-type/form", method: http.MethodPost, path: "/v1/messages", body: "chat=5000&text=hello", contentType: "application/x-www-form-urlencoded", jsonError: true},
		{name: "content-type/garbage", method: http.MethodPost, path: "/v1/messages", body: ok, contentType: "application/json; ===", jsonError: true},
	}
	// Authentication: a valid body must not get through without the token.
	for _, a := range []struct {
		name string
		auth fxAuth
	}{{"none", fxNoAuth}, {"wrong-bearer", fxWrongAuth}, {"basic-wrong-password", fxBasicBad}, {"basic-token-as-user", fxBasicUser}} {
		reqs = append(reqs,
			fxBadRequest{name: "auth/messages-" + a.name, method: http.MethodPost, path: "/v1/messages", body: ok, auth: a.auth, jsonError: true},
			fxBadRequest{name: "auth/monitoring-" + a.name, method: http.MethodGet, path: "/monitoring/", auth: a.auth, jsonError: true},
			fxBadRequest{name: "auth/monitoring-api-" + a.name, method: http.MethodGet, path: "/monitoring/api/queues", auth: a.auth, jsonError: true},
			fxBadRequest{name: "auth/monitoring-pause-" + a.name, method: http.MethodPost, path: "/monitoring/api/queues/default:pause", auth: a.auth, jsonError: true},
			fxBadRequest{name: "auth/monitoring-delete-" + a.name, method: http.MethodDelete, path: "/monitoring/api/queues/default", auth: a.auth, jsonError: true},
		)
	}
	reqs = append(reqs, fxBadAlertsRequests()...)
	// Wrong methods on every fixed route.
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		reqs = append(reqs, fxBadRequest{name: "method/messages-" + m, method: m, path: "/v1/messages", body: ok, jsonError: true})
	}
	for _, p := range []string{"/livez", "/readyz", "/metrics"} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			reqs = append(reqs, fxBadRequest{name: "method" + p + "-" + m, method: m, path: p, body: ok})
		}
	}
	// Paths that do not exist.
	for _, p := range []string{"/", "/v1", "/v1/", "/v1/messages/", "/v1/messages/123", "/v2/messages", "/v1/MESSAGES",
		"/admin", "/api/v1/messages", "/.env", "/livez/x", "/metrics/x"} {
		reqs = append(reqs, fxBadRequest{name: "path" + p, method: http.MethodPost, path: p, body: ok, jsonError: true})
	}
	return reqs
}

// fxServeProducer serves the producer's handler (auth on, web UI mounted)
// on a loopback port, on the given Redis.
func fxServeProducer(t *testing.T, srv *redistest.Server, rdb redis.UniversalClient) string {
	t.Helper()
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Server: producer.ServerConfig{Listen: "127.0.0.1:0"}, Keyring: httpapi.KeyringConfig{APIToken: fxAPIToken}, Routes: alerts.RoutesConfig{DefaultChat: "5000"}, Webhooks: webhooks.Config{GitHub: webhooks.GitHubConfig{Secret: fxGitHubSecret}, Sentry: webhooks.SentryConfig{Secret: fxSentrySecret}, Grafana: webhooks.GrafanaConfig{Secret: fxGrafanaSecret}}}.WithDefaults()
	h, cleanup, err := app.ProducerHandler(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, app.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("app.ProducerHandler: %v", err)
	}
	ts := httptest.NewServer(h) // httptest listens on 127.0.0.1
	t.Cleanup(func() {
		ts.Close()
		cleanup()
	})
	return ts.URL
}

// fxRedisSnapshot returns every key with its type and DUMP serialisation.
func fxRedisSnapshot(ctx context.Context, t *testing.T, rdb redis.UniversalClient) map[string]string {
	t.Helper()
	out := map[string]string{}
	iter := rdb.Scan(ctx, 0, "*", 500).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		typ, _ := rdb.Type(ctx, k).Result()
		d, err := rdb.Dump(ctx, k).Result()
		if err != nil && err != redis.Nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		out[k] = typ + ":" + d
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("SCAN: %v", err)
	}
	return out
}

// TestBadInputIsRefusedAndEnqueuesNothing sends every request of
// fxBadRequests to a producer on a real Redis: each answer must be a 4xx
// (a JSON error body on the API routes), and Redis must hold exactly what it
// held before: the one control message and nothing else.
func TestBadInputIsRefusedAndEnqueuesNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := fxServeProducer(t, srv, rdb)

	client := &http.Client{
		Timeout:       20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	empty := fxRedisSnapshot(ctx, t, rdb)
	// Control: one good message is accepted and changes Redis, so the
	// comparison after the sweep can see an enqueue; it also gives the
	// unauthenticated web UI calls a queue to pause or delete.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages", strings.NewReader(`{"chat":"5000","text":"control"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+fxAPIToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("control request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("control request answered %s, want 202", resp.Status)
	}
	if info, err := asynq.NewInspectorFromRedisClient(rdb).GetQueueInfo("default"); err != nil || info.Pending != 1 {
		t.Fatalf("control message: queue default info %+v, %v; want 1 pending", info, err)
	}
	before := fxRedisSnapshot(ctx, t, rdb)
	rates := keys.TokenQuota("api")
	ratesBefore := rdb.HGetAll(ctx, rates).Val()
	if maps.Equal(empty, before) {
		t.Fatal("the accepted control message left Redis unchanged; the snapshot cannot detect an enqueue")
	}

	t.Run("sweep", func(t *testing.T) {
		for _, tc := range fxBadRequests() {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				var body io.Reader
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				req, err := http.NewRequestWithContext(ctx, tc.method, base+tc.path, body)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tc.contentType != "":
					req.Header.Set("Content-Type", tc.contentType)
				case tc.body != "":
					req.Header.Set("Content-Type", "application/json")
				}
				switch tc.auth {
				case fxBearer:
					req.Header.Set("Authorization", "Bearer "+fxAPIToken)
				case fxWrongAuth:
					req.Header.Set("Authorization", "Bearer "+fxAPIToken+"x")
				case fxBasicBad:
					req.SetBasicAuth("admin", "not-the-token")
				case fxBasicUser:
					req.SetBasicAuth(fxAPIToken, "")
				}
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", tc.method, tc.path, err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
				if resp.StatusCode < 400 || resp.StatusCode > 499 {
					t.Fatalf("%s %s answered %s, want 4xx; body %.200q", tc.method, tc.path, resp.Status, raw)
				}
				if tc.auth != fxBearer && resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s %s without a valid token answered %s, want 401", tc.method, tc.path, resp.Status)
				}
				if !tc.jsonError {
					return
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("%s %s: Content-Type %q, want application/json", tc.method, tc.path, ct)
				}
				var e struct {
					Error struct {
						Code    string `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
					t.Errorf("%s %s (%s): body %.200q is not a JSON error with code and message (%v)", tc.method, tc.path, resp.Status, raw, err)
				}
			})
		}
	})

	after := fxRedisSnapshot(ctx, t, rdb)
	// A token's rate quotas (alerts per minute) count every request it
	// makes, refused or not, as API rate limits do: that count is the one
	// key a bad request may change. Nothing else is stored.
	for f, v := range rdb.HGetAll(ctx, rates).Val() {
		if ratesBefore[f] != v && !strings.HasPrefix(f, quota.NameAlertsPerMinute+":") {
			t.Errorf("bad requests counted in the quota field %s (%q → %q); only the alerts' rate counts every request", f, ratesBefore[f], v)
		}
	}
	delete(before, rates)
	delete(after, rates)
	if !maps.Equal(before, after) {
		var changed []string
		for k, v := range after {
			if before[k] != v {
				changed = append(changed, k)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				changed = append(changed, k+" (deleted)")
			}
		}
		slices.Sort(changed)
		t.Errorf("bad requests changed Redis keys: %v", changed)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	queues, err := insp.Queues()
	if err != nil {
		t.Fatalf("listing asynq queues: %v", err)
	}
	for _, q := range queues {
		info, err := insp.GetQueueInfo(q)
		if err != nil {
			t.Fatalf("queue %s: %v", q, err)
		}
		want := 0
		if q == "default" {
			want = 1 // the control message
		}
		if info.Size != want || info.Paused {
			t.Errorf("queue %s holds %d tasks (paused=%v) after the bad-input sweep, want %d and not paused", q, info.Size, info.Paused, want)
		}
	}
	t.Logf("bad input: %d requests refused; Redis keys before=%d after=%d; asynq queues=%d",
		len(fxBadRequests()), len(before), len(after), len(queues))
}
