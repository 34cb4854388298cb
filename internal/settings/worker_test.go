package settings

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/worker"
)

// envOf turns a map into a getenv function.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadWorkerDefaults(t *testing.T) {
	t.Parallel()
	w, err := LoadWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Worker{
		Redis:    redisconn.Config{URL: "redis://127.0.0.1:6379/0", WaitTimeout: time.Second},
		Log:      config.Log{Level: slog.LevelInfo, Format: "auto"},
		Telegram: Telegram{Client: telegram.Config{APIURL: "https://api.telegram.org", Timeout: 15 * time.Second}},
		Bots:     []string{"default"},
		// worker.Config documents and tests its own defaults; the limits
		// are the fleet's (the priority on).
		Worker: worker.Config{
			Limits: ratelimit.Config{
				Bot:     ratelimit.Per(30, time.Second),
				Private: ratelimit.Per(1, time.Second),
				Group:   ratelimit.Per(1, time.Second).And(ratelimit.Per(20, time.Minute)),

				PriorityQueues: []string{"critical"},
				Lanes:          []string{"broadcast"},
				Priority:       ratelimit.Per(3, time.Second),
				Guard:          20 * time.Millisecond,
				SleepMax:       250 * time.Millisecond,
				BotPauseMax:    10 * time.Second,
			},
		}.WithDefaults(),
		Listen:    "127.0.0.1:9091",
		Callbacks: statushook.Config{}.WithDefaults(),
	}
	if !reflect.DeepEqual(w, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", w, want)
	}
	if !reflect.DeepEqual(Worker{}.WithDefaults(), want) {
		t.Fatalf("WithDefaults differs from loaded defaults")
	}
}

// workerEnv sets every worker variable to a value different from its default.
var workerEnv = map[string]string{
	"REDIS_URL":                        "rediss://:pw@cache:6380/2",
	"HERALD_REDIS_WAIT_REPLICAS":       "2",
	"HERALD_REDIS_WAIT_TIMEOUT":        "250ms",
	"LOG_LEVEL":                        "debug",
	"LOG_FORMAT":                       "json",
	"TELEGRAM_BOT_TOKEN":               "123:abc",
	"TELEGRAM_BOT_TOKEN_FILE":          "",
	"HERALD_BOTS":                      " default, pages ",
	"HERALD_BOT_PAGES_TOKEN":           " 456:def ", // no flag, so no row of its own in WorkerSettings
	"HERALD_PRIORITY_QUEUES":           "alerts",
	"HERALD_LANE_QUEUES":               "bulk_low",
	"HERALD_LIMIT_PRIORITY":            "1/s",
	"TELEGRAM_API_URL":                 "http://127.0.0.1:8081/",
	"TELEGRAM_TIMEOUT":                 "3s",
	"TELEGRAM_RETRY_AFTER_UNIT":        "100ms",
	"HERALD_CONCURRENCY":               "8",
	"HERALD_WAITERS":                   "-1",
	"HERALD_WAIT_LONG":                 "30s",
	"HERALD_QUEUES":                    "alerts=5, bulk_low=1",
	"HERALD_STRICT_PRIORITY":           "true",
	"HERALD_SHUTDOWN_TIMEOUT":          "5s",
	"HERALD_BACKOFF_BASE":              "1s",
	"HERALD_BACKOFF_CAP":               "1m",
	"HERALD_SENT_RETENTION":            "48h",
	"HERALD_LEASE_RECOVERY_AFTER":      "20s",
	"HERALD_WORKER_LISTEN":             "127.0.0.1:0",
	"HERALD_WORKER_METRICS_TOKEN":      "w-scrape",
	"HERALD_WORKER_METRICS_TOKEN_FILE": "",
	"HERALD_LIMIT_BOT":                 "25/s",
	"HERALD_LIMIT_PRIVATE":             "off",
	"HERALD_LIMIT_GROUP":               "1/2s, 10/m",
	"HERALD_LIMIT_QUEUES":              "alerts=20/s+100/m,bulk_low=0.5/s",
	"HERALD_LIMIT_GUARD":               "5ms",
	"HERALD_PAUSE_BOT_MAX":             "off",

	"HERALD_DIGEST_GRACE_PERIOD":  "5s",
	"HERALD_DIGEST_MAX_DELAY":     "20s",
	"HERALD_DIGEST_MAX_SIZE":      "50",
	"HERALD_DIGEST_MAX_MESSAGES":  "2",
	"HERALD_DIGEST_RECLAIM_AFTER": "10s",

	"HERALD_TELEGRAM_UPDATES":             "true", // the default, but false would refuse the URL
	"HERALD_TELEGRAM_WEBHOOK_URL":         "https://herald.example.com/",
	"HERALD_TELEGRAM_WEBHOOK_SECRET":      "s3cret_token",
	"HERALD_TELEGRAM_WEBHOOK_SECRET_FILE": "",
}

