package settings

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/webhooks"
)

func TestLoadProducerDefaults(t *testing.T) {
	t.Parallel()
	p, err := LoadProducer(nil, envOf(map[string]string{"HERALD_AUTH_DISABLED": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	want := producerParts{
		Redis:      redisconn.Config{URL: "redis://127.0.0.1:6379/0", WaitTimeout: time.Second},
		Log:        config.Log{Level: slog.LevelInfo, Format: "auto"},
		Bots:       []string{"default"},
		Server:     producer.ServerConfig{Listen: ":8080", MaxBodyBytes: 1 << 20, MonitoringPath: "/monitoring", MetricsCache: 5 * time.Second},
		Keyring:    httpapi.KeyringConfig{AuthDisabled: true},
		Enqueue:    jobs.EnqueueConfig{DefaultQueue: "default", Queues: []string{"critical", "default", "low", "broadcast"}, MaxRetry: 25, Timeout: 2 * time.Minute, IdempotencyWindow: 24 * time.Hour, Limits: jobs.Limits{MaxTextLen: 32768}},
		Webhooks:   webhookParts{MaxBodyBytes: 256 << 10},
		Heartbeat:  [2]any{5 * time.Second, 1000},
		Escalation: escalation.Settings{CheckInterval: time.Second, Lease: 30 * time.Second},
		OnCall:     roster.Settings{AnnounceInterval: 15 * time.Second},
		Feeds:      [2]any{"", 4},
		Broadcast:  broadcast.Config{MaxChats: 100000, MaxBodyBytes: 32 << 20, BotLimit: ratelimit.Per(30, time.Second), ChatLimit: ratelimit.Per(1, time.Second)},
	}
	if got := partsOf(p); !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", got, want)
	}
	want.Keyring.AuthDisabled = false
	if got := partsOf(Producer{}.WithDefaults()); !reflect.DeepEqual(got, want) {
		t.Fatalf("WithDefaults differs from loaded defaults:\n got %+v\nwant %+v", got, want)
	}
}

// producerParts are the settings of a Producer, without the runtime
// fields (loggers, clocks) its components' configs also hold.
type producerParts struct {
	Redis      redisconn.Config
	Log        config.Log
	Bots       []string
	Server     producer.ServerConfig
	Keyring    httpapi.KeyringConfig
	Enqueue    jobs.EnqueueConfig
	Routes     alerts.RoutesConfig
	Webhooks   webhookParts
	Telegram   interact.ReceiverSettings
	Heartbeat  [2]any // CheckInterval, MaxHeartbeats
	Escalation escalation.Settings
	OnCall     roster.Settings
	Feeds      [2]any // Path, Concurrency
	Callbacks  statushook.Config
	Broadcast  broadcast.Config
}

// webhookParts are the webhook settings.
type webhookParts struct {
	GitHub       webhooks.GitHubConfig
	Sentry       webhooks.SentryConfig
	Grafana      webhooks.GrafanaConfig
	MaxBodyBytes int64
}

func partsOf(p Producer) producerParts {
	w := p.Webhooks
	w.Sentry.MaxSkew, w.Grafana.MaxSkew, w.Grafana.SignatureHeader = 0, 0, ""
	return producerParts{Redis: p.Redis, Log: p.Log, Bots: p.Bots, Server: p.Server, Keyring: p.Keyring, Enqueue: p.Enqueue,
		Routes: p.Routes, Webhooks: webhookParts{GitHub: w.GitHub, Sentry: w.Sentry, Grafana: w.Grafana, MaxBodyBytes: w.MaxBodyBytes},
		Telegram: p.Telegram, Heartbeat: [2]any{p.Heartbeat.CheckInterval, p.Heartbeat.MaxHeartbeats}, Escalation: p.Escalation, OnCall: p.OnCall,
		Feeds: [2]any{p.Feeds.Path, p.Feeds.Concurrency}, Callbacks: p.Callbacks, Broadcast: p.Broadcast}
}

var producerEnv = map[string]string{
	"REDIS_URL":                  "redis-sentinel://:pw@s1,s2/1?master=m",
	"HERALD_REDIS_WAIT_REPLICAS": "2",
	"HERALD_REDIS_WAIT_TIMEOUT":  "250ms",
	"LOG_LEVEL":                  "error",
	"LOG_FORMAT":                 "text",
	"HERALD_BOTS":                "default,pages",
	"HERALD_LISTEN":              "127.0.0.1:0",
	"HERALD_API_TOKEN":           "tok",
	"HERALD_API_TOKEN_FILE":      "",
	"HERALD_TOKENS_FILE":         "/run/secrets/herald-tokens.yaml",
	"HERALD_AUTH_DISABLED":       "false",
	"HERALD_DEFAULT_QUEUE":       "alerts",
	"HERALD_QUEUES":              "alerts=5,bulk=1",
	"HERALD_MAX_RETRY":           "0",
	"HERALD_TASK_TIMEOUT":        "30s",
	"HERALD_IDEMPOTENCY_WINDOW":  "1h",
	"HERALD_MAX_TEXT_LEN":        "4096",
	"HERALD_MAX_BODY_BYTES":      "64KiB",
	"HERALD_MONITORING_PATH":     "off",
	"HERALD_MONITORING_READONLY": "true",

	"HERALD_ROUTES_FILE":                  "/etc/herald/routes.yaml",
	"HERALD_ALERTS_DEFAULT_CHAT":          "-1001",
	"HERALD_GITHUB_WEBHOOK_SECRET":        "gh",
	"HERALD_GITHUB_WEBHOOK_SECRET_FILE":   "",
	"HERALD_TELEGRAM_WEBHOOK_SECRET":      "tg_secret",
	"HERALD_TELEGRAM_WEBHOOK_SECRET_FILE": "",
	"HERALD_SENTRY_CLIENT_SECRET":         "se",
	"HERALD_SENTRY_CLIENT_SECRET_FILE":    "",
	"HERALD_GRAFANA_WEBHOOK_SECRET":       "gr",
	"HERALD_GRAFANA_WEBHOOK_SECRET_FILE":  "",
	"HERALD_GRAFANA_TIMESTAMP_HEADER":     "X-Grafana-Alerting-Signature-Timestamp",
	"HERALD_HEARTBEAT_CHECK_INTERVAL":     "2s",
	"HERALD_ESCALATION_CHECK_INTERVAL":    "500ms",
	"HERALD_ESCALATION_LEASE":             "20s",
	"HERALD_ONCALL_ANNOUNCE_INTERVAL":     "1m",
	"HERALD_FEEDS_FILE":                   "/etc/herald/feeds.yaml",
	"HERALD_FEEDS_CONCURRENCY":            "8",
	"HERALD_ADMIN_TOKEN":                  "admin",
	"HERALD_ADMIN_TOKEN_FILE":             "",
	"HERALD_WEBHOOK_MAX_BODY_BYTES":       "32KiB",
	"HERALD_MAX_HEARTBEATS":               "50",
	"HERALD_METRICS_LISTEN":               "127.0.0.1:9090",
	"HERALD_METRICS_TOKEN":                "scrape",
	"HERALD_METRICS_TOKEN_FILE":           "",
	"HERALD_METRICS_CACHE":                "0s",
	"HERALD_CALLBACK_SECRET":              testCallbackSecret,
	"HERALD_CALLBACK_SECRET_FILE":         "",
	"HERALD_CALLBACK_ALLOW":               " 10.0.0.0/8, hooks.internal ",
	"HERALD_BROADCAST_MAX_CHATS":          "5000",
	"HERALD_BROADCAST_MAX_BODY_BYTES":     "4MiB",
	"HERALD_LIMIT_BOT":                    "1000/s",
	"HERALD_LIMIT_PRIVATE":                "1/2s",
}

// testCallbackSecret is a well-formed callbacks master key.
const testCallbackSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestLoadProducerEnv(t *testing.T) {
	t.Parallel()
	owned := ownedSettings()
	for _, s := range ProducerSettings() {
		if _, ok := producerEnv[s.Env]; !ok && !owned[s.Env] {
			t.Errorf("test table misses %s", s.Env)
		}
	}
	p, err := LoadProducer(nil, envOf(producerEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := producerParts{
		Redis: redisconn.Config{URL: "redis-sentinel://:pw@s1,s2/1?master=m", WaitReplicas: 2, WaitTimeout: 250 * time.Millisecond},
		Log:   config.Log{Level: slog.LevelError, Format: "text"},
		Bots:  []string{"default", "pages"},
		Server: producer.ServerConfig{Listen: "127.0.0.1:0", MaxBodyBytes: 64 << 10, MonitoringPath: "", MonitoringReadOnly: true,
			MetricsListen: "127.0.0.1:9090", MetricsToken: "scrape", MetricsCache: producer.NoMetricsCache},
		Keyring: httpapi.KeyringConfig{APIToken: "tok", TokensFile: "/run/secrets/herald-tokens.yaml", AdminToken: "admin"},
		Enqueue: jobs.EnqueueConfig{DefaultQueue: "alerts", Queues: []string{"alerts", "bulk"}, MaxRetry: 0, Timeout: 30 * time.Second,
			IdempotencyWindow: time.Hour, Limits: jobs.Limits{MaxTextLen: 4096}},
		Routes: alerts.RoutesConfig{File: "/etc/herald/routes.yaml", DefaultChat: "-1001"},
		Webhooks: webhookParts{GitHub: webhooks.GitHubConfig{Secret: "gh"}, Sentry: webhooks.SentryConfig{Secret: "se"},
			Grafana: webhooks.GrafanaConfig{Secret: "gr", TimestampHeader: "X-Grafana-Alerting-Signature-Timestamp"}, MaxBodyBytes: 32 << 10},
		Telegram:   interact.ReceiverSettings{WebhookSecret: interact.WebhookSecret{Secret: "tg_secret"}},
		Heartbeat:  [2]any{2 * time.Second, 50},
		Escalation: escalation.Settings{CheckInterval: 500 * time.Millisecond, Lease: 20 * time.Second},
		OnCall:     roster.Settings{AnnounceInterval: time.Minute},
		Feeds:      [2]any{"/etc/herald/feeds.yaml", 8},
		Callbacks:  statushook.Config{Secret: testCallbackSecret, Allow: []string{"10.0.0.0/8", "hooks.internal"}},
		Broadcast:  broadcast.Config{MaxChats: 5000, MaxBodyBytes: 4 << 20, BotLimit: ratelimit.Per(1000, time.Second), ChatLimit: ratelimit.Per(1, 2*time.Second)},
	}
	if got := partsOf(p); !reflect.DeepEqual(got, want) {
		t.Fatalf("env:\n got %+v\nwant %+v", got, want)
	}
}

func TestLoadProducerArgs(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"HERALD_API_TOKEN": "tok", "HERALD_MAX_RETRY": "3"})
	p, rest, err := LoadProducerArgs([]string{"-max-retry", "7", "send", "--chat", "1", "hello -world"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if p.Enqueue.MaxRetry != 7 {
		t.Errorf("MaxRetry = %d, want the flag's 7", p.Enqueue.MaxRetry)
	}
	if want := []string{"send", "--chat", "1", "hello -world"}; !reflect.DeepEqual(rest, want) {
		t.Errorf("rest = %q, want %q", rest, want)
	}
	if _, err := LoadProducer([]string{"send"}, env); err == nil || !strings.Contains(err.Error(), `unexpected argument "send"`) {
		t.Errorf("LoadProducer with a subcommand: %v", err)
	}
	if _, _, err := LoadProducerArgs([]string{"-h"}, env); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestMaxBodyBytesForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"1MiB", 1 << 20, true},
		{"512kib", 512 << 10, true},
		{"2MB", 2_000_000, true},
		{"1 GiB", 1 << 30, true},
		{"10B", 10, true},
		{"MiB", 0, false},
		{"1.5MiB", 0, false},
		{"-1", 0, false},
		{"1TB", 0, false},
		{"99999999999GiB", 0, false},
	}
	for _, tc := range tests {
		got, err := config.ParseBytes(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for _, n := range []int64{1, 1000, 1 << 10, 3 << 20, 5 << 30, 1<<20 + 1} {
		if back, err := config.ParseBytes(config.FormatBytes(n)); err != nil || back != n {
			t.Errorf("formatBytes(%d) = %q parses to %d, %v", n, config.FormatBytes(n), back, err)
		}
	}
}

func TestProducerValidateServeRequiresAuth(t *testing.T) {
	t.Parallel()
	p := Producer{}.WithDefaults()
	err := p.ValidateServe()
	want := "HERALD_API_TOKEN (-api-token) is required: set HERALD_API_TOKEN (or HERALD_API_TOKEN_FILE, or a tokens file in HERALD_TOKENS_FILE), or HERALD_AUTH_DISABLED=true for local use"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ValidateServe() = %v, want %q", err, want)
	}
	p.Keyring.AuthDisabled = true
	if err := p.ValidateServe(); err != nil {
		t.Fatalf("with auth disabled: %v", err)
	}
	if err := (Producer{Keyring: httpapi.KeyringConfig{APIToken: "t"}}.WithDefaults()).ValidateServe(); err != nil {
		t.Fatalf("with a token: %v", err)
	}
}

func TestProducerValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name   string
		mutate func(*Producer)
		want   string
	}{
		{"token both", func(p *Producer) { p.Keyring.APITokenFile = filepath.Join(dir, "x") },
			"HERALD_API_TOKEN (-api-token) and HERALD_API_TOKEN_FILE (-api-token-file) are both set; keep only one"},
		{"token file missing", func(p *Producer) { p.Keyring.APIToken = ""; p.Keyring.APITokenFile = filepath.Join(dir, "x") },
			`HERALD_API_TOKEN_FILE (-api-token-file) cannot read "` + filepath.Join(dir, "x") + `"`},
		{"listen empty", func(p *Producer) { p.Server.Listen = "" },
			`HERALD_LISTEN (-listen) must be host:port such as ":8080"`},
		{"listen bad", func(p *Producer) { p.Server.Listen = "localhost" },
			`HERALD_LISTEN (-listen) must be host:port`},
		{"default queue", func(p *Producer) { p.Enqueue.DefaultQueue = "bulk" },
			`HERALD_DEFAULT_QUEUE (-default-queue) is "bulk", which is not in HERALD_QUEUES (critical, default, low, broadcast); pick one of those or add it there`},
		{"no queues", func(p *Producer) { p.Enqueue.Queues = nil },
			"HERALD_QUEUES (-queues) must name at least one queue"},
		{"queue name", func(p *Producer) { p.Enqueue.Queues = append(p.Enqueue.Queues, "bulk mail") },
			`HERALD_QUEUES (-queues) has queue name "bulk mail"`},
		{"queue dup", func(p *Producer) { p.Enqueue.Queues = append(p.Enqueue.Queues, "low") },
			`HERALD_QUEUES (-queues) lists queue "low" twice`},
		{"max retry", func(p *Producer) { p.Enqueue.MaxRetry = -1 },
			"HERALD_MAX_RETRY (-max-retry) must be >= 0, got -1"},
		{"task timeout", func(p *Producer) { p.Enqueue.Timeout = 0 },
			"HERALD_TASK_TIMEOUT (-task-timeout) must be at least 1s"},
		{"idempotency", func(p *Producer) { p.Enqueue.IdempotencyWindow = time.Millisecond },
			"HERALD_IDEMPOTENCY_WINDOW (-idempotency-window) must be at least 1s"},
		{"text len", func(p *Producer) { p.Enqueue.Limits.MaxTextLen = 0 },
			"HERALD_MAX_TEXT_LEN (-max-text-len) must be >= 1, got 0"},
		{"body bytes", func(p *Producer) { p.Server.MaxBodyBytes = 100 },
			"HERALD_MAX_BODY_BYTES (-max-body-bytes) must be at least 1KiB"},
		{"monitoring slash", func(p *Producer) { p.Server.MonitoringPath = "/" },
			`HERALD_MONITORING_PATH (-monitoring-path) must be a path such as "/monitoring"`},
		{"monitoring relative", func(p *Producer) { p.Server.MonitoringPath = "monitoring" },
			`HERALD_MONITORING_PATH (-monitoring-path) must be a path`},
		{"monitoring trailing", func(p *Producer) { p.Server.MonitoringPath = "/ui/" },
			`HERALD_MONITORING_PATH (-monitoring-path) must be a path`},
		{"redis", func(p *Producer) { p.Redis.URL = "redis-sentinel://a,b/0" },
			"REDIS_URL (-redis-url)"},
		{"monitoring on the webhooks", func(p *Producer) { p.Server.MonitoringPath = "/v1/webhooks" },
			`HERALD_MONITORING_PATH (-monitoring-path) is "/v1/webhooks", which overlaps the API's /v1; pick a path of its own`},
		{"monitoring on metrics", func(p *Producer) { p.Server.MonitoringPath = "/metrics" },
			`HERALD_MONITORING_PATH (-monitoring-path) is "/metrics", which overlaps the API's /metrics`},
		{"admin is the API token", func(p *Producer) { p.Keyring.AdminToken = p.Keyring.APIToken },
			"HERALD_ADMIN_TOKEN (-admin-token) must differ from HERALD_API_TOKEN"},
		{"admin both", func(p *Producer) { p.Keyring.AdminToken, p.Keyring.AdminTokenFile = "a", filepath.Join(dir, "x") },
			"HERALD_ADMIN_TOKEN (-admin-token) and HERALD_ADMIN_TOKEN_FILE (-admin-token-file) are both set"},
		{"metrics listen bad", func(p *Producer) { p.Server.MetricsListen = "9090" },
			"HERALD_METRICS_LISTEN (-metrics-listen) must be host:port"},
		{"metrics listen is the API's", func(p *Producer) { p.Server.MetricsListen = p.Server.Listen },
			`HERALD_METRICS_LISTEN (-metrics-listen) is the API's address ":8080"`},
		{"metrics cache", func(p *Producer) { p.Server.MetricsCache = time.Hour },
			"HERALD_METRICS_CACHE (-metrics-cache) must be between 0 (no cache) and 5m"},
		{"max heartbeats", func(p *Producer) { p.Heartbeat.MaxHeartbeats = -1 },
			"HERALD_MAX_HEARTBEATS (-max-heartbeats) must be >= 1"},
		{"escalation check", func(p *Producer) { p.Escalation.CheckInterval = time.Millisecond },
			"HERALD_ESCALATION_CHECK_INTERVAL (-escalation-check-interval) must be between 100ms and 10m (e.g. 1s), got 1ms"},
		{"announce interval", func(p *Producer) { p.OnCall.AnnounceInterval = time.Hour },
			"HERALD_ONCALL_ANNOUNCE_INTERVAL (-oncall-announce-interval) must be between 100ms and 10m (e.g. 15s), got 1h"},
		{"webhook body", func(p *Producer) { p.Webhooks.MaxBodyBytes = 10 },
			"HERALD_WEBHOOK_MAX_BODY_BYTES (-webhook-max-body-bytes) must be at least 1KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Producer{Keyring: httpapi.KeyringConfig{APIToken: "tok"}}.WithDefaults()
			if err := p.Validate(); err != nil {
				t.Fatalf("base config does not validate: %v", err)
			}
			tc.mutate(&p)
			err := p.Validate()
			if err == nil {
				t.Fatal("Validate accepted the config")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nlacks %q", err, tc.want)
			}
			checkFieldErrors(t, err)
		})
	}
}

