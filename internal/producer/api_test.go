package producer_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
)

func TestPostMessage(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (http.Handler, *testBundle) {
		t.Helper()
		return newTestAPI(t, nil)
	}

	t.Run("accepted and stored with every field", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		before := time.Now().UTC()
		rec := post(h, `{"chat":"-1001234567890","text":"<b>disk</b> full","parse_mode":"html","queue":"critical",
			"disable_notification":true,"message_thread_id":7,"disable_link_preview":true,"protect_content":true}`)
		after := time.Now().UTC()
		res := accepted(t, rec)
		if res.Queue != jobs.QueueCritical || res.Duplicate {
			t.Fatalf("result %+v, want queue critical, not a duplicate", res)
		}
		if got := rec.Header().Get("Idempotent-Replayed"); got != "" {
			t.Errorf("Idempotent-Replayed %q on a fresh message", got)
		}
		m, info := b.task(t, jobs.QueueCritical, res.TaskID)
		if info.Type != jobs.TypeSendMessage || info.State != asynq.TaskStatePending {
			t.Errorf("task type %q state %v", info.Type, info.State)
		}
		if m.MaxRetry == nil || *m.MaxRetry != testMaxRetry || info.Timeout != testTimeout {
			t.Errorf("max_retry %v timeout %v, want %d and %v", m.MaxRetry, info.Timeout, testMaxRetry, testTimeout)
		}
		m.MaxRetry = nil
		want := jobs.SendMessage{
			V: jobs.PayloadVersion, Chat: "-1001234567890", Text: "<b>disk</b> full", ParseMode: "HTML",
			DisableNotification: true, MessageThreadID: 7, DisableLinkPreview: true, ProtectContent: true,
			From: "api", // the token's name, never the body's
		}
		created := m.CreatedAt
		m.CreatedAt = time.Time{}
		if m != want {
			t.Errorf("stored\n%+v\nwant\n%+v", m, want)
		}
		if created.Before(before.Truncate(time.Microsecond)) || created.After(after) || created.Location() != time.UTC {
			t.Errorf("created_at %v, want a UTC time between %v and %v", created, before, after)
		}
		if n := len(b.taskKeys()); n != 1 {
			t.Errorf("%d tasks stored, want 1", n)
		}
	})

	t.Run("defaults: default queue, plain text, canonical chat", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		res := accepted(t, post(h, `{"chat":" +42 ","text":"hi"}`))
		if res.Queue != jobs.QueueDefault {
			t.Fatalf("queue %q, want %q", res.Queue, jobs.QueueDefault)
		}
		m, _ := b.task(t, jobs.QueueDefault, res.TaskID)
		if m.Chat != "42" || m.ParseMode != "" || m.Text != "hi" {
			t.Fatalf("stored %+v", m)
		}
	})

	t.Run("parse modes are normalised", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		for in, want := range map[string]string{"html": "HTML", "HTML": "HTML", "markdownv2": "MarkdownV2", "none": "", "": ""} {
			res := accepted(t, post(h, `{"chat":"@alerts","text":"x","parse_mode":"`+in+`"}`))
			if m, _ := b.task(t, res.Queue, res.TaskID); m.ParseMode != want {
				t.Errorf("parse_mode %q stored as %q, want %q", in, m.ParseMode, want)
			}
		}
	})

	t.Run("text at the limit counted in UTF-16 units", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		// 16384 emoji are 32768 UTF-16 code units: exactly the limit.
		res := accepted(t, post(h, `{"chat":"42","text":"`+strings.Repeat("\U0001F525", jobs.DefaultMaxTextLen/2)+`"}`))
		b.task(t, res.Queue, res.TaskID)
	})

	t.Run("content type may be omitted or carry parameters", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		for _, ct := range []string{"", "application/json; charset=utf-8", "application/vnd.herald+json"} {
			rec := do(h, request{body: `{"chat":"42","text":"x"}`, header: http.Header{"Content-Type": {ct}}})
			accepted(t, rec)
		}
		if n := len(b.taskKeys()); n != 3 {
			t.Fatalf("%d tasks stored, want 3", n)
		}
	})
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (http.Handler, *testBundle) {
		t.Helper()
		return newTestAPI(t, nil)
	}
	body := `{"chat":"42","text":"disk full"}`

	t.Run("same header key twice stores once", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		first := do(h, request{body: body, header: hdr("Idempotency-Key", "alert-17")})
		r1 := accepted(t, first)
		if r1.Duplicate || first.Header().Get("Idempotent-Replayed") != "" {
			t.Fatalf("first answer is a replay: %+v %v", r1, first.Header())
		}
		if r1.TaskID != jobs.IdempotencyID("api", "alert-17") {
			t.Fatalf("task id %q, want %q", r1.TaskID, jobs.IdempotencyID("api", "alert-17"))
		}
		second := do(h, request{body: `{"chat":"42","text":"changed"}`, header: hdr("Idempotency-Key", "alert-17")})
		r2 := accepted(t, second)
		if !r2.Duplicate || r2.TaskID != r1.TaskID || r2.Queue != r1.Queue {
			t.Fatalf("second answer %+v, want a duplicate of %+v", r2, r1)
		}
		if got := second.Header().Get("Idempotent-Replayed"); got != "true" {
			t.Fatalf("Idempotent-Replayed %q, want true", got)
		}
		if k := b.taskKeys(); len(k) != 1 {
			t.Fatalf("stored %v, want one task", k)
		}
		m, _ := b.task(t, r1.Queue, r1.TaskID)
		if m.IdempotencyKey != "alert-17" || m.Text != "disk full" {
			t.Fatalf("stored %+v, want the first message with its key", m)
		}
	})

	t.Run("body key equal to header key", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		res := accepted(t, do(h, request{body: `{"chat":"42","text":"x","idempotency_key":"k"}`, header: hdr("Idempotency-Key", "k")}))
		if res.TaskID != jobs.IdempotencyID("api", "k") {
			t.Fatalf("task id %q, want the one of key k", res.TaskID)
		}
		b.task(t, res.Queue, res.TaskID)
	})

	t.Run("body key alone", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		accepted(t, post(h, `{"chat":"42","text":"x","idempotency_key":"only-body"}`))
		if res := accepted(t, post(h, `{"chat":"42","text":"x","idempotency_key":"only-body"}`)); !res.Duplicate {
			t.Fatalf("repeated body key not a duplicate: %+v", res)
		}
		if n := len(b.taskKeys()); n != 1 {
			t.Fatalf("%d tasks stored, want 1", n)
		}
	})

	t.Run("body key differing from header key", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		rec := do(h, request{body: `{"chat":"42","text":"x","idempotency_key":"a"}`, header: hdr("Idempotency-Key", "b")})
		eb := errorBody(t, rec, http.StatusBadRequest, httpapi.CodeInvalidField)
		if _, ok := fieldMessages(eb)["idempotency_key"]; !ok {
			t.Fatalf("fields %+v do not name idempotency_key", eb.Error.Fields)
		}
		b.requireNoTasks(t)
	})

	t.Run("header key that is not UTF-8", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		rec := do(h, request{body: body, header: hdr("Idempotency-Key", "alert-\xff")})
		eb := errorBody(t, rec, http.StatusBadRequest, httpapi.CodeInvalidField)
		if msg := fieldMessages(eb)["idempotency_key"]; !strings.Contains(msg, "UTF-8") {
			t.Fatalf("fields %+v do not say the key must be UTF-8", eb.Error.Fields)
		}
		b.requireNoTasks(t)
	})

	t.Run("header key over the length limit", func(t *testing.T) {
		t.Parallel()
		h, b := setup(t)
		rec := do(h, request{body: body, header: hdr("Idempotency-Key", strings.Repeat("k", 257))})
		eb := errorBody(t, rec, http.StatusBadRequest, httpapi.CodeInvalidField)
		if _, ok := fieldMessages(eb)["idempotency_key"]; !ok {
			t.Fatalf("fields %+v do not name idempotency_key", eb.Error.Fields)
		}
		b.requireNoTasks(t)
	})
}

