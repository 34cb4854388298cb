package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
)

// fxSecretToken is a bot token that appears nowhere else, so any sighting
// of it (or of its secret half) in what a run produced is a leak.
const (
	fxSecretToken = "123456789:AAQ-distinctive-secret_TOKEN"
	fxSecretPart  = "AAQ-distinctive-secret_TOKEN"
	// The second bot's token, "pages", read from HERALD_BOT_PAGES_TOKEN.
	fxSecretPagesToken = "987654321:AAP-distinctive-pages_SECRET"
	fxSecretPagesPart  = "AAP-distinctive-pages_SECRET"
	// Webhook secrets of the same run, just as distinctive.
	fxSecretGitHub  = "gh-distinctive-webhook-SECRET"
	fxSecretSentry  = "sentry-distinctive-client-SECRET"
	fxSecretGrafana = "grafana-distinctive-hmac-SECRET"
)

// fxArtifact is one thing a run produced, to be searched for the token.
type fxArtifact struct {
	name string
	data string
}

// fxRedisDump reads every key of Redis with the read that fits its type and
// returns it as text: strings, hashes (asynq's task hashes among them),
// lists, sets, sorted sets and streams (the failure log among them).
func fxRedisDump(ctx context.Context, t *testing.T, rdb redis.UniversalClient) (string, int) {
	t.Helper()
	var sb strings.Builder
	n := 0
	iter := rdb.Scan(ctx, 0, "*", 500).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		n++
		typ, err := rdb.Type(ctx, k).Result()
		if err != nil {
			t.Fatalf("TYPE %s: %v", k, err)
		}
		var v any
		switch typ {
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "hash":
			v, err = rdb.HGetAll(ctx, k).Result()
		case "list":
			v, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "set":
			v, err = rdb.SMembers(ctx, k).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "stream":
			v, err = rdb.XRange(ctx, k, "-", "+").Result()
		case "none":
			continue // expired between SCAN and TYPE
		default:
			t.Fatalf("key %s has type %s, which the dump cannot read", k, typ)
		}
		if err != nil && err != redis.Nil {
			t.Fatalf("reading %s key %s: %v", typ, k, err)
		}
		fmt.Fprintf(&sb, "%s %s %v\n", typ, k, v)
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("SCAN: %v", err)
	}
	return sb.String(), n
}

// fxGet fetches url, with the producer's API token when authed, and fails
// the test unless the answer is 200.
func fxGet(ctx context.Context, t *testing.T, url, token string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(b)
}

// fxListenAddr finds the health/metrics address a worker logged at start.
func fxListenAddr(t *testing.T, p *fleet.Proc) string {
	t.Helper()
	f, err := os.Open(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" && line.Addr != "" {
			return line.Addr
		}
	}
	t.Fatalf("%s never logged its listen address", p.Name)
	return ""
}

