package local_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/local"
	"github.com/herald-dev/herald/internal/settings"
)

// sample is a valid value of a setting other than its default, with the
// settings it needs beside it (a file's setting names a file that exists).
type sample struct {
	value string
	with  map[string]string
}

// samples returns a sample of every producer and worker setting but local
// mode's overrides; files are made in dir.
func samples(t *testing.T, dir string) map[string]sample {
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	v := func(s string) sample { return sample{value: s} }
	return map[string]sample{
		"HERALD_REDIS_WAIT_REPLICAS": v("1"), "HERALD_REDIS_WAIT_TIMEOUT": v("2s"), "LOG_LEVEL": v("debug"), "LOG_FORMAT": v("json"),
		"HERALD_API_TOKEN": v("api-token-1"), "HERALD_API_TOKEN_FILE": v(file("api", "api-token-2")),
		"HERALD_TOKENS_FILE": v(filepath.Join(dir, "tokens.yaml")), "HERALD_DEFAULT_QUEUE": v("low"),
		"HERALD_QUEUES": v("critical=5,default=2"), "HERALD_MAX_RETRY": v("3"), "HERALD_TASK_TIMEOUT": v("30s"),
		"HERALD_IDEMPOTENCY_WINDOW": v("1h"), "HERALD_MAX_TEXT_LEN": v("4096"), "HERALD_MAX_BODY_BYTES": v("2MiB"),
		"HERALD_MONITORING_PATH": v("/ui"), "HERALD_MONITORING_READONLY": v("true"),
		"HERALD_ADMIN_TOKEN": v("admin-token-1"), "HERALD_ADMIN_TOKEN_FILE": v(file("admin", "admin-token-2")),
		"HERALD_ROUTES_FILE": v(filepath.Join(dir, "routes.yaml")), "HERALD_ALERTS_DEFAULT_CHAT": v("-1001"),
		"HERALD_GITHUB_WEBHOOK_SECRET": v("gh-1"), "HERALD_GITHUB_WEBHOOK_SECRET_FILE": v(file("gh", "gh-2")),
		"HERALD_SENTRY_CLIENT_SECRET": v("se-1"), "HERALD_SENTRY_CLIENT_SECRET_FILE": v(file("se", "se-2")),
		"HERALD_GRAFANA_WEBHOOK_SECRET": v("gr-1"), "HERALD_GRAFANA_WEBHOOK_SECRET_FILE": v(file("gr", "gr-2")),
		"HERALD_GRAFANA_TIMESTAMP_HEADER": {"X-Grafana-Alerting-Signature-Timestamp", map[string]string{"HERALD_GRAFANA_WEBHOOK_SECRET": "gr-1"}},
		"HERALD_TELEGRAM_WEBHOOK_SECRET":  v("tg_1"), "HERALD_TELEGRAM_WEBHOOK_SECRET_FILE": v(file("tg", "tg_2")),
		"HERALD_WEBHOOK_MAX_BODY_BYTES": v("64KiB"), "HERALD_HEARTBEAT_CHECK_INTERVAL": v("2s"), "HERALD_MAX_HEARTBEATS": v("50"),
		"HERALD_METRICS_TOKEN": v("scrape-1"), "HERALD_METRICS_TOKEN_FILE": v(file("metrics", "scrape-2")), "HERALD_METRICS_CACHE": v("10s"),
		"HERALD_WORKER_METRICS_TOKEN": v("wscrape-1"), "HERALD_WORKER_METRICS_TOKEN_FILE": v(file("wmetrics", "wscrape-2")),
		"HERALD_FEEDS_FILE": v(filepath.Join(dir, "feeds.yaml")), "HERALD_FEEDS_CONCURRENCY": v("8"),

		"TELEGRAM_BOT_TOKEN": v("123456:real-token"), "TELEGRAM_BOT_TOKEN_FILE": v(file("bot", "123456:file-token")),
		"TELEGRAM_TIMEOUT": v("20s"), "TELEGRAM_RETRY_AFTER_UNIT": v("500ms"), "HERALD_CONCURRENCY": v("8"), "HERALD_WAITERS": v("32"),
		"HERALD_WAIT_LONG": v("1m"), "HERALD_STRICT_PRIORITY": v("true"), "HERALD_SHUTDOWN_TIMEOUT": v("10s"),
		"HERALD_BACKOFF_BASE": v("1s"), "HERALD_BACKOFF_CAP": v("5m"), "HERALD_SENT_RETENTION": v("24h"),
		"HERALD_LEASE_RECOVERY_AFTER": v("20s"), "HERALD_LIMIT_BOT": v("20/s"), "HERALD_LIMIT_PRIVATE": v("2/s"),
		"HERALD_LIMIT_GROUP": v("1/s,10/m"), "HERALD_PRIORITY_QUEUES": v("default"), "HERALD_LIMIT_PRIORITY": v("2/s"),
		"HERALD_LIMIT_QUEUES": v("low=1/s"), "HERALD_LIMIT_GUARD": v("10ms"), "HERALD_PAUSE_BOT_MAX": v("5s"),
		"HERALD_DIGEST_GRACE_PERIOD": v("5s"), "HERALD_DIGEST_MAX_DELAY": v("20s"), "HERALD_DIGEST_MAX_SIZE": v("50"),
		"HERALD_DIGEST_MAX_MESSAGES": v("2"), "HERALD_DIGEST_RECLAIM_AFTER": v("40s"), "HERALD_TELEGRAM_UPDATES": v("false"),
		"HERALD_TELEGRAM_WEBHOOK_URL": {"https://herald.example.com", map[string]string{"HERALD_TELEGRAM_WEBHOOK_SECRET": "tg_1"}},

		"HERALD_CALLBACK_SECRET":      v("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
		"HERALD_CALLBACK_SECRET_FILE": v(file("callbacks", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")),
		"HERALD_CALLBACK_ALLOW":       v("10.0.0.0/8"), "HERALD_CALLBACK_RETRY_SCHEDULE": v("1s,1m"),
		"HERALD_BROADCAST_MAX_BODY_BYTES": v("16MiB"), "HERALD_PAID_LIMIT": v("500/s"), "HERALD_LANE_QUEUES": v("low"),
	}
}

// settingRE finds where each ENV=value of a rendered config starts.
var settingRE = regexp.MustCompile(`(?:^| )([A-Z][A-Z0-9_]*)=`)

// rendered splits a config's String (ENV=value ENV=value ...) by setting.
func rendered(s fmt.Stringer) map[string]string {
	text := s.String()
	out := map[string]string{}
	idx := settingRE.FindAllStringSubmatchIndex(text, -1)
	for i, m := range idx {
		end := len(text)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		out[text[m[2]:m[3]]] = text[m[1]:end]
	}
	return out
}

// TestLocalModeReadsEverySetting walks every setting of the producer and
// the worker through local mode, one at a time: set to a value other than
// its default, it must reach local mode's config as it reaches the
// binary's, unless it is one of the overrides the package doc lists.
func TestLocalModeReadsEverySetting(t *testing.T) {
	t.Parallel()
	table := samples(t, t.TempDir())
	const redisURL, apiURL = "redis://127.0.0.1:6390/0", "http://127.0.0.1:1"
	type binary struct {
		name     string
		settings []string
		load     func(getenv func(string) string) (fmt.Stringer, error)
		local    func(settings.Producer, settings.Worker) fmt.Stringer
	}
	envs := func(f func() []string) []string { return f() }
	binaries := []binary{
		{"producer", envs(func() (out []string) {
			for _, s := range settings.ProducerSettings() {
				out = append(out, s.Env)
			}
			return out
		}), func(g func(string) string) (fmt.Stringer, error) { return settings.LoadProducer(nil, g) },
			func(p settings.Producer, _ settings.Worker) fmt.Stringer { return p }},
		{"worker", envs(func() (out []string) {
			for _, s := range settings.WorkerSettings() {
				out = append(out, s.Env)
			}
			return out
		}), func(g func(string) string) (fmt.Stringer, error) { return settings.LoadWorker(nil, g) },
			func(_ settings.Producer, w settings.Worker) fmt.Stringer { return w }},
	}
	for _, b := range binaries {
		defaults, err := b.load(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, env := range b.settings {
			if slices.Contains(local.Overridden, env) {
				continue
			}
			s, ok := table[env]
			if !ok {
				// A setting without a row: a value derived from its
				// default (twice a duration, one more than a number, the
				// other boolean); the binary must take it.
				if s.value, ok = derivedSample(b.name, env); !ok {
					t.Errorf("%s: %s has no sample and none can be derived from its default; add one to the table", b.name, env)
					continue
				}
			}
			vars := map[string]string{env: s.value}
			for k, v := range s.with {
				vars[k] = v
			}
			getenv := func(k string) string { return vars[k] }
			want, err := b.load(getenv)
			if err != nil {
				t.Errorf("%s: %s=%s: the binary refuses it: %v", b.name, env, s.value, err)
				continue
			}
			if rendered(want)[env] == rendered(defaults)[env] {
				t.Errorf("%s: the sample %s=%s is the default; pick another value", b.name, env, s.value)
			}
			p, w, err := local.Configs(local.Options{Getenv: getenv}, redisURL, apiURL)
			if err != nil {
				t.Errorf("%s: %s=%s: local mode refuses it: %v", b.name, env, s.value, err)
				continue
			}
			if got := rendered(b.local(p, w))[env]; got != rendered(want)[env] {
				t.Errorf("%s: %s=%s: local mode has %q, the binary %q", b.name, env, s.value, got, rendered(want)[env])
			}
		}
	}
}

// TestLocalModeOverrides checks each documented override against an
// environment that says otherwise.
func TestLocalModeOverrides(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"REDIS_URL": "redis://10.0.0.1:6379/0", "HERALD_LISTEN": ":9999", "HERALD_AUTH_DISABLED": "false",
		"HERALD_METRICS_LISTEN": "127.0.0.1:9095", "HERALD_WORKER_LISTEN": "127.0.0.1:9096",
		"TELEGRAM_API_URL": "https://api.example.com", "HERALD_BOTS": "default,pages",
	}
	p, w, err := local.Configs(local.Options{Listen: "127.0.0.1:8181", Getenv: func(k string) string { return env[k] }},
		"redis://127.0.0.1:6390/0", "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][2]string{
		"REDIS_URL (producer)":   {p.Redis.URL, "redis://127.0.0.1:6390/0"},
		"REDIS_URL (worker)":     {w.Redis.URL, "redis://127.0.0.1:6390/0"},
		"HERALD_LISTEN":          {p.Server.Listen, "127.0.0.1:8181"},
		"HERALD_AUTH_DISABLED":   {fmt.Sprint(p.Keyring.AuthDisabled), "true"},
		"HERALD_METRICS_LISTEN":  {p.Server.MetricsListen, ""},
		"HERALD_WORKER_LISTEN":   {w.Listen, ""},
		"TELEGRAM_API_URL":       {w.Telegram.Client.APIURL, "http://127.0.0.1:1"},
		"HERALD_BOTS":            {strings.Join(p.Bots, ","), "default"},
		"the demo chat":          {p.Routes.DefaultChat, "42"},
		"overrides listed (doc)": {fmt.Sprint(len(local.Overridden)), "7"},
	} {
		if got[0] != got[1] {
			t.Errorf("%s: local mode has %q, want %q", name, got[0], got[1])
		}
	}
}

// TestLocalModeGitHubWebhook: with HERALD_GITHUB_WEBHOOK_SECRET set, local
// mode's GitHub webhook takes a signed ping (it answered 404, disabled,
// when local mode did not read the setting).
func TestLocalModeGitHubWebhook(t *testing.T) {
	const secret = "local-github-secret"
	m := startLocalWith(t, func(o *local.Options) {
		o.Getenv = func(k string) string {
			if k == "HERALD_GITHUB_WEBHOOK_SECRET" {
				return secret
			}
			return ""
		}
	})
	body := `{"zen": "Keep it logically awesome.", "hook_id": 1, "repository": {"full_name": "herald-dev/herald"}}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	req, err := http.NewRequestWithContext(m.ctx, http.MethodPost, m.ep.API+"/v1/webhooks/github", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "local-ping-1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		t.Fatalf("signed GitHub ping: %s, want 202 or 200", resp.Status)
	}
}

// derivedSample is a value other than the documented default of the
// binary's setting env, when the default's form gives one: twice a
// duration, one more than a whole number, the other boolean.
func derivedSample(binary, env string) (string, bool) {
	all := settings.WorkerSettings()
	if binary == "producer" {
		all = settings.ProducerSettings()
	}
	for _, s := range all {
		if s.Env != env {
			continue
		}
		if d, err := time.ParseDuration(s.Default); err == nil && d > 0 {
			return (2 * d).String(), true
		}
		if n, err := strconv.Atoi(s.Default); err == nil {
			return strconv.Itoa(n + 1), true
		}
		if b, err := strconv.ParseBool(s.Default); err == nil {
			return strconv.FormatBool(!b), true
		}
	}
	return "", false
}