func TestAuth(t *testing.T) {
	t.Parallel()
	body := `{"chat":"42","text":"x"}`
	tests := []struct {
		name   string
		auth   func(r *http.Request)
		wantOK bool
	}{
		{name: "missing", auth: func(*http.Request) {}},
		{name: "wrong bearer", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }},
		{name: "token prefix", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken[:5]) }},
		{name: "token with suffix", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken+"x") }},
		{name: "empty bearer", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") }},
		{name: "other scheme", auth: func(r *http.Request) { r.Header.Set("Authorization", "Token "+testToken) }},
		{name: "bare token", auth: func(r *http.Request) { r.Header.Set("Authorization", testToken) }},
		{name: "basic with wrong password", auth: func(r *http.Request) { r.SetBasicAuth(testToken, "nope") }},
		{name: "right bearer", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken) }, wantOK: true},
		{name: "lower-case scheme", auth: func(r *http.Request) { r.Header.Set("Authorization", "bearer "+testToken) }, wantOK: true},
		{name: "basic with token as password", auth: func(r *http.Request) { r.SetBasicAuth("ops", testToken) }, wantOK: true},
		{name: "basic with empty user", auth: func(r *http.Request) { r.SetBasicAuth("", testToken) }, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, b := newTestAPI(t, nil)
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/messages", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			tt.auth(r)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if tt.wantOK {
				accepted(t, rec)
				return
			}
			eb := errorBody(t, rec, http.StatusUnauthorized, httpapi.CodeUnauthorized)
			if !strings.Contains(eb.Error.Message, "HERALD_API_TOKEN") {
				t.Errorf("message %q does not say which token to send", eb.Error.Message)
			}
			if wa := strings.Join(rec.Header().Values("WWW-Authenticate"), "\n"); !strings.Contains(wa, "Bearer") {
				t.Errorf("WWW-Authenticate %q, want a Bearer challenge", wa)
			}
			b.requireNoTasks(t)
		})
	}

	t.Run("auth comes before body checks", func(t *testing.T) {
		t.Parallel()
		h, b := newTestAPI(t, nil)
		errorBody(t, do(h, request{body: `not json`, noAuth: true}), http.StatusUnauthorized, httpapi.CodeUnauthorized)
		b.requireNoTasks(t)
	})

	t.Run("auth disabled", func(t *testing.T) {
		t.Parallel()
		h, b := newTestAPI(t, func(c *producer.Config) { c.Keyring = httpapi.OpenKeyring() })
		res := accepted(t, do(h, request{body: body, noAuth: true}))
		b.task(t, res.Queue, res.TaskID)
	})
}

