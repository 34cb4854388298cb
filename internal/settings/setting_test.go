package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/redisconn"
)

// TestDocumentedDefaultsMatchWithDefaults holds every setting's documented
// default (the Default of its spec: docs/CONFIGURATION.md's column and the flag help)
// to what WithDefaults gives its field, one setting at a time, so that the
// two cannot drift apart again. Each default is parsed with the setting's
// own binding into a fresh copy of the defaults, which must come out
// unchanged; a setting documented without a default must parse "" to what
// WithDefaults leaves. Then all the documented defaults are parsed into a
// zero value, which must equal WithDefaults: a field WithDefaults fills but
// no setting documents fails there.
func TestDocumentedDefaultsMatchWithDefaults(t *testing.T) {
	t.Parallel()
	t.Run("worker", func(t *testing.T) {
		t.Parallel()
		checkDocumentedDefaults(t, Worker{}.WithDefaults, workerSpecs, func(w Worker) any {
			// worker.Config's fields that are no settings: what its
			// WithDefaults fills there is not documented here.
			w.Worker.Logger, w.Worker.Limits.SleepMax = nil, 0
			w.Worker.Digest.ClaimTTL, w.Worker.Digest.MessageLimit = 0, 0
			return w
		})
	})
	t.Run("producer", func(t *testing.T) {
		t.Parallel()
		checkDocumentedDefaults(t, Producer{}.WithDefaults, producerSpecs, func(p Producer) any { return partsOf(p) })
	})
}

// checkDocumentedDefaults is TestDocumentedDefaultsMatchWithDefaults for
// one configuration type: defaults returns a fresh WithDefaults value, specs
// binds the settings to one, and view leaves out the runtime fields (loggers,
// clocks) of the components' configs, which no setting documents.
func checkDocumentedDefaults[T any](t *testing.T, defaults func() T, specs func(*T) []config.Spec, view func(T) any) {
	t.Helper()
	want := defaults()
	for i, s := range specs(&want) {
		got := defaults()
		bound := specs(&got)[i]
		if err := bound.Set(s.Default); err != nil {
			t.Errorf("%s: documented default %q does not parse: %v", s.Env, s.Default, err)
			continue
		}
		if !reflect.DeepEqual(view(got), view(want)) {
			t.Errorf("%s: documented default %q reads as %q, but WithDefaults gives %q",
				s.Env, s.Default, bound.Get(), s.Get())
		}
	}
	var zero T
	for _, s := range specs(&zero) {
		if err := s.Set(s.Default); err != nil {
			t.Fatalf("%s: documented default %q does not parse: %v", s.Env, s.Default, err)
		}
	}
	if !reflect.DeepEqual(view(zero), view(want)) {
		t.Errorf("the documented defaults give\n%+v\nWithDefaults gives\n%+v", view(zero), view(want))
	}
}

// TestGetSetRoundTrip renders every field and parses it back unchanged.
func TestGetSetRoundTrip(t *testing.T) {
	t.Parallel()
	w, err := LoadWorker(nil, envOf(workerEnv))
	if err != nil {
		t.Fatal(err)
	}
	orig := w
	for _, s := range workerSpecs(&w) {
		if err := s.Set(s.Get()); err != nil {
			t.Errorf("%s: %q does not parse: %v", s.Env, s.Get(), err)
		}
	}
	if !reflect.DeepEqual(w, orig) {
		t.Errorf("worker round trip changed\n%+v\nto\n%+v", orig, w)
	}
	p, err := LoadProducer(nil, envOf(producerEnv))
	if err != nil {
		t.Fatal(err)
	}
	porig := p
	for _, s := range producerSpecs(&p) {
		if err := s.Set(s.Get()); err != nil {
			t.Errorf("%s: %q does not parse: %v", s.Env, s.Get(), err)
		}
	}
	if !reflect.DeepEqual(partsOf(p), partsOf(porig)) {
		t.Errorf("producer round trip changed\n%+v\nto\n%+v", porig, p)
	}
}