func TestLoadWorkerEnv(t *testing.T) {
	t.Parallel()
	owned := ownedSettings()
	for _, s := range WorkerSettings() {
		if _, ok := workerEnv[s.Env]; !ok && !owned[s.Env] {
			t.Errorf("test table misses %s", s.Env)
		}
	}
	w, err := LoadWorker(nil, envOf(workerEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := Worker{
		Redis:     redisconn.Config{URL: "rediss://:pw@cache:6380/2", WaitReplicas: 2, WaitTimeout: 250 * time.Millisecond},
		Log:       config.Log{Level: slog.LevelDebug, Format: "json"},
		Telegram:  Telegram{Token: "123:abc", Client: telegram.Config{APIURL: "http://127.0.0.1:8081", Timeout: 3 * time.Second}},
		Bots:      []string{"default", "pages"},
		BotTokens: map[string]BotToken{"pages": {Token: "456:def"}},
		Worker: worker.Config{
			Limits: ratelimit.Config{
				Bot:     ratelimit.Per(25, time.Second),
				Private: ratelimit.Unlimited,
				Group:   ratelimit.Per(1, 2*time.Second).And(ratelimit.Per(10, time.Minute)),
				Queues: map[string]ratelimit.Limit{
					"alerts":   ratelimit.Per(20, time.Second).And(ratelimit.Per(100, time.Minute)),
					"bulk_low": ratelimit.Per(1, 2*time.Second),
				},

				PriorityQueues: []string{"alerts"},
				Lanes:          []string{"bulk_low"},
				Priority:       ratelimit.Per(1, time.Second),
				Guard:          5 * time.Millisecond,
				SleepMax:       250 * time.Millisecond,
				BotPauseMax:    -1,
			},
			RetryAfterUnit:     100 * time.Millisecond,
			Concurrency:        8,
			Waiters:            -1,
			WaitLong:           30 * time.Second,
			Queues:             map[string]int{"alerts": 5, "bulk_low": 1},
			StrictPriority:     true,
			ShutdownTimeout:    5 * time.Second,
			BackoffBase:        time.Second,
			BackoffCap:         time.Minute,
			SentRetention:      48 * time.Hour,
			LeaseRecoveryAfter: 20 * time.Second,
			Digest: digest.Config{GracePeriod: 5 * time.Second, MaxDelay: 20 * time.Second, MaxSize: 50, MaxMessages: 2,
				ReclaimAfter: 10 * time.Second},
		}.WithDefaults(),
		Listen: "127.0.0.1:0", MetricsToken: "w-scrape",
		Updates:   interact.UpdatesConfig{WebhookURL: "https://herald.example.com", WebhookSecret: interact.WebhookSecret{Secret: "s3cret_token"}},
		Callbacks: statushook.Config{}.WithDefaults(),
	}
	if !reflect.DeepEqual(w, want) {
		t.Fatalf("env:\n got %+v\nwant %+v", w, want)
	}
}

func TestLoadWorkerPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(Worker) bool
	}{
		{"env over default", map[string]string{"HERALD_CONCURRENCY": "8"}, nil,
			func(w Worker) bool { return w.Worker.Concurrency == 8 }},
		{"flag over env", map[string]string{"HERALD_CONCURRENCY": "8"}, []string{"-concurrency", "16"},
			func(w Worker) bool { return w.Worker.Concurrency == 16 }},
		{"flag with double dash and =", nil, []string{"--concurrency=3"},
			func(w Worker) bool { return w.Worker.Concurrency == 3 }},
		{"flag overrides a broken env value", map[string]string{"HERALD_CONCURRENCY": "many"}, []string{"-concurrency=2"},
			func(w Worker) bool { return w.Worker.Concurrency == 2 }},
		{"flag map replaces env map", map[string]string{"HERALD_QUEUES": "a=1,b=2"}, []string{"-queues", "c=3"},
			func(w Worker) bool { return reflect.DeepEqual(w.Worker.Queues, map[string]int{"c": 3}) }},
		{"bool flag without value", map[string]string{"HERALD_STRICT_PRIORITY": "false"}, []string{"-strict-priority"},
			func(w Worker) bool { return w.Worker.StrictPriority }},
		{"bool flag false over env true", map[string]string{"HERALD_STRICT_PRIORITY": "1"}, []string{"-strict-priority=false"},
			func(w Worker) bool { return !w.Worker.StrictPriority }},
		{"env off disables listen", map[string]string{"HERALD_WORKER_LISTEN": "off"}, nil,
			func(w Worker) bool { return w.Listen == "" }},
		{"empty flag disables listen", nil, []string{"-worker-listen="},
			func(w Worker) bool { return w.Listen == "" }},
		{"listen alias", nil, []string{"-listen", "127.0.0.1:9999"},
			func(w Worker) bool { return w.Listen == "127.0.0.1:9999" }},
		{"whitespace trimmed", map[string]string{"TELEGRAM_BOT_TOKEN": " 1:x\n", "LOG_LEVEL": " WARN "}, nil,
			func(w Worker) bool { return w.Telegram.Token == "1:x" && w.Log.Level == slog.LevelWarn }},
		{"blank env counts as unset", map[string]string{"HERALD_CONCURRENCY": "  "}, nil,
			func(w Worker) bool { return w.Worker.Concurrency == 64 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, err := LoadWorker(tc.args, envOf(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(w) {
				t.Fatalf("unexpected config %+v", w)
			}
		})
	}
}

func TestLoadWorkerParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		wants []string
	}{
		{"bad env int", map[string]string{"HERALD_CONCURRENCY": "many"}, nil,
			[]string{`HERALD_CONCURRENCY (-concurrency) must be a whole number, got "many"`}},
		{"bad env duration", map[string]string{"HERALD_BACKOFF_CAP": "10"}, nil,
			[]string{`HERALD_BACKOFF_CAP (-backoff-cap) must be a duration with a unit`}},
		{"bad env bool", map[string]string{"HERALD_STRICT_PRIORITY": "yes"}, nil,
			[]string{`HERALD_STRICT_PRIORITY (-strict-priority) must be true or false`}},
		{"burst is retired", map[string]string{"HERALD_BURST_BOT": "10"}, nil,
			[]string{`HERALD_BURST_BOT (-burst-bot) is no longer read: limits are sliding windows (N per span) with no burst; remove it (HERALD_LIMIT_BOT=30/s allows 30 sends in any second)`}},
		{"every retired burst", map[string]string{"HERALD_BURST_PRIVATE": "1", "HERALD_BURST_GROUP": "1", "HERALD_BURST_PRIORITY": "3"}, nil,
			[]string{"HERALD_BURST_PRIVATE (-burst-private) is no longer read", "HERALD_LIMIT_PRIVATE=1/s",
				"HERALD_BURST_GROUP (-burst-group) is no longer read", "HERALD_LIMIT_GROUP=1/s,20/m",
				"HERALD_BURST_PRIORITY (-burst-priority) is no longer read", "HERALD_LIMIT_PRIORITY=3/s"}},
		{"retired burst despite a flag", map[string]string{"HERALD_BURST_GROUP": "2"}, []string{"-limit-group", "1/s"},
			[]string{"HERALD_BURST_GROUP (-burst-group) is no longer read"}},
		{"retired burst flag", nil, []string{"-burst-bot", "10"},
			[]string{`invalid value "10" for flag -burst-bot: is no longer read (env HERALD_BURST_BOT): limits are sliding windows`}},
		{"bad priority", map[string]string{"HERALD_QUEUES": "critical=high"}, nil,
			[]string{`HERALD_QUEUES (-queues) gives queue "critical" the priority "high"`}},
		{"duplicate queue", map[string]string{"HERALD_QUEUES": "a=1,a=2"}, nil,
			[]string{`HERALD_QUEUES (-queues) lists queue "a" twice`}},
		{"bad level", map[string]string{"LOG_LEVEL": "loud"}, nil,
			[]string{`LOG_LEVEL (-log-level) must be debug, info, warn or error`}},
		{"bad format", map[string]string{"LOG_FORMAT": "xml"}, nil,
			[]string{`LOG_FORMAT (-log-format) must be json, text or auto`}},
		{"all env problems at once", map[string]string{"HERALD_CONCURRENCY": "x", "HERALD_LIMIT_BOT": "y"}, nil,
			[]string{"HERALD_CONCURRENCY (-concurrency)", "HERALD_LIMIT_BOT (-limit-bot)"}},
		{"bad flag names flag and env", nil, []string{"-concurrency", "x"},
			[]string{`invalid value "x" for flag -concurrency: must be a whole number (env HERALD_CONCURRENCY)`}},
		{"bad bool flag", nil, []string{"-strict-priority=maybe"},
			[]string{"-strict-priority", "must be true or false (env HERALD_STRICT_PRIORITY)"}},
		{"unknown flag", nil, []string{"-concurency", "3"},
			[]string{"flag provided but not defined: -concurency"}},
		{"positional argument", nil, []string{"serve"},
			[]string{`unexpected argument "serve"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, err := LoadWorker(tc.args, envOf(tc.env))
			if err == nil {
				t.Fatalf("no error; config %+v", w)
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if !reflect.DeepEqual(w, Worker{}) {
				t.Errorf("a failed load returned a non-zero config")
			}
		})
	}
}

func TestLoadWorkerHelp(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-h", "-help", "--help"} {
		if _, err := LoadWorker([]string{arg}, nil); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: err = %v, want flag.ErrHelp", arg, err)
		}
	}
}

func TestLoadWorkerArgs(t *testing.T) {
	t.Parallel()
	w, rest, err := LoadWorkerArgs([]string{"-concurrency=2", "extra", "-x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Worker.Concurrency != 2 || !reflect.DeepEqual(rest, []string{"extra", "-x"}) {
		t.Fatalf("got %d %q", w.Worker.Concurrency, rest)
	}
}

func TestWorkerValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name   string
		mutate func(*Worker)
		want   string
	}{
		{"concurrency", func(w *Worker) { w.Worker.Concurrency = 0 },
			"HERALD_CONCURRENCY (-concurrency) must be >= 1, got 0"},
		{"no queues", func(w *Worker) { w.Worker.Queues = map[string]int{} },
			"HERALD_QUEUES (-queues) must name at least one queue"},
		{"queue name", func(w *Worker) { w.Worker.Queues = map[string]int{"Critical": 1} },
			`HERALD_QUEUES (-queues) has queue name "Critical"; names may only use a-z, 0-9, _ and -`},
		{"queue priority", func(w *Worker) { w.Worker.Queues = map[string]int{"low": 0} },
			`HERALD_QUEUES (-queues) gives queue "low" priority 0; priorities must be >= 1`},
		{"shutdown", func(w *Worker) { w.Worker.ShutdownTimeout = -time.Second },
			"HERALD_SHUTDOWN_TIMEOUT (-shutdown-timeout) must be > 0"},
		{"backoff base", func(w *Worker) { w.Worker.BackoffBase = -1 },
			"HERALD_BACKOFF_BASE (-backoff-base) must be > 0"},
		{"backoff cap", func(w *Worker) { w.Worker.BackoffCap = -1 },
			"HERALD_BACKOFF_CAP (-backoff-cap) must be > 0"},
		{"backoff order", func(w *Worker) { w.Worker.BackoffBase = time.Hour },
			"HERALD_BACKOFF_BASE (-backoff-base) is 1h, above HERALD_BACKOFF_CAP (-backoff-cap) which is 10m; lower the base or raise the cap"},
		{"retention", func(w *Worker) { w.Worker.SentRetention = time.Millisecond },
			"HERALD_SENT_RETENTION (-sent-retention) must be at least 1s"},
		{"priority queue unknown", func(w *Worker) { w.Worker.Limits.PriorityQueues = []string{"urgent"} },
			"HERALD_PRIORITY_QUEUES (-priority-queues) names queue \"urgent\""},
		{"lane unknown", func(w *Worker) { w.Worker.Limits.Lanes = []string{"bulk"} },
			"HERALD_LANE_QUEUES (-lane-queues) names queue \"bulk\""},
		{"lease recovery too soon", func(w *Worker) { w.Worker.LeaseRecoveryAfter = 5 * time.Second },
			"HERALD_LEASE_RECOVERY_AFTER (-lease-recovery-after) must be between 10s and 29s"},
		{"lease recovery past asynq's lease", func(w *Worker) { w.Worker.LeaseRecoveryAfter = 30 * time.Second },
			"HERALD_LEASE_RECOVERY_AFTER (-lease-recovery-after) must be between 10s and 29s"},
		{"listen", func(w *Worker) { w.Listen = "9091" },
			`HERALD_WORKER_LISTEN (-worker-listen) must be host:port such as ":9091"`},
		{"listen port", func(w *Worker) { w.Listen = ":99999" },
			`HERALD_WORKER_LISTEN (-worker-listen) must be host:port`},
		{"queue limit unknown queue", func(w *Worker) {
			w.Worker.Limits.Queues = map[string]ratelimit.Limit{"bulk": ratelimit.Per(1, time.Second)}
		},
			`HERALD_LIMIT_QUEUES (-limit-queues) limits queue "bulk", which is not in HERALD_QUEUES (broadcast, critical, default, low); add it there or drop the limit`},
		{"telegram both", func(w *Worker) { w.Telegram.Token = "1:a"; w.Telegram.TokenFile = "/run/secrets/tg" },
			"TELEGRAM_BOT_TOKEN (-telegram-bot-token) and TELEGRAM_BOT_TOKEN_FILE (-telegram-bot-token-file) are both set; keep only one"},
		{"telegram file missing", func(w *Worker) { w.Telegram.TokenFile = filepath.Join(dir, "nope") },
			`TELEGRAM_BOT_TOKEN_FILE (-telegram-bot-token-file) cannot read "` + filepath.Join(dir, "nope") + `": no such file or directory`},
		{"telegram file is dir", func(w *Worker) { w.Telegram.TokenFile = dir },
			`TELEGRAM_BOT_TOKEN_FILE (-telegram-bot-token-file) cannot read "` + dir + `"`},
		{"telegram url scheme", func(w *Worker) { w.Telegram.Client.APIURL = "ftp://api.telegram.org" },
			`TELEGRAM_API_URL (-telegram-api-url) must be an http:// or https:// URL`},
		{"telegram url no host", func(w *Worker) { w.Telegram.Client.APIURL = "api.telegram.org" },
			`TELEGRAM_API_URL (-telegram-api-url) must be an http:// or https:// URL`},
		{"telegram url query", func(w *Worker) { w.Telegram.Client.APIURL = "https://api.telegram.org?x=1" },
			`TELEGRAM_API_URL (-telegram-api-url) must be a plain base URL`},
		{"telegram timeout", func(w *Worker) { w.Telegram.Client.Timeout = 0 },
			"TELEGRAM_TIMEOUT (-telegram-timeout) must be > 0"},
		{"redis scheme", func(w *Worker) { w.Redis.URL = "memcached://x" },
			"REDIS_URL (-redis-url) \"memcached://x\" has unsupported scheme \"memcached\"; accepted schemes are redis://, rediss://, redis-sentinel://, redis-cluster://, rediss-cluster:// and redis-socket://"},
		{"log format", func(w *Worker) { w.Log.Format = "xml" },
			`LOG_FORMAT (-log-format) must be json, text or auto, got "xml"`},
		{"digest grace below asynq's second", func(w *Worker) { w.Worker.Digest.GracePeriod = 500 * time.Millisecond },
			"HERALD_DIGEST_GRACE_PERIOD (-digest-grace-period) must be a whole number of seconds, at least 1s"},
		{"digest max delay fraction", func(w *Worker) { w.Worker.Digest.MaxDelay = 30500 * time.Millisecond },
			"HERALD_DIGEST_MAX_DELAY (-digest-max-delay) must be a whole number of seconds"},
		{"digest max delay below grace", func(w *Worker) { w.Worker.Digest.MaxDelay = 5 * time.Second },
			"HERALD_DIGEST_MAX_DELAY (-digest-max-delay) is 5s, below HERALD_DIGEST_GRACE_PERIOD (-digest-grace-period) which is 10s"},
		{"digest size", func(w *Worker) { w.Worker.Digest.MaxSize = 5000 },
			"HERALD_DIGEST_MAX_SIZE (-digest-max-size) must be between 1 and 1000, got 5000"},
		{"digest messages", func(w *Worker) { w.Worker.Digest.MaxMessages = -1 },
			"HERALD_DIGEST_MAX_MESSAGES (-digest-max-messages) must be between 1 and 10, got -1"},
		{"digest reclaim after asynq", func(w *Worker) { w.Worker.Digest.ReclaimAfter = 3 * time.Minute },
			"HERALD_DIGEST_RECLAIM_AFTER (-digest-reclaim-after) must be at least 1s and below 2m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := Worker{}.WithDefaults()
			if err := w.Validate(); err != nil {
				t.Fatalf("defaults do not validate: %v", err)
			}
			tc.mutate(&w)
			err := w.Validate()
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

// checkFieldErrors asserts that every joined problem is a FieldError whose
// flag matches its environment variable.
func checkFieldErrors(t *testing.T, err error) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var fe *config.FieldError
		if !errors.As(e, &fe) {
			t.Errorf("problem %q is not a *config.FieldError", e)
			continue
		}
		if fe.Flag != config.FlagName(fe.Env) || !strings.HasPrefix(e.Error(), fe.Env+" (-"+fe.Flag+") ") {
			t.Errorf("problem %q does not name %s and its flag", e, fe.Env)
		}
	}
}

func TestWorkerValidateReportsEverything(t *testing.T) {
	t.Parallel()
	w := Worker{}.WithDefaults()
	w.Worker.Concurrency = -1
	w.Worker.BackoffBase = time.Hour
	w.Worker.Limits.Bot = ratelimit.Limit{{N: 0, Per: time.Second}}
	err := w.Validate()
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || len(j.Unwrap()) != 3 {
		t.Fatalf("want 3 joined problems, got %v", err)
	}
	checkFieldErrors(t, err)
}

func TestWorkerAllowsDisabledParts(t *testing.T) {
	t.Parallel()
	w := Worker{}.WithDefaults()
	w.Listen = ""
	w.Worker.Limits.Bot = ratelimit.Unlimited
	w.Worker.Limits.Private = ratelimit.Unlimited
	w.Worker.Limits.Group = ratelimit.Unlimited
	w.Worker.Limits.Priority = ratelimit.Unlimited
	w.Worker.Limits.Guard = time.Hour // no window to stay below
	w.Worker.Limits.BotPauseMax = -1
	w.Worker.Limits.Queues = map[string]ratelimit.Limit{"low": ratelimit.Unlimited}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	if d := w.WithDefaults(); !d.Worker.Limits.Bot.Off() || !d.Worker.Limits.Priority.Off() || d.Worker.Limits.BotPauseMax != -1 {
		t.Errorf("WithDefaults turned a limit that is off back on: %+v", d.Worker.Limits)
	}
}

func TestWorkerToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	if err := os.WriteFile(good, []byte("  123:secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("secret-token", 10000)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		tg        Telegram
		want      string
		errSubstr string
	}{
		{"neither", Telegram{}, "", ""},
		{"inline", Telegram{Token: "1:a"}, "1:a", ""},
		{"file trimmed", Telegram{TokenFile: good}, "123:secret-token", ""},
		{"both", Telegram{Token: "1:a", TokenFile: good}, "", "are both set"},
		{"missing", Telegram{TokenFile: filepath.Join(dir, "missing")}, "", `cannot read "` + filepath.Join(dir, "missing") + `"`},
		{"empty", Telegram{TokenFile: empty}, "", "is empty"},
		{"too big", Telegram{TokenFile: big}, "", "is larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Worker{Telegram: tc.tg}.Token()
			if tc.errSubstr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("Token() = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
				t.Fatalf("Token() error %v, want it to contain %q", err, tc.errSubstr)
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Fatalf("error leaks the file content: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "TELEGRAM_BOT_TOKEN") {
				t.Fatalf("error %q does not name the variable", err)
			}
		})
	}
}

func TestTelegramAPIURLWithTokenNotEchoed(t *testing.T) {
	t.Parallel()
	w := Worker{}.WithDefaults()
	w.Telegram.Client.APIURL = "https://api.telegram.org/bot123:SECRETTOKEN"
	err := w.Validate()
	if err == nil || !strings.Contains(err.Error(), "without /bot<token>") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "SECRETTOKEN") {
		t.Fatalf("error echoes the token: %v", err)
	}
}

// ownedSettings names the settings whose owners test every one of them
// with values of their own (worker.Config's): a setting added there needs
// no row in workerEnv.
func ownedSettings() map[string]bool {
	owned := map[string]bool{}
	var w worker.Config
	var l ledger.Config       // tested in internal/ledger
	var c statushook.Config   // tested in internal/statushook
	var q quota.ReserveConfig // tested in internal/quota
	for _, s := range slices.Concat(w.Specs(), l.Specs(), c.Specs(), q.Specs()) {
		owned[s.Env] = true
	}
	return owned
}

// TestCallbackQueueIsReserved: no queue of HERALD_QUEUES may take the
// status callbacks' queue, on either binary.
func TestCallbackQueueIsReserved(t *testing.T) {
	t.Parallel()
	const want = `HERALD_QUEUES (-queues) names the queue "callbacks", which the status callbacks use`
	if _, err := LoadWorker(nil, envOf(map[string]string{EnvQueues: "default=1,callbacks=1"})); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("worker: %v", err)
	}
	env := map[string]string{EnvQueues: "default,callbacks", "HERALD_AUTH_DISABLED": "true"}
	if _, err := LoadProducer(nil, envOf(env)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("producer: %v", err)
	}
}
