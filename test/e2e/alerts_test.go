package e2e_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
	"github.com/herald-dev/herald/test/redistest"
)

// alertsChat is where the producers' default route sends every alert.
const alertsChat = "-1001000000042"

// producers starts n producer processes with a default alert route, a
// fast heartbeat check and a GitHub secret, and returns their base URLs.
func producers(t *testing.T, s *fleettest.Stack, n int, extra ...string) []string {
	t.Helper()
	var bases []string
	for i := 0; i < n; i++ {
		env := append([]string{
			"HERALD_ALERTS_DEFAULT_CHAT=" + alertsChat,
			"HERALD_HEARTBEAT_CHECK_INTERVAL=200ms",
			"HERALD_GITHUB_WEBHOOK_SECRET=" + githubSecret,
		}, extra...)
		p, base, err := s.Fleet.StartProducerProc(s.Ctx, fmt.Sprintf("producer-%d", i+1), env...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = p.Signal(syscall.SIGTERM)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if p.Wait(ctx) != nil {
				p.Kill()
			}
		})
		bases = append(bases, base)
	}
	return bases
}

const githubSecret = "e2e-github-secret"

// call sends one request with the fleet's API token and returns the status
// and body.
// asAdmin is call's header for a request that needs more than a sender's
// token (silences need the operate scope).
func asAdmin(f *fleet.Fleet) map[string]string {
	return map[string]string{"Authorization": "Bearer " + f.AdminToken}
}

func call(t *testing.T, f *fleet.Fleet, method, url string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.APIToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond until it holds or the stack's deadline passes. The
// state it waits on lives in other processes and in Redis, which send no
// notification.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func textsTo(fake *telegramfake.Server, chat string) []string {
	var out []string
	for _, m := range fake.Messages() {
		if fmt.Sprint(m.ChatID) == chat {
			out = append(out, m.Text)
		}
	}
	return out
}

func countContaining(texts []string, sub string) int {
	n := 0
	for _, s := range texts {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// TestHeartbeatAlertsOnceAcrossReplicas runs two producer processes (each
// with its own heartbeat checker, every 200 ms) and three workers: a missed
// heartbeat gives exactly one overdue alert and its return exactly one
// recovery, both delivered to the routed chat.
func TestHeartbeatAlertsOnceAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 3, NoProducer: true, Fake: telegramfake.Config{TimeScale: scale}})
	bases := producers(t, s, 2)
	rdb := redis.NewClient(&redis.Options{Addr: s.Redis.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	b := &bundle{fleet: s.Fleet, fake: s.Fake, redis: s.Redis, insp: s.Insp, ctx: s.Ctx}

	if code, body := call(t, s.Fleet, http.MethodPut, bases[0]+"/v1/heartbeats/nightly-backup?interval=1s&grace=1s", nil, nil); code != http.StatusCreated {
		t.Fatalf("first ping: %d %s", code, body)
	}
	outboxEmpty := func() bool { n, err := rdb.ZCard(s.Ctx, keys.HeartbeatOutbox()).Result(); return err == nil && n == 0 }
	state := func() string {
		code, body := call(t, s.Fleet, http.MethodGet, bases[1]+"/v1/heartbeats/nightly-backup", nil, nil)
		var hb struct {
			State string `json:"state"`
		}
		if code == http.StatusOK {
			_ = json.Unmarshal([]byte(body), &hb)
		}
		return hb.State
	}
	waitFor(t, s.Ctx, "the overdue alert", func() bool {
		return countContaining(textsTo(s.Fake, alertsChat), "nightly-backup is overdue") > 0
	})
	// Once the heartbeat is down and no notification is pending anywhere,
	// no replica can produce another overdue alert for this outage.
	waitFor(t, s.Ctx, "the heartbeat to be down with nothing pending", func() bool { return state() == "down" && outboxEmpty() })

	if code, body := call(t, s.Fleet, http.MethodPost, bases[1]+"/v1/heartbeats/nightly-backup", nil, nil); code != http.StatusOK {
		t.Fatalf("ping after the outage: %d %s", code, body)
	}
	waitFor(t, s.Ctx, "the recovery", func() bool {
		return countContaining(textsTo(s.Fake, alertsChat), "nightly-backup is back") > 0
	})
	waitFor(t, s.Ctx, "nothing pending", outboxEmpty)
	if code, body := call(t, s.Fleet, http.MethodDelete, bases[0]+"/v1/heartbeats/nightly-backup", nil, asAdmin(s.Fleet)); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, body)
	}
	b.assertClean(t)

	texts := textsTo(s.Fake, alertsChat)
	if down, up := countContaining(texts, "nightly-backup is overdue"), countContaining(texts, "nightly-backup is back"); down != 1 || up != 1 || len(texts) != 2 {
		t.Fatalf("chat %s got %d messages (%d overdue, %d recovery), want exactly one of each:\n%s",
			alertsChat, len(texts), down, up, strings.Join(texts, "\n---\n"))
	}
	info, err := s.Insp.GetQueueInfo("critical")
	if err != nil || info.Processed != 2 {
		t.Errorf("critical queue processed %v (err %v), want both heartbeat alerts there", info, err)
	}
}