func TestSettingsTables(t *testing.T) {
	t.Parallel()
	for name, settings := range map[string][]config.Setting{"worker": WorkerSettings(), "producer": ProducerSettings()} {
		seenEnv, seenFlag := map[string]bool{}, map[string]bool{}
		for _, s := range settings {
			if s.Env == "" || s.Help == "" || s.Flag != config.FlagName(s.Env) {
				t.Errorf("%s: incomplete setting %+v", name, s)
			}
			if seenEnv[s.Env] || seenFlag[s.Flag] {
				t.Errorf("%s: duplicate %s / -%s", name, s.Env, s.Flag)
			}
			seenEnv[s.Env], seenFlag[s.Flag] = true, true
		}
	}
	flags := map[string]string{}
	for _, s := range append(WorkerSettings(), ProducerSettings()...) {
		flags[s.Env] = s.Flag
	}
	for env, flag := range map[string]string{
		"REDIS_URL": "redis-url", "TELEGRAM_API_URL": "telegram-api-url", "HERALD_CONCURRENCY": "concurrency",
		"HERALD_LISTEN": "listen", "HERALD_API_TOKEN_FILE": "api-token-file", "HERALD_AUTH_DISABLED": "auth-disabled",
		"HERALD_LIMIT_BOT": "limit-bot", "HERALD_LIMIT_GUARD": "limit-guard", "HERALD_PAUSE_BOT_MAX": "pause-bot-max", "HERALD_WORKER_LISTEN": "worker-listen",
	} {
		if flags[env] != flag {
			t.Errorf("%s has flag -%s, want -%s", env, flags[env], flag)
		}
	}
}

func TestUsageAndMarkdown(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WorkerUsage(&buf); err != nil {
		t.Fatal(err)
	}
	usage := buf.String()
	md := config.MarkdownTable(ProducerSettings())
	for _, s := range WorkerSettings() {
		if !strings.Contains(usage, "  -"+s.Flag+" value\n") || !strings.Contains(usage, "(env "+s.Env) {
			t.Errorf("worker usage lacks %s", s.Env)
		}
	}
	if !strings.Contains(usage, `default "critical=12,default=6,low=2,broadcast=1"`) {
		t.Errorf("usage lacks queue default:\n%s", usage)
	}
	for _, s := range ProducerSettings() {
		if !strings.Contains(md, "| `"+s.Env+"` | `-"+s.Flag+"` |") {
			t.Errorf("markdown lacks %s", s.Env)
		}
	}
	if n := strings.Count(md, "\n"); n != len(ProducerSettings())+2 {
		t.Errorf("markdown has %d lines, want %d", n, len(ProducerSettings())+2)
	}
	if got := config.MarkdownTable([]config.Setting{{Env: "A", Flag: "a", Help: "x | y"}}); !strings.Contains(got, `x \| y`) {
		t.Errorf("pipe not escaped: %s", got)
	}
	buf.Reset()
	if err := ProducerUsage(&buf); err != nil || !strings.Contains(buf.String(), "-api-token value") {
		t.Errorf("producer usage: %v\n%s", err, buf.String())
	}
}

// TestSecretsNeverRendered checks every way a config may end up in a log.
func TestSecretsNeverRendered(t *testing.T) {
	t.Parallel()
	const redisPW, botToken, apiToken = "redisPW-123", "999:botTOKEN", "apiTOKEN-456"
	w := Worker{Redis: redisconn.Config{URL: "redis://u:" + redisPW + "@cache:6379/0"}, Telegram: Telegram{Token: botToken}}.WithDefaults()
	p := Producer{Redis: redisconn.Config{URL: "redis-sentinel://:" + redisPW + "@a,b/0?master=m&password=" + redisPW}, Keyring: httpapi.KeyringConfig{APIToken: apiToken}}.WithDefaults()

	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	l.Info("start", "worker", w, "producer", p, "telegram", w.Telegram, "redis", w.Redis)
	outs := map[string]string{
		"slog":         buf.String(),
		"w.String":     w.String(),
		"p.String":     p.String(),
		"%+v worker":   fmt.Sprintf("%+v", w),
		"%v producer":  fmt.Sprintf("%v", p),
		"%+v telegram": fmt.Sprintf("%+v", w.Telegram),
	}
	for name, out := range outs {
		for _, secret := range []string{redisPW, botToken, apiToken} {
			if strings.Contains(out, secret) {
				t.Errorf("%s leaks %q: %s", name, secret, out)
			}
		}
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	worker, _ := rec["worker"].(map[string]any)
	if worker["TELEGRAM_BOT_TOKEN"] != config.RedactedValue || worker["HERALD_CONCURRENCY"] != "64" ||
		worker["REDIS_URL"] != "redis://u:xxxxx@cache:6379/0" {
		t.Errorf("worker log value = %v", worker)
	}
	producer, _ := rec["producer"].(map[string]any)
	if producer["HERALD_API_TOKEN"] != config.RedactedValue || producer["HERALD_API_TOKEN_FILE"] != "" {
		t.Errorf("producer log value = %v", producer)
	}
	if !strings.Contains(w.String(), "HERALD_QUEUES=critical=12,default=6,low=2,broadcast=1") {
		t.Errorf("String() = %s", w.String())
	}
}