func TestNewAPIConfigErrors(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	tests := []struct {
		name string
		cfg  producer.Config
		want []string
	}{
		{name: "no token", cfg: producer.Config{Enqueuer: b.enq, Redis: b.rdb}, want: []string{"HERALD_API_TOKEN", "HERALD_AUTH_DISABLED"}},
		{name: "nothing", cfg: producer.Config{}, want: []string{"Enqueuer", "Redis", "HERALD_API_TOKEN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api, err := producer.NewAPI(tt.cfg)
			if err == nil {
				t.Fatalf("NewAPI(%+v) = %v, nil; want an error", tt.cfg, api)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
	if _, err := producer.NewAPI(producer.Config{Enqueuer: b.enq, Redis: b.rdb, Keyring: httpapi.OpenKeyring()}); err != nil {
		t.Fatalf("an open keyring refused: %v", err)
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, nil)
	t.Run("GET /v1/messages", func(t *testing.T) {
		t.Parallel()
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			rec := do(h, request{method: m})
			errorBody(t, rec, http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed)
			if got := rec.Header().Get("Allow"); got != "POST" {
				t.Errorf("%s: Allow %q, want POST", m, got)
			}
		}
	})
	t.Run("unknown paths", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"/", "/v2/messages", "/v1/messages/extra", "/v1/message"} {
			errorBody(t, do(h, request{path: p, body: `{"chat":"42","text":"x"}`}), http.StatusNotFound, httpapi.CodeNotFound)
			errorBody(t, do(h, request{method: http.MethodGet, path: p}), http.StatusNotFound, httpapi.CodeNotFound)
		}
	})
	b.requireNoTasks(t)
}

func TestSeveralFieldErrorsAtOnce(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, nil)
	rec := post(h, `{"chat":"@ab","text":"  ","parse_mode":"Markdown","message_thread_id":-1,"queue":"urgent"}`)
	eb := errorBody(t, rec, http.StatusBadRequest, httpapi.CodeInvalidField)
	got := fieldMessages(eb)
	for _, f := range []string{"chat", "text", "parse_mode", "message_thread_id", "queue"} {
		if msg, ok := got[f]; !ok || msg == "" {
			t.Errorf("field %q not reported with a message; got %v", f, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("reported %v, want exactly 5 fields", got)
	}
	b.requireNoTasks(t)
}

func TestRedisDown(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, nil)
	if rec := do(h, request{method: http.MethodGet, path: "/readyz"}); rec.Code != http.StatusOK {
		t.Fatalf("/readyz with Redis up: %d %s", rec.Code, rec.Body)
	}
	b.mr.Close()

	for _, idem := range []string{"", "key-1"} {
		rec := do(h, request{body: `{"chat":"42","text":"x"}`, header: hdr("Idempotency-Key", idem)})
		eb := errorBody(t, rec, http.StatusServiceUnavailable, httpapi.CodeUnavailable)
		if rec.Header().Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
		if !strings.Contains(eb.Error.Message, "retry") {
			t.Errorf("message %q does not tell the client to retry", eb.Error.Message)
		}
	}
	// Input errors are still reported as such while Redis is down.
	errorBody(t, post(h, `{"chat":"abc","text":"x"}`), http.StatusBadRequest, httpapi.CodeInvalidField)

	errorBody(t, do(h, request{method: http.MethodGet, path: "/readyz"}), http.StatusServiceUnavailable, httpapi.CodeUnavailable)
	if rec := do(h, request{method: http.MethodGet, path: "/livez"}); rec.Code != http.StatusOK {
		t.Fatalf("/livez with Redis down: %d", rec.Code)
	}

	if err := b.mr.Restart(); err != nil {
		t.Fatal(err)
	}
	b.requireNoTasks(t)
	if rec := do(h, request{method: http.MethodGet, path: "/readyz"}); rec.Code != http.StatusOK {
		t.Fatalf("/readyz after Redis came back: %d %s", rec.Code, rec.Body)
	}
	accepted(t, post(h, `{"chat":"42","text":"x"}`))
}

func TestHealthNeedsNoAuth(t *testing.T) {
	t.Parallel()
	h, _ := newTestAPI(t, nil)
	for _, p := range []string{"/livez", "/readyz"} {
		rec := do(h, request{method: http.MethodGet, path: p, noAuth: true})
		if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
			t.Errorf("GET %s = %d %q, want 200 ok", p, rec.Code, rec.Body)
		}
	}
}

