package alerts

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

const apiTable = `
routes:
  - name: ops
    match: {source: "=~(api|cron)"}
    destinations: ["-1001", {chat: "-1002", thread: 9}]
  - name: db
    match: {labels: {team: db}}
    destinations: [5]
`

// apiBundle is an API handler on a Router on a miniredis.
type apiBundle struct {
	*redisBundle
	h http.Handler
}

func newAPI(t *testing.T, table string) *apiBundle {
	t.Helper()
	b := newRedisBundle(t)
	r, err := NewRouter(mustParse(t, table), b.enq, RouterConfig{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return &apiBundle{redisBundle: b, h: NewAPIHandler(r, 1<<16, quietLogger())}
}

func (b *apiBundle) post(body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/v1/alerts", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	return rec
}

func accepted(t *testing.T, rec *httptest.ResponseRecorder) Dispatched {
	t.Helper()
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d, want 202: %s", rec.Code, rec.Body)
	}
	var d Dispatched
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// apiError decodes an error answer and checks its status and code.
func apiError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) httpapi.ErrorDetail {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	var body httpapi.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("not a JSON error: %s", rec.Body)
	}
	if body.Error.Code != code {
		t.Fatalf("code %q, want %q: %s", body.Error.Code, code, rec.Body)
	}
	return body.Error
}

func fieldNames(d httpapi.ErrorDetail) map[string]bool {
	out := map[string]bool{}
	for _, f := range d.Fields {
		out[f.Field] = true
	}
	return out
}

func TestAPISingleAlert(t *testing.T) {
	t.Parallel()
	b := newAPI(t, apiTable)
	d := accepted(t, b.post(`{"title":"Disk <full>","body":"92% on /var","severity":"critical","source":"cron",
		"url":"https://grafana.test/d/1","labels":{"team":"db","host":"db-1"}}`, "Idempotency-Key", "cron-42"))
	if len(d.Messages) != 3 {
		t.Fatalf("messages %+v, want 3 (ops to 2 chats, db to 1)", d.Messages)
	}
	for _, m := range d.Messages {
		if m.Queue != jobs.QueueCritical || m.Duplicate {
			t.Errorf("result %+v, want queue critical", m)
		}
	}
	if n := len(b.taskKeys()); n != 3 {
		t.Fatalf("%d tasks in Redis, want 3", n)
	}
	m := b.task(t, jobs.QueueCritical, d.Messages[1].TaskID)
	if m.Chat != "-1002" || m.MessageThreadID != 9 || m.ParseMode != "HTML" || m.IdempotencyKey != "cron-42/ops/-1002:9" ||
		!strings.Contains(m.Text, `<a href="https://grafana.test/d/1">Disk &lt;full&gt;</a>`) || !strings.Contains(m.Text, "92% on /var") {
		t.Fatalf("stored %+v", m)
	}
	// The same request again stores nothing new.
	rec := b.post(`{"title":"Disk <full>","severity":"critical","source":"cron","labels":{"team":"db"}}`, "Idempotency-Key", "cron-42")
	d2 := accepted(t, rec)
	if len(d2.Messages) != 3 || !d2.Messages[0].Duplicate || rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat: %+v, header %q", d2, rec.Header().Get("Idempotent-Replayed"))
	}
	if n := len(b.taskKeys()); n != 3 {
		t.Fatalf("%d tasks after the repeat, want 3", n)
	}
}

func TestAPIBatch(t *testing.T) {
	t.Parallel()
	b := newAPI(t, apiTable)
	rec := b.post(`{"alerts":[{"title":"a","source":"api"},{"title":"b","labels":{"team":"db"},"fingerprint":"own"},
		{"title":"c","source":"cron","status":"resolved","time":"2026-01-02T03:04:05Z"}]}`, "Idempotency-Key", "batch-1")
	d := accepted(t, rec)
	if len(d.Messages) != 5 || len(b.taskKeys()) != 5 {
		t.Fatalf("%d results, %d tasks; want 5 and 5", len(d.Messages), len(b.taskKeys()))
	}
	keys := map[string]bool{}
	for i, res := range d.Messages {
		keys[b.task(t, res.Queue, res.TaskID).IdempotencyKey] = true
		if res.Queue != jobs.QueueDefault {
			t.Errorf("message %d in queue %q", i, res.Queue)
		}
	}
	for _, k := range []string{"batch-1/0/ops/-1001", "own/db/5", "batch-1/2/ops/-1002:9"} {
		if !keys[k] {
			t.Errorf("idempotency key %q missing from %v", k, keys)
		}
	}
}

func TestAPIBadRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		status     int
		code       string
		fields     []string
	}{
		{"missing title", `{"severity":"critical"}`, 400, httpapi.CodeInvalidField, []string{"title"}},
		{"bad fields", `{"title":"x","severity":"loud","url":"ftp://a","status":"gone"}`, 400, httpapi.CodeInvalidField, []string{"severity", "url", "status"}},
		{"unknown field", `{"title":"x","colour":"red"}`, 400, httpapi.CodeInvalidField, []string{"colour"}},
		{"wrong type", `{"title":"x","labels":["a"]}`, 400, httpapi.CodeInvalidField, []string{"labels"}},
		{"batch names the index", `{"alerts":[{"title":"ok"},{"title":"ok"},{"title":"ok"},{"title":" ","severity":"x"}]}`, 400,
			httpapi.CodeInvalidField, []string{"alerts[3].title", "alerts[3].severity"}},
		{"batch unknown field", `{"alerts":[{"title":"ok"},{"title":"x","sevrity":"info"}]}`, 400, httpapi.CodeInvalidField, []string{"alerts[1].sevrity"}},
		{"batch wrong type", `{"alerts":[{"title":1}]}`, 400, httpapi.CodeInvalidField, []string{"alerts[0].title"}},
		{"batch element not an object", `{"alerts":["x"]}`, 400, httpapi.CodeInvalidField, []string{"alerts[0]"}},
		{"batch bad time", `{"alerts":[{"title":"x","time":"yesterday"}]}`, 400, httpapi.CodeInvalidField, []string{"alerts[0].time"}},
		{"empty batch", `{"alerts":[]}`, 400, httpapi.CodeInvalidField, []string{"alerts"}},
		{"both shapes", `{"title":"x","alerts":[{"title":"y"}]}`, 400, httpapi.CodeInvalidField, []string{"alerts"}},
		{"too many", `{"alerts":[` + strings.Repeat(`{"title":"x"},`, maxAlertsPerRequest) + `{"title":"x"}]}`, 400, httpapi.CodeInvalidField, []string{"alerts"}},
		{"malformed", `{"title":`, 400, httpapi.CodeInvalidJSON, nil},
		{"two objects", `{"title":"a"}{"title":"b"}`, 400, httpapi.CodeInvalidJSON, nil},
		{"too large", `{"title":"` + strings.Repeat("x", 1<<16) + `"}`, 413, httpapi.CodeBodyTooLarge, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newAPI(t, apiTable)
			e := apiError(t, b.post(tt.body), tt.status, tt.code)
			got := fieldNames(e)
			for _, f := range tt.fields {
				if !got[f] {
					t.Errorf("field %q not named in %+v", f, e.Fields)
				}
			}
			if n := len(b.taskKeys()); n != 0 {
				t.Fatalf("%d tasks stored for a bad request", n)
			}
		})
	}
}

func TestAPIHeaderConflictsAndMethod(t *testing.T) {
	t.Parallel()
	b := newAPI(t, apiTable)
	e := apiError(t, b.post(`{"title":"x","fingerprint":"a"}`, "Idempotency-Key", "b"), 400, httpapi.CodeInvalidField)
	if !fieldNames(e)["fingerprint"] {
		t.Errorf("conflict does not name fingerprint: %+v", e)
	}
	e = apiError(t, b.post(`{"title":"x"}`, "Idempotency-Key", strings.Repeat("k", MaxFingerprintLen)), 400, httpapi.CodeInvalidField)
	if !fieldNames(e)["Idempotency-Key"] {
		t.Errorf("long header not named: %+v", e)
	}
	apiError(t, b.post(`{"title":"x"}`, "Content-Type", "text/plain"), 415, httpapi.CodeUnsupportedMedia)
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/alerts", nil))
	apiError(t, rec, 405, httpapi.CodeMethodNotAllowed)
	if rec.Header().Get("Allow") != "POST" {
		t.Errorf("Allow %q", rec.Header().Get("Allow"))
	}
	if n := len(b.taskKeys()); n != 0 {
		t.Fatalf("%d tasks stored", n)
	}
}

