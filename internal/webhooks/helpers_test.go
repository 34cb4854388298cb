package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

var update = flag.Bool("update", false, "rewrite the .golden.json files from the alerts produced")

// Credentials of the test handlers.
const (
	testToken         = "tok-webhooks-test"
	testGitHubSecret  = "gh-secret-for-tests"
	testSentrySecret  = "sentry-client-secret-for-tests"
	testGrafanaSecret = "grafana-hmac-secret-for-tests"
	testGrafanaTS     = "X-Grafana-Alerting-Timestamp"
)

// testNow is the clock of the test handlers.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// recorder is a Dispatcher that keeps every batch and answers err (nil:
// one message per alert).
type recorder struct {
	mu      sync.Mutex
	batches [][]alerts.Alert
	err     error
}

func (r *recorder) Dispatch(_ context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, append([]alerts.Alert(nil), batch...))
	if r.err != nil {
		return alerts.Dispatched{}, r.err
	}
	var d alerts.Dispatched
	for i := range batch {
		d.Messages = append(d.Messages, jobs.Result{TaskID: "task-" + strconv.Itoa(i), Queue: jobs.QueueDefault})
	}
	return d, nil
}

// dispatched returns the alerts of every batch so far.
func (r *recorder) dispatched() []alerts.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []alerts.Alert
	for _, b := range r.batches {
		out = append(out, b...)
	}
	return out
}

func (r *recorder) requireNothing(tb testing.TB) {
	tb.Helper()
	if got := r.dispatched(); len(got) != 0 {
		tb.Fatalf("alerts were dispatched: %+v", got)
	}
}

// genericTable parses the generic webhook tests' routing file with the
// real parser.
func genericTable(tb testing.TB) *alerts.Table {
	tb.Helper()
	t, err := alerts.LoadRoutes(filepath.Join("testdata", "generic", "routes.yaml"))
	if err != nil {
		tb.Fatalf("routing file: %v", err)
	}
	return t
}

// lookupIn returns a genericLookup over a fixed table.
func lookupIn(t *alerts.Table) genericLookup {
	return func(name string) (genericMapper, bool) {
		g, ok := t.GenericWebhook(name)
		if !ok {
			return nil, false
		}
		return g, true
	}
}

// testKeyring holds token as the sender token "api".
func testKeyring(token string) *httpapi.Keyring {
	k, err := httpapi.NewKeyring(httpapi.NewToken("api", token, httpapi.ScopeSend))
	if err != nil {
		panic(err)
	}
	return k
}

// testConfig is the config of the test handlers: every receiver enabled,
// Grafana with a signature and a timestamp header.
func testConfig(tb testing.TB, d alerts.Dispatcher) Config {
	return Config{
		Dispatcher: d,
		Keyring:    testKeyring(testToken),
		Grafana:    GrafanaConfig{Secret: testGrafanaSecret, TimestampHeader: testGrafanaTS},
		GitHub:     GitHubConfig{Secret: testGitHubSecret},
		Sentry:     SentryConfig{Secret: testSentrySecret},
		Generic:    lookupIn(genericTable(tb)),
		Logger:     slog.New(slog.DiscardHandler),
		Clock:      func() time.Time { return testNow },
	}
}

// newHandler builds the handler of testConfig with mutate applied.
func newHandler(tb testing.TB, d alerts.Dispatcher, mutate func(*Config)) http.Handler {
	tb.Helper()
	cfg := testConfig(tb, d)
	if mutate != nil {
		mutate(&cfg)
	}
	h, err := Handler(cfg)
	if err != nil {
		tb.Fatalf("Handler: %v", err)
	}
	return h
}