func TestMonitoringAndMetricsMounts(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ui " + r.URL.Path)) })
	h, _ := newTestAPI(t, func(c *producer.Config) {
		c.Monitoring, c.MonitoringPath = ui, "/monitoring/"
		c.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		c.Registerer = reg
	})

	errorBody(t, do(h, request{method: http.MethodGet, path: "/monitoring/", noAuth: true}), http.StatusUnauthorized, httpapi.CodeUnauthorized)
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/monitoring/queues", nil)
	r.SetBasicAuth("ops", testToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || rec.Body.String() != "ui /monitoring/queues" {
		t.Fatalf("monitoring with basic auth: %d %q", rec.Code, rec.Body)
	}
	rec = do(h, request{method: http.MethodGet, path: "/monitoring", noAuth: true})
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/monitoring/" {
		t.Fatalf("GET /monitoring = %d Location %q, want a redirect to /monitoring/", rec.Code, rec.Header().Get("Location"))
	}

	accepted(t, post(h, `{"chat":"42","text":"x"}`))
	errorBody(t, post(h, `{}`), http.StatusBadRequest, httpapi.CodeInvalidField)
	errorBody(t, post(h, `{}`), http.StatusBadRequest, httpapi.CodeInvalidField)

	rec = do(h, request{method: http.MethodGet, path: "/metrics", noAuth: true})
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	for _, line := range []string{
		`herald_api_requests_total{code="202",route="/v1/messages"} 1`,
		`herald_api_requests_total{code="400",route="/v1/messages"} 2`,
	} {
		if !strings.Contains(rec.Body.String(), line) {
			t.Errorf("metrics lack %s:\n%s", line, rec.Body)
		}
	}
}