func TestAPINoRoute(t *testing.T) {
	t.Parallel()
	b := newAPI(t, apiTable)
	e := apiError(t, b.post(`{"alerts":[{"title":"routed","source":"api"},{"title":"lost","source":"sentry"}]}`), 422, httpapi.CodeNoRoute)
	if !strings.Contains(e.Message, "alerts[1]") || !strings.Contains(e.Message, "default: true") {
		t.Errorf("message %q should name the alert and the fix", e.Message)
	}
	if n := len(b.taskKeys()); n != 0 {
		t.Fatalf("%d tasks stored although one alert had no route", n)
	}
}

func TestAPIRedisDown(t *testing.T) {
	t.Parallel()
	b := newAPI(t, apiTable)
	b.mr.Close()
	rec := b.post(`{"title":"x","source":"api"}`)
	apiError(t, rec, 503, httpapi.CodeUnavailable)
	if rec.Header().Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	// Nothing was stored: Redis comes back empty-handed, and the retry
	// stores the alert.
	if err := b.mr.Restart(); err != nil {
		t.Fatal(err)
	}
	if n := len(b.taskKeys()); n != 0 {
		t.Fatalf("%d tasks stored during the outage", n)
	}
	d := accepted(t, b.post(`{"title":"x","source":"api"}`))
	if len(d.Messages) != 2 || len(b.taskKeys()) != 2 {
		t.Fatalf("retry: %+v, %d tasks", d, len(b.taskKeys()))
	}
}

// The alerts API takes key (the thread's identity) and image_url (a photo),
// alone and in a batch.
func TestAPIKeyAndImage(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	r, err := NewRouter(mustParse(t, "routes:\n  - name: ops\n    destinations: [1]\n"), b.enq, RouterConfig{Logger: quietLogger(), Redis: b.rdb})
	if err != nil {
		t.Fatal(err)
	}
	api := &apiBundle{redisBundle: b, h: NewAPIHandler(r, 1<<16, quietLogger())}
	d := accepted(t, api.post(`{"title":"CPU high","key":"cpu/db-1","image_url":"https://grafana.test/render/cpu.png"}`))
	m := b.task(t, d.Messages[0].Queue, d.Messages[0].TaskID)
	if m.Thread == nil || m.Thread.Key != "alert/cpu/db-1/ops" || m.Thread.Mode != jobs.ThreadOpen {
		t.Errorf("thread %+v", m.Thread)
	}
	if m.Photo == nil || m.Photo.URL != "https://grafana.test/render/cpu.png" {
		t.Errorf("photo %+v", m.Photo)
	}
	d = accepted(t, api.post(`{"alerts":[{"title":"CPU ok","key":"cpu/db-1","status":"resolved"}]}`))
	m = b.task(t, d.Messages[0].Queue, d.Messages[0].TaskID)
	if m.Thread == nil || *m.Thread != (jobs.Thread{Key: "alert/cpu/db-1/ops", Mode: jobs.ThreadReply, Close: true}) || m.Photo != nil {
		t.Errorf("resolution: thread %+v, photo %+v", m.Thread, m.Photo)
	}
	e := apiError(t, api.post(`{"title":"x","image_url":"file:///etc/passwd"}`), http.StatusBadRequest, httpapi.CodeInvalidField)
	if !fieldNames(e)["image_url"] {
		t.Errorf("fields %+v, want image_url", e.Fields)
	}
	e = apiError(t, api.post(`{"alerts":[{"title":"x","image_url":"nope"}]}`), http.StatusBadRequest, httpapi.CodeInvalidField)
	if !fieldNames(e)["alerts[0].image_url"] {
		t.Errorf("fields %+v, want alerts[0].image_url", e.Fields)
	}
}
