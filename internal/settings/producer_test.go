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

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/redisconn"
)

func TestLoadProducerDefaults(t *testing.T) {
	t.Parallel()
	p, err := LoadProducer(nil, envOf(map[string]string{"HERALD_AUTH_DISABLED": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Producer{
		Redis:             redisconn.Config{URL: "redis://127.0.0.1:6379/0", WaitTimeout: time.Second},
		Log:               config.Log{Level: slog.LevelInfo, Format: "auto"},
		Bots:              []string{"default"},
		Listen:            ":8080",
		AuthDisabled:      true,
		DefaultQueue:      "default",
		Queues:            []string{"critical", "default", "low"},
		MaxRetry:          25,
		TaskTimeout:       2 * time.Minute,
		IdempotencyWindow: 24 * time.Hour,
		MaxTextLen:        32768,
		MaxBodyBytes:      1 << 20,
		MonitoringPath:    "/monitoring",

		HeartbeatCheckInterval: 5 * time.Second,
		FeedsConcurrency:       4,
		WebhookMaxBodyBytes:    256 << 10,
		MetricsCache:           5 * time.Second,
		MaxHeartbeats:          1000,
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", p, want)
	}
	want.AuthDisabled = false
	if !reflect.DeepEqual(Producer{}.WithDefaults(), want) {
		t.Fatalf("WithDefaults differs from loaded defaults")
	}
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
}

func TestLoadProducerEnv(t *testing.T) {
	t.Parallel()
	for _, s := range ProducerSettings() {
		if _, ok := producerEnv[s.Env]; !ok {
			t.Errorf("test table misses %s", s.Env)
		}
	}
	p, err := LoadProducer(nil, envOf(producerEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := Producer{
		Redis:              redisconn.Config{URL: "redis-sentinel://:pw@s1,s2/1?master=m", WaitReplicas: 2, WaitTimeout: 250 * time.Millisecond},
		Log:                config.Log{Level: slog.LevelError, Format: "text"},
		Bots:               []string{"default", "pages"},
		Listen:             "127.0.0.1:0",
		APIToken:           "tok",
		TokensFile:         "/run/secrets/herald-tokens.yaml",
		DefaultQueue:       "alerts",
		Queues:             []string{"alerts", "bulk"},
		MaxRetry:           0,
		TaskTimeout:        30 * time.Second,
		IdempotencyWindow:  time.Hour,
		MaxTextLen:         4096,
		MaxBodyBytes:       64 << 10,
		MonitoringPath:     "",
		MonitoringReadOnly: true,

		RoutesFile:             "/etc/herald/routes.yaml",
		AlertsDefaultChat:      "-1001",
		GitHubSecret:           "gh",
		TelegramSecret:         "tg_secret",
		SentrySecret:           "se",
		GrafanaSecret:          "gr",
		GrafanaTimestampHeader: "X-Grafana-Alerting-Signature-Timestamp",
		HeartbeatCheckInterval: 2 * time.Second,
		FeedsFile:              "/etc/herald/feeds.yaml",
		FeedsConcurrency:       8,
		AdminToken:             "admin",
		WebhookMaxBodyBytes:    32 << 10,
		MaxHeartbeats:          50,
		MetricsListen:          "127.0.0.1:9090",
		MetricsToken:           "scrape",
		MetricsCache:           0,
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("env:\n got %+v\nwant %+v", p, want)
	}
}

func TestLoadProducerArgs(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"HERALD_API_TOKEN": "tok", "HERALD_MAX_RETRY": "3"})
	p, rest, err := LoadProducerArgs([]string{"-max-retry", "7", "send", "--chat", "1", "hello -world"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxRetry != 7 {
		t.Errorf("MaxRetry = %d, want the flag's 7", p.MaxRetry)
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
	p.AuthDisabled = true
	if err := p.ValidateServe(); err != nil {
		t.Fatalf("with auth disabled: %v", err)
	}
	if err := (Producer{APIToken: "t"}.WithDefaults()).ValidateServe(); err != nil {
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
		{"token both", func(p *Producer) { p.APITokenFile = filepath.Join(dir, "x") },
			"HERALD_API_TOKEN (-api-token) and HERALD_API_TOKEN_FILE (-api-token-file) are both set; keep only one"},
		{"token file missing", func(p *Producer) { p.APIToken = ""; p.APITokenFile = filepath.Join(dir, "x") },
			`HERALD_API_TOKEN_FILE (-api-token-file) cannot read "` + filepath.Join(dir, "x") + `"`},
		{"listen empty", func(p *Producer) { p.Listen = "" },
			`HERALD_LISTEN (-listen) must be host:port such as ":8080"`},
		{"listen bad", func(p *Producer) { p.Listen = "localhost" },
			`HERALD_LISTEN (-listen) must be host:port`},
		{"default queue", func(p *Producer) { p.DefaultQueue = "bulk" },
			`HERALD_DEFAULT_QUEUE (-default-queue) is "bulk", which is not in HERALD_QUEUES (critical, default, low); pick one of those or add it there`},
		{"no queues", func(p *Producer) { p.Queues = nil },
			"HERALD_QUEUES (-queues) must name at least one queue"},
		{"queue name", func(p *Producer) { p.Queues = append(p.Queues, "bulk mail") },
			`HERALD_QUEUES (-queues) has queue name "bulk mail"`},
		{"queue dup", func(p *Producer) { p.Queues = append(p.Queues, "low") },
			`HERALD_QUEUES (-queues) lists queue "low" twice`},
		{"max retry", func(p *Producer) { p.MaxRetry = -1 },
			"HERALD_MAX_RETRY (-max-retry) must be >= 0, got -1"},
		{"task timeout", func(p *Producer) { p.TaskTimeout = 0 },
			"HERALD_TASK_TIMEOUT (-task-timeout) must be at least 1s"},
		{"idempotency", func(p *Producer) { p.IdempotencyWindow = time.Millisecond },
			"HERALD_IDEMPOTENCY_WINDOW (-idempotency-window) must be at least 1s"},
		{"text len", func(p *Producer) { p.MaxTextLen = 0 },
			"HERALD_MAX_TEXT_LEN (-max-text-len) must be >= 1, got 0"},
		{"body bytes", func(p *Producer) { p.MaxBodyBytes = 100 },
			"HERALD_MAX_BODY_BYTES (-max-body-bytes) must be at least 1KiB"},
		{"monitoring slash", func(p *Producer) { p.MonitoringPath = "/" },
			`HERALD_MONITORING_PATH (-monitoring-path) must be a path such as "/monitoring"`},
		{"monitoring relative", func(p *Producer) { p.MonitoringPath = "monitoring" },
			`HERALD_MONITORING_PATH (-monitoring-path) must be a path`},
		{"monitoring trailing", func(p *Producer) { p.MonitoringPath = "/ui/" },
			`HERALD_MONITORING_PATH (-monitoring-path) must be a path`},
		{"redis", func(p *Producer) { p.Redis.URL = "redis-sentinel://a,b/0" },
			"REDIS_URL (-redis-url)"},
		{"monitoring on the webhooks", func(p *Producer) { p.MonitoringPath = "/v1/webhooks" },
			`HERALD_MONITORING_PATH (-monitoring-path) is "/v1/webhooks", which overlaps the API's /v1; pick a path of its own`},
		{"monitoring on metrics", func(p *Producer) { p.MonitoringPath = "/metrics" },
			`HERALD_MONITORING_PATH (-monitoring-path) is "/metrics", which overlaps the API's /metrics`},
		{"admin is the API token", func(p *Producer) { p.AdminToken = p.APIToken },
			"HERALD_ADMIN_TOKEN (-admin-token) must differ from HERALD_API_TOKEN"},
		{"admin both", func(p *Producer) { p.AdminToken, p.AdminTokenFile = "a", filepath.Join(dir, "x") },
			"HERALD_ADMIN_TOKEN (-admin-token) and HERALD_ADMIN_TOKEN_FILE (-admin-token-file) are both set"},
		{"metrics listen bad", func(p *Producer) { p.MetricsListen = "9090" },
			"HERALD_METRICS_LISTEN (-metrics-listen) must be host:port"},
		{"metrics listen is the API's", func(p *Producer) { p.MetricsListen = p.Listen },
			`HERALD_METRICS_LISTEN (-metrics-listen) is the API's address ":8080"`},
		{"metrics cache", func(p *Producer) { p.MetricsCache = time.Hour },
			"HERALD_METRICS_CACHE (-metrics-cache) must be between 0 (no cache) and 5m"},
		{"max heartbeats", func(p *Producer) { p.MaxHeartbeats = -1 },
			"HERALD_MAX_HEARTBEATS (-max-heartbeats) must be >= 1"},
		{"webhook body", func(p *Producer) { p.WebhookMaxBodyBytes = 10 },
			"HERALD_WEBHOOK_MAX_BODY_BYTES (-webhook-max-body-bytes) must be at least 1KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Producer{APIToken: "tok"}.WithDefaults()
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
	for _, p := range []Producer{{AuthDisabled: true}, {APIToken: "x"}, {APITokenFile: file}} {
		p = p.WithDefaults()
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	tok, err := Producer{APITokenFile: file}.Token()
	if err != nil || tok != "from-file" {
		t.Fatalf("Token() = %q, %v", tok, err)
	}
	if tok, err := (Producer{}).Token(); tok != "" || err != nil {
		t.Fatalf("Token() without any = %q, %v", tok, err)
	}
	p := Producer{MonitoringPath: "/ui"}.WithDefaults()
	p.MonitoringPath = ""
	p.AuthDisabled = true
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
	p := Producer{APIToken: "tok", AdminTokenFile: file}.WithDefaults()
	if _, err := p.Admin(); err == nil || !strings.Contains(err.Error(), "must differ from HERALD_API_TOKEN") {
		t.Fatalf("Admin() with the API token in the file = %v", err)
	}
	if err := os.WriteFile(file, []byte("admin-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Admin(); err != nil || got != "admin-secret" {
		t.Fatalf("Admin() = %q, %v", got, err)
	}
	p.MaxBodyBytes = 64 << 10
	if got := p.WebhookBodyLimit(); got != 64<<10 {
		t.Fatalf("WebhookBodyLimit() = %d, want the smaller MaxBodyBytes", got)
	}
}