// TestAlertsAndWebhooksDeliverOnceAndSurviveRedisDown sends an alert twice
// with one fingerprint and a signed GitHub delivery twice through two
// producer processes: each arrives once. With Redis down the API answers
// 503 and stores nothing; after Redis returns (AOF) the retried alert is
// delivered, and nothing acknowledged before the crash is lost.
func TestAlertsAndWebhooksDeliverOnceAndSurviveRedisDown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 2, NoProducer: true, Redis: redistest.Options{AppendOnly: true},
		Fake: telegramfake.Config{TimeScale: scale}})
	bases := producers(t, s, 2)

	alert := []byte(`{"title":"Disk <90%> full on db-1","severity":"warning","source":"node","url":"https://grafana.example/d/x?a=1&b=2","labels":{"host":"db-1"},"fingerprint":"disk-db-1"}`)
	for _, base := range bases {
		if code, body := call(t, s.Fleet, http.MethodPost, base+"/v1/alerts", alert, nil); code != http.StatusAccepted {
			t.Fatalf("POST /v1/alerts: %d %s", code, body)
		}
	}
	release := []byte(`{"action":"published","release":{"tag_name":"v1.2.3","name":"v1.2.3","html_url":"https://github.com/acme/app/releases/tag/v1.2.3","body":"Fixes & features"},"repository":{"full_name":"acme/app","html_url":"https://github.com/acme/app"},"sender":{"login":"octocat"}}`)
	mac := hmac.New(sha256.New, []byte(githubSecret))
	mac.Write(release)
	sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	for _, base := range bases {
		code, body := call(t, s.Fleet, http.MethodPost, base+"/v1/webhooks/github", release, map[string]string{
			"X-GitHub-Event": "release", "X-GitHub-Delivery": "7f6c1e2a-0000-4000-8000-000000000001", "X-Hub-Signature-256": sig,
		})
		if code != http.StatusAccepted {
			t.Fatalf("GitHub webhook: %d %s", code, body)
		}
	}
	// A wrong signature is refused and enqueues nothing.
	if code, _ := call(t, s.Fleet, http.MethodPost, bases[0]+"/v1/webhooks/github", release, map[string]string{
		"X-GitHub-Event": "release", "X-GitHub-Delivery": "other", "X-Hub-Signature-256": "sha256=" + strings.Repeat("0", 64),
	}); code != http.StatusUnauthorized {
		t.Fatalf("badly signed GitHub webhook answered %d, want 401", code)
	}
	waitFor(t, s.Ctx, "the alert and the release", func() bool {
		texts := textsTo(s.Fake, alertsChat)
		return countContaining(texts, "db-1") > 0 && countContaining(texts, "v1.2.3") > 0
	})

	s.Redis.Kill()
	down := []byte(`{"title":"Queue backlog growing","severity":"critical","fingerprint":"backlog-1"}`)
	if code, body := call(t, s.Fleet, http.MethodPost, bases[0]+"/v1/alerts", down, nil); code != http.StatusServiceUnavailable {
		t.Fatalf("POST /v1/alerts with Redis down: %d %s, want 503", code, body)
	}
	s.Redis.Restart(t)
	waitFor(t, s.Ctx, "the producer to see Redis again", func() bool {
		code, _ := call(t, s.Fleet, http.MethodPost, bases[1]+"/v1/alerts", down, nil)
		return code == http.StatusAccepted
	})
	waitFor(t, s.Ctx, "the alert sent after the restart", func() bool {
		return countContaining(textsTo(s.Fake, alertsChat), "Queue backlog growing") > 0
	})
	b := &bundle{fleet: s.Fleet, fake: s.Fake, redis: s.Redis, insp: s.Insp, ctx: s.Ctx}
	b.assertClean(t)
	texts := textsTo(s.Fake, alertsChat)
	for sub, want := range map[string]int{"db-1": 1, "v1.2.3": 1, "Queue backlog growing": 1} {
		if got := countContaining(texts, sub); got != want {
			t.Errorf("%d messages mention %q, want %d:\n%s", got, sub, want, strings.Join(texts, "\n---\n"))
		}
	}
	if len(texts) != 3 {
		t.Errorf("chat got %d messages, want 3:\n%s", len(texts), strings.Join(texts, "\n---\n"))
	}
}