func TestProducerAuthAlternatives(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "api")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Producer{{Keyring: httpapi.KeyringConfig{AuthDisabled: true}}, {Keyring: httpapi.KeyringConfig{APIToken: "x"}}, {Keyring: httpapi.KeyringConfig{APITokenFile: file}}} {
		p = p.WithDefaults()
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	tok, err := Producer{Keyring: httpapi.KeyringConfig{APITokenFile: file}}.Keyring.Token()
	if err != nil || tok != "from-file" {
		t.Fatalf("Token() = %q, %v", tok, err)
	}
	if tok, err := (Producer{}).Keyring.Token(); tok != "" || err != nil {
		t.Fatalf("Token() without any = %q, %v", tok, err)
	}
	p := Producer{Server: producer.ServerConfig{MonitoringPath: "/ui"}}.WithDefaults()
	p.Server.MonitoringPath = ""
	p.Keyring.AuthDisabled = true
	if err := p.Validate(); err != nil {
		t.Fatalf("disabled monitoring: %v", err)
	}
}

// TestAdminTokenFromFile checks that an admin token read from its file is
// also refused when it equals the API token, and that the webhook limit in
// force is the smaller of the two body limits.
func TestAdminTokenFromFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "admin")
	if err := os.WriteFile(file, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Producer{Keyring: httpapi.KeyringConfig{APIToken: "tok", AdminTokenFile: file}}.WithDefaults()
	if _, err := p.Keyring.Admin(); err == nil || !strings.Contains(err.Error(), "must differ from HERALD_API_TOKEN") {
		t.Fatalf("Admin() with the API token in the file = %v", err)
	}
	if err := os.WriteFile(file, []byte("admin-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Keyring.Admin(); err != nil || got != "admin-secret" {
		t.Fatalf("Admin() = %q, %v", got, err)
	}
	p.Server.MaxBodyBytes = 64 << 10
	if got := p.WebhookBodyLimit(); got != 64<<10 {
		t.Fatalf("WebhookBodyLimit() = %d, want the smaller MaxBodyBytes", got)
	}
}