// fixture reads testdata/<sender>/<name>.
func fixture(tb testing.TB, sender, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", sender, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// hmacHex returns hex(HMAC-SHA256(secret, parts...)), as the senders sign.
func hmacHex(secret string, parts ...[]byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		mac.Write(p)
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// Signing as each sender does.
func githubSignature(secret string, body []byte) string { return "sha256=" + hmacHex(secret, body) }
func sentrySignature(secret string, body []byte) string { return hmacHex(secret, body) }
func grafanaSignature(secret, ts string, body []byte) string {
	return hmacHex(secret, []byte(ts), []byte(":"), body)
}

// senders describes how a valid request of each receiver is made.
var senders = map[string]struct {
	path string
	// sign adds the credentials the test config expects.
	sign func(h http.Header, body []byte)
}{
	"alertmanager": {pathAlertmanager, func(h http.Header, _ []byte) { h.Set("Authorization", "Bearer "+testToken) }},
	"grafana": {pathGrafana, func(h http.Header, body []byte) {
		ts := strconv.FormatInt(testNow.Add(-30*time.Second).Unix(), 10)
		h.Set("Authorization", "Bearer "+testToken)
		h.Set(testGrafanaTS, ts)
		h.Set(defaultGrafanaSignatureHeader, grafanaSignature(testGrafanaSecret, ts, body))
	}},
	"github": {pathGitHub, func(h http.Header, body []byte) {
		h.Set(headerGitHubSignature, githubSignature(testGitHubSecret, body))
	}},
	"sentry": {pathSentry, func(h http.Header, body []byte) {
		h.Set(headerSentrySignature, sentrySignature(testSentrySecret, body))
	}},
	"generic": {pathGeneric + "uptime", func(h http.Header, _ []byte) { h.Set("Authorization", "Bearer "+testToken) }},
}

// req describes one request to a receiver.
type req struct {
	sender string
	path   string // default: the sender's
	method string // default POST
	body   []byte
	header map[string]string // set after signing; "" deletes
	// unsigned sends no credentials at all.
	unsigned bool
}

func serve(h http.Handler, rq req) *httptest.ResponseRecorder {
	s := senders[rq.sender]
	if rq.path == "" {
		rq.path = s.path
	}
	if rq.method == "" {
		rq.method = http.MethodPost
	}
	r := httptest.NewRequest(rq.method, "http://127.0.0.1"+rq.path, bytes.NewReader(rq.body))
	r.Header.Set("Content-Type", "application/json")
	if !rq.unsigned && s.sign != nil {
		s.sign(r.Header, rq.body)
	}
	for k, v := range rq.header {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// errorBody decodes a JSON error answer, failing when it is not one.
func errorBody(tb testing.TB, rec *httptest.ResponseRecorder) httpapi.ErrorDetail {
	tb.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Fatalf("Content-Type %q, want JSON; body %s", ct, rec.Body)
	}
	var eb httpapi.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error.Code == "" {
		tb.Fatalf("not a JSON error body (%v): %s", err, rec.Body)
	}
	return eb.Error
}

// requireError checks status and code of an error answer.
func requireError(tb testing.TB, rec *httptest.ResponseRecorder, status int, code string) httpapi.ErrorDetail {
	tb.Helper()
	if rec.Code != status {
		tb.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	e := errorBody(tb, rec)
	if e.Code != code {
		tb.Fatalf("code %q, want %q; body %s", e.Code, code, rec.Body)
	}
	return e
}

// requireIgnored checks a 202 {"ignored": true} answer.
func requireIgnored(tb testing.TB, rec *httptest.ResponseRecorder) ignored {
	tb.Helper()
	if rec.Code != http.StatusAccepted {
		tb.Fatalf("status %d, want 202; body %s", rec.Code, rec.Body)
	}
	var ig ignored
	if err := json.Unmarshal(rec.Body.Bytes(), &ig); err != nil || !ig.Ignored || ig.Reason == "" {
		tb.Fatalf("not an ignored answer (%v): %s", err, rec.Body)
	}
	return ig
}

// requireAccepted checks a 202 answer for n alerts.
func requireAccepted(tb testing.TB, rec *httptest.ResponseRecorder, n int) accepted {
	tb.Helper()
	if rec.Code != http.StatusAccepted {
		tb.Fatalf("status %d, want 202; body %s", rec.Code, rec.Body)
	}
	var a accepted
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		tb.Fatalf("not an accepted answer (%v): %s", err, rec.Body)
	}
	if a.Alerts != n {
		tb.Fatalf("accepted %d alerts, want %d: %s", a.Alerts, n, rec.Body)
	}
	return a
}

// checkGolden compares alerts with testdata/<sender>/<fixture>.golden.json
// (rewritten with -update).
func checkGolden(tb testing.TB, sender, fixtureName string, got []alerts.Alert) {
	tb.Helper()
	path := filepath.Join("testdata", sender, strings.TrimSuffix(fixtureName, ".json")+".golden.json")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(got); err != nil {
		tb.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		tb.Fatalf("alerts differ from %s:\ngot:\n%s\nwant:\n%s", path, buf.Bytes(), want)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