// TestBotTokenNeverLeaks runs a producer and a worker with a distinctive bot
// token through deliveries, 5xx answers, a request that hangs past the
// client timeout and permanently blocked chats, and the producer with
// distinctive GitHub, Sentry and Grafana webhook secrets through signed and
// wrongly signed webhooks, then searches every log, every Redis key and
// value, both /metrics pages and the web UI's task API for the token and
// the secrets. Only the fake Bot API may ever see the token.
func TestBotTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("process scenario skipped in -short mode")
	}
	s := newStack(t, stackOptions{
		Fake: telegramfake.Config{Token: fxSecretToken, Tokens: map[string]string{"pages": fxSecretPagesToken}},
		WorkerEnv: []string{
			"LOG_LEVEL=debug", // the most talkative setting is the one to check
			"HERALD_BACKOFF_BASE=100ms",
			"TELEGRAM_TIMEOUT=1s",
		},
		ProducerEnv: []string{
			"LOG_LEVEL=debug",
			"HERALD_BOTS=default,pages",
			"HERALD_ALERTS_DEFAULT_CHAT=5000",
			"HERALD_GITHUB_WEBHOOK_SECRET=" + fxSecretGitHub,
			"HERALD_SENTRY_CLIENT_SECRET=" + fxSecretSentry,
			"HERALD_GRAFANA_WEBHOOK_SECRET=" + fxSecretGrafana,
		},
		Timeout: 90 * time.Second,
	})
	s.fleet.Token = fxSecretToken
	// Every bot's token is searched for: the worker serves two.
	s.fleet.Bots = map[string]string{"default": fxSecretToken, "pages": fxSecretPagesToken}
	w, err := s.fleet.StartWorker(s.ctx)
	if err != nil {
		t.Fatalf("starting the worker: %v", err)
	}

	const blockedChat = "6000"
	s.fake.SetChat(blockedChat, telegramfake.ChatBehavior{Blocked: true})
	s.fake.FailNext(2, telegramfake.FaultServerError)
	s.fake.FailNext(1, telegramfake.FaultBadGateway)
	s.fake.FailNext(1, telegramfake.FaultHang)
	s.fake.FailNext(2, telegramfake.FaultServerError, "pages")
	s.fake.FailNext(1, telegramfake.FaultHang, "pages")
	good := burst("secret-check", 12, 4)
	for _, m := range burst("secret-pages", 6, 3) {
		m.Bot = "pages"
		good = append(good, m)
	}
	var blocked []fleet.Message
	for i := 0; i < 3; i++ {
		blocked = append(blocked, fleet.Message{Chat: blockedChat, Text: fmt.Sprintf("to a blocked chat #%d", i)})
	}
	if _, err := s.fleet.PostAll(s.ctx, append(append([]fleet.Message{}, good...), blocked...), 4); err != nil {
		t.Fatalf("posting: %v", err)
	}
	fxWebhooksWithSecrets(t, s)
	s.waitDelivered(t, good)
	rdb := s.redis.Client(t)
	// The blocked messages end in the archive; asynq sends no signal for
	// that, so poll until the queues hold nothing but them.
	for {
		c := s.counts()
		if c.Active+c.Pending+c.Scheduled+c.Retry == 0 && c.Archived == len(blocked) {
			break
		}
		select {
		case <-s.ctx.Done():
			t.Fatalf("queues never settled with %d archived: %s", len(blocked), s.counts())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if st := s.fake.Stats(); st.Injected < 7 {
		t.Fatalf("fake injected %d faults, want 7 (2x500, 502, hang; for pages 2x500, hang): the failing paths did not run", st.Injected)
	}

	dump, nkeys := fxRedisDump(s.ctx, t, rdb)
	// The web UI shows task payloads to operators only (a sender's token
	// gets 403): read it as the operator who would see a leak.
	ui := fxGet(s.ctx, t, s.fleet.APIBase+"/monitoring/api/queues/default/archived_tasks", s.fleet.AdminToken)
	artifacts := []fxArtifact{
		{"process logs", s.fleet.Logs()},
		{"redis dump", dump},
		{"producer /metrics", fxGet(s.ctx, t, s.fleet.APIBase+"/metrics", "")},
		{"worker /metrics", fxGet(s.ctx, t, "http://"+fxListenAddr(t, w)+"/metrics", "")},
		{"web UI archived tasks", ui},
		{"web UI queues", fxGet(s.ctx, t, s.fleet.APIBase+"/monitoring/api/queues", s.fleet.APIToken)},
	}
	// The artifacts must hold the failures, or finding no token proves nothing.
	for _, want := range []struct{ artifact, text string }{
		{"process logs", "blocked"},
		{"process logs", "server_error"},
		{"process logs", "timeout"}, // the hang: Go's url.Error quotes the request URL
		{"redis dump", keys.Failures()},
		{"redis dump", "blocked"},
		{"web UI archived tasks", "blocked"},
		{"worker /metrics", "herald_"},
		{"worker /metrics", `bot="pages"`},
		{"process logs", "bad_signature"},
		{"redis dump", "v9.9.9"},
	} {
		for _, a := range artifacts {
			if a.name == want.artifact && !strings.Contains(a.data, want.text) {
				t.Errorf("%s do not mention %q; the run did not produce what this test searches", a.name, want.text)
			}
		}
	}
	total, leaks := 0, 0
	for _, a := range artifacts {
		total += len(a.data)
		for _, secret := range []string{fxSecretToken, fxSecretPart, fxSecretPagesToken, fxSecretPagesPart, fxSecretGitHub, fxSecretSentry, fxSecretGrafana} {
			if i := strings.Index(a.data, secret); i >= 0 {
				leaks++
				lo, hi := max(0, i-200), min(len(a.data), i+len(secret)+100)
				t.Errorf("%s contain a secret: ...%s...", a.name, a.data[lo:hi])
			}
		}
	}
	t.Logf("secrets: searched %d artifacts, %d bytes (%d Redis keys, %d log bytes); delivered=%d archived=%d faults=%d; token found %d times",
		len(artifacts), total, nkeys, len(artifacts[0].data), len(s.fake.Messages()), len(blocked), s.fake.Stats().Injected, leaks)
}

// fxWebhooksWithSecrets sends signed and wrongly signed webhooks to the
// producer, so that the accepted and the refused paths both run with the
// webhook secrets loaded.
func fxWebhooksWithSecrets(t *testing.T, s *stack) {
	t.Helper()
	send := func(path, body string, hdr map[string]string) int {
		req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.fleet.APIBase+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.fleet.APIToken)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	release := `{"action":"published","release":{"tag_name":"v9.9.9","html_url":"https://github.com/a/b/releases/v9.9.9"},"repository":{"full_name":"a/b"}}`
	gh := map[string]string{"X-GitHub-Event": "release", "X-GitHub-Delivery": "secret-run-1", "X-Hub-Signature-256": "sha256=" + fxSign(fxSecretGitHub, release)}
	if code := send("/v1/webhooks/github", release, gh); code != http.StatusAccepted {
		t.Fatalf("signed GitHub webhook answered %d, want 202", code)
	}
	gh["X-Hub-Signature-256"] = "sha256=" + fxSign(fxSecretGitHub+"x", release)
	gh["X-GitHub-Delivery"] = "secret-run-2"
	if code := send("/v1/webhooks/github", release, gh); code != http.StatusUnauthorized {
		t.Fatalf("wrongly signed GitHub webhook answered %d, want 401", code)
	}
	sentry := `{"action":"created","data":{"issue":{"id":"1","title":"boom"}}}`
	if code := send("/v1/webhooks/sentry", sentry, map[string]string{"Sentry-Hook-Resource": "issue", "Sentry-Hook-Signature": fxSign("nope", sentry)}); code != http.StatusUnauthorized {
		t.Fatalf("wrongly signed Sentry webhook answered %d, want 401", code)
	}
	grafana := `{"status":"firing","alerts":[{"status":"firing","labels":{"alertname":"x"}}]}`
	if code := send("/v1/webhooks/grafana", grafana, map[string]string{"X-Grafana-Alerting-Signature": fxSign("nope", grafana)}); code != http.StatusUnauthorized {
		t.Fatalf("wrongly signed Grafana webhook answered %d, want 401", code)
	}
}