// TestHeartbeatAlertOnTimeDuringBurst misses a heartbeat while a burst of
// 2,000 messages over 100 chats saturates the bot-wide limit: the overdue
// alert (critical queue, a priority queue of the limiter) must not wait for
// the burst to drain, and no 429 may result. The check is
// on order, not time: when the alert reaches Telegram, at least a quarter of
// the burst must still be undelivered (the alert falls due about 2 s into a
// burst that needs at least 6.6 s at the bot-wide limit).
func TestHeartbeatAlertOnTimeDuringBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 3, Fake: telegramfake.Config{TimeScale: scale},
		ProducerEnv: []string{"HERALD_ALERTS_DEFAULT_CHAT=" + alertsChat, "HERALD_HEARTBEAT_CHECK_INTERVAL=200ms"}})
	if code, body := call(t, s.Fleet, http.MethodPut, s.Fleet.APIBase+"/v1/heartbeats/etl?interval=1s&grace=1s", nil, nil); code != http.StatusCreated {
		t.Fatalf("first ping: %d %s", code, body)
	}
	burst := fleettest.Burst("bg", 2000, 100)
	if _, err := s.Fleet.PostAll(s.Ctx, burst, 16); err != nil {
		t.Fatal(err)
	}
	if err := s.Fake.Wait(s.Ctx, len(burst)+1); err != nil {
		t.Fatalf("waiting for the burst and the alert: %v (got %d)", err, len(s.Fake.Messages()))
	}
	got := s.Fake.Messages()
	alertAt := -1
	for i, m := range got {
		if strings.Contains(m.Text, "Heartbeat etl is overdue") {
			alertAt = i
			break
		}
	}
	if alertAt < 0 {
		t.Fatalf("no overdue alert among %d messages", len(got))
	}
	after := len(got) - alertAt - 1
	t.Logf("overdue alert was message %d of %d; %d burst messages came after it", alertAt+1, len(got), after)
	if after < len(burst)/4 {
		t.Errorf("only %d of %d burst messages were delivered after the overdue alert; it waited for the burst", after, len(burst))
	}
	if st := s.Fake.Stats(); st.TooMany != 0 {
		t.Errorf("the fake answered %d 429s; going ahead must stay within Telegram's tolerance", st.TooMany)
	}
}

// TestSIGHUPReloadsRoutes runs a producer process on a routing file,
// rewrites the file and sends SIGHUP: later alerts follow the new routes; a
// broken file on the next SIGHUP is refused and the routes in use stay.
func TestSIGHUPReloadsRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 1, NoProducer: true, Fake: telegramfake.Config{TimeScale: scale}})
	routes := filepath.Join(t.TempDir(), "routes.yaml")
	writeRoutes := func(body string) {
		t.Helper()
		if err := os.WriteFile(routes, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	route := func(chat string) string {
		return "routes:\n  - name: all\n    default: true\n    parse_mode: plain\n    destinations:\n      - chat: \"" + chat + "\"\n"
	}
	writeRoutes(route("-1001000000101"))
	p, base, err := s.Fleet.StartProducerProc(s.Ctx, "producer-hup", "HERALD_ROUTES_FILE="+routes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	send := func(title string) {
		t.Helper()
		if code, body := call(t, s.Fleet, http.MethodPost, base+"/v1/alerts", []byte(`{"title":"`+title+`"}`), nil); code != http.StatusAccepted {
			t.Fatalf("POST /v1/alerts: %d %s", code, body)
		}
	}
	// reloaded waits for the producer to log the outcome of the n-th reload.
	reloaded := func(n int, msg string) {
		t.Helper()
		waitFor(t, s.Ctx, fmt.Sprintf("%q in the producer log", msg), func() bool {
			b, _ := os.ReadFile(p.Log)
			return strings.Count(string(b), msg) >= n
		})
	}
	send("first")
	writeRoutes(route("-1001000000102"))
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	reloaded(1, "routing file reloaded")
	send("second")
	writeRoutes("routes:\n  - name: all\n    default: true\n    destinations: []\n  bogus: [\n")
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	reloaded(1, "routing file not reloaded")
	send("third")
	waitFor(t, s.Ctx, "three alerts", func() bool { return len(s.Fake.Messages()) >= 3 })
	got := map[string]string{}
	for _, m := range s.Fake.Messages() {
		got[strings.TrimSpace(m.Text)] = fmt.Sprint(m.ChatID)
	}
	want := map[string]string{"first": "-1001000000101", "second": "-1001000000102", "third": "-1001000000102"}
	for title, chat := range want {
		found := false
		for text, c := range got {
			if strings.Contains(text, title) {
				found = true
				if c != chat {
					t.Errorf("alert %q went to chat %s, want %s", title, c, chat)
				}
			}
		}
		if !found {
			t.Errorf("alert %q not delivered; got %v", title, got)
		}
	}
}
