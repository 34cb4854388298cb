package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/httpapi"
)

func TestBotTokenEnvNames(t *testing.T) {
	t.Parallel()
	for name, want := range map[string][2]string{
		"":            {"TELEGRAM_BOT_TOKEN", "TELEGRAM_BOT_TOKEN_FILE"},
		"default":     {"TELEGRAM_BOT_TOKEN", "TELEGRAM_BOT_TOKEN_FILE"},
		"pages":       {"HERALD_BOT_PAGES_TOKEN", "HERALD_BOT_PAGES_TOKEN_FILE"},
		"status-page": {"HERALD_BOT_STATUS_PAGE_TOKEN", "HERALD_BOT_STATUS_PAGE_TOKEN_FILE"},
		"eu_2":        {"HERALD_BOT_EU_2_TOKEN", "HERALD_BOT_EU_2_TOKEN_FILE"},
	} {
		if got := [2]string{BotTokenEnv(name), BotTokenFileEnv(name)}; got != want {
			t.Errorf("bot %q reads %v, want %v", name, got, want)
		}
	}
	// The per-bot variables have no flag; HERALD_BOTS has one.
	for env, flag := range map[string]string{
		"HERALD_BOT_PAGES_TOKEN": "", "HERALD_BOT_PAGES_TOKEN_FILE": "", EnvBots: "bots", EnvTelegramToken: "telegram-bot-token",
	} {
		if got := config.FlagName(env); got != flag {
			t.Errorf("flagName(%s) = %q, want %q", env, got, flag)
		}
	}
}

func TestLoadBots(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"unset is the default bot alone", nil, nil, []string{"default"}},
		{"blank is unset", map[string]string{EnvBots: "  "}, nil, []string{"default"}},
		{"list with spaces", map[string]string{EnvBots: " default , pages,status "}, nil, []string{"default", "pages", "status"}},
		{"no default bot", map[string]string{EnvBots: "pages"}, nil, []string{"pages"}},
		{"flag wins", map[string]string{EnvBots: "pages"}, []string{"-bots", "default,ops"}, []string{"default", "ops"}},
		{"empty flag is the default", map[string]string{EnvBots: "pages"}, []string{"-bots="}, []string{"default"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, err := LoadWorker(tc.args, envOf(tc.env))
			if err != nil {
				t.Fatalf("worker: %v", err)
			}
			if !reflect.DeepEqual(w.Bots, tc.want) || !reflect.DeepEqual(w.BotNames(), tc.want) {
				t.Errorf("worker bots %q (names %q), want %q", w.Bots, w.BotNames(), tc.want)
			}
			env := map[string]string{httpapi.EnvAuthDisabled: "true"}
			for k, v := range tc.env {
				env[k] = v
			}
			p, err := LoadProducer(tc.args, envOf(env))
			if err != nil {
				t.Fatalf("producer: %v", err)
			}
			if !reflect.DeepEqual(p.Bots, tc.want) || !reflect.DeepEqual(p.BotNames(), tc.want) {
				t.Errorf("producer bots %q (names %q), want %q", p.Bots, p.BotNames(), tc.want)
			}
		})
	}
	if got := (Producer{}).BotNames(); !reflect.DeepEqual(got, []string{"default"}) {
		t.Errorf("unset Bots name %q, want the default bot", got)
	}
}

func TestBotsValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bots []string
		want string // "" for none
	}{
		{"several", []string{"default", "pages", "status-page", "eu_2"}, ""},
		{"longest name", []string{strings.Repeat("a", 32)}, ""},
		{"none", []string{}, `HERALD_BOTS (-bots) must name at least one bot, e.g. "default,pages"`},
		{"upper case", []string{"Pages"}, `HERALD_BOTS (-bots) has "Pages", which is not a bot name; use 1 to 32 lower-case letters`},
		{"digit first", []string{"2nd"}, `has "2nd", which is not a bot name`},
		{"too long", []string{strings.Repeat("a", 33)}, "which is not a bot name"},
		{"space inside", []string{"my bot"}, `has "my bot", which is not a bot name`},
		{"empty entry", []string{"default", "", "pages"}, "HERALD_BOTS (-bots) has an empty name; write the names separated by single commas"},
		{"twice", []string{"pages", "default", "pages"}, `HERALD_BOTS (-bots) lists the bot "pages" twice; keep one entry per bot`},
		{"same variables", []string{"status-page", "status_page"},
			`HERALD_BOTS (-bots) has the bots "status-page" and "status_page", which would both read their token from HERALD_BOT_STATUS_PAGE_TOKEN; rename one`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := Worker{}.WithDefaults()
			w.Bots = tc.bots
			p := Producer{Keyring: httpapi.KeyringConfig{AuthDisabled: true}}.WithDefaults()
			p.Bots = tc.bots
			for who, err := range map[string]error{"worker": w.Validate(), "producer": p.Validate()} {
				if tc.want == "" {
					if err != nil {
						t.Errorf("%s: %v", who, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v, want it to contain %q", who, err, tc.want)
				}
			}
		})
	}

	// Through the loader, every bad name is reported at once.
	_, err := LoadWorker(nil, envOf(map[string]string{EnvBots: "Pages,,ok,ok"}))
	if err == nil {
		t.Fatal("bad HERALD_BOTS accepted")
	}
	for _, want := range []string{`"Pages"`, "an empty name", `"ok" twice`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestWorkerBotTokens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pagesFile := write("pages", "  222:pages-secret-token\n")
	emptyFile := write("empty", "\n")

	t.Run("each bot reads its own variables", func(t *testing.T) {
		t.Parallel()
		w, err := LoadWorker(nil, envOf(map[string]string{
			EnvBots:                             "default,pages,status-page,quiet",
			EnvTelegramToken:                    "111:default-secret",
			"HERALD_BOT_PAGES_TOKEN_FILE":       pagesFile,
			"HERALD_BOT_STATUS_PAGE_TOKEN":      " 333:status-secret ",
			"HERALD_BOT_UNLISTED_TOKEN":         "444:unlisted-secret", // not in HERALD_BOTS: not read
			"HERALD_BOT_STATUS-PAGE_TOKEN":      "555:wrong-spelling",  // never a variable of any bot
			"HERALD_BOT_PAGES_TOKEN_FILE_EXTRA": "x",
		}))
		if err != nil {
			t.Fatal(err)
		}
		wantSources := map[string]BotToken{
			"pages":       {TokenFile: pagesFile},
			"status-page": {Token: "333:status-secret"},
		}
		if !reflect.DeepEqual(w.BotTokens, wantSources) {
			t.Errorf("BotTokens %v, want %v", w.BotTokens, wantSources)
		}
		for name, want := range map[string]string{
			"default": "111:default-secret", "": "111:default-secret", "pages": "222:pages-secret-token",
			"status-page": "333:status-secret", "quiet": "", "unlisted": "",
		} {
			got, err := w.BotToken(name)
			if err != nil || got != want {
				t.Errorf("BotToken(%q) = %q, %v; want %q", name, got, err, want)
			}
		}
	})

	t.Run("the default bot alone reads no per-bot variable", func(t *testing.T) {
		t.Parallel()
		w, err := LoadWorker(nil, envOf(map[string]string{EnvTelegramToken: "111:x", "HERALD_BOT_PAGES_TOKEN": "222:y"}))
		if err != nil {
			t.Fatal(err)
		}
		if w.BotTokens != nil {
			t.Errorf("BotTokens %v, want none", w.BotTokens)
		}
	})

	errTests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"both sources", map[string]string{EnvBots: "default,pages", "HERALD_BOT_PAGES_TOKEN": "222:pages-secret-token", "HERALD_BOT_PAGES_TOKEN_FILE": pagesFile},
			[]string{"HERALD_BOT_PAGES_TOKEN and HERALD_BOT_PAGES_TOKEN_FILE are both set; keep only one"}},
		{"missing file", map[string]string{EnvBots: "pages", "HERALD_BOT_PAGES_TOKEN_FILE": filepath.Join(dir, "nope")},
			[]string{"HERALD_BOT_PAGES_TOKEN_FILE cannot read", "nope"}},
		{"empty file", map[string]string{EnvBots: "pages", "HERALD_BOT_PAGES_TOKEN_FILE": emptyFile},
			[]string{"HERALD_BOT_PAGES_TOKEN_FILE file", "is empty; write the token into it"}},
		{"default token without the default bot", map[string]string{EnvBots: "pages", EnvTelegramToken: "111:default-secret"},
			[]string{`TELEGRAM_BOT_TOKEN (-telegram-bot-token) is the token of the bot "default", which HERALD_BOTS (pages) does not list; add "default" there or remove this setting`}},
		{"default token file without the default bot", map[string]string{EnvBots: "pages,status", EnvTelegramTokenFile: pagesFile},
			[]string{`TELEGRAM_BOT_TOKEN_FILE (-telegram-bot-token-file) is the token of the bot "default", which HERALD_BOTS (pages, status) does not list`}},
		{"a second name for the default token", map[string]string{"HERALD_BOT_DEFAULT_TOKEN": "111:default-secret", "HERALD_BOT_DEFAULT_TOKEN_FILE": pagesFile},
			[]string{`HERALD_BOT_DEFAULT_TOKEN is not read: the bot "default" takes its token from TELEGRAM_BOT_TOKEN or TELEGRAM_BOT_TOKEN_FILE; move it there`,
				"HERALD_BOT_DEFAULT_TOKEN_FILE is not read"}},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadWorker(nil, envOf(tc.env))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			for _, secret := range []string{"secret", "222:", "111:"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q holds %q", err, secret)
				}
			}
			if strings.Contains(err.Error(), "(-bot-") {
				t.Errorf("error %q names a flag that does not exist", err)
			}
		})
	}

	t.Run("BotToken errors name the bot's variable", func(t *testing.T) {
		t.Parallel()
		w := Worker{Bots: []string{"pages"}, BotTokens: map[string]BotToken{"pages": {TokenFile: emptyFile}}}
		if _, err := w.BotToken("pages"); err == nil || !strings.HasPrefix(err.Error(), "HERALD_BOT_PAGES_TOKEN_FILE file ") {
			t.Errorf("BotToken error %v, want it to start with the variable", err)
		}
	})
}

// TestBotTokensNeverRendered extends TestSecretsNeverRendered to the
// tokens of every bot: printed, logged or in an error, none shows.
func TestBotTokensNeverRendered(t *testing.T) {
	t.Parallel()
	const tokDefault, tokPages, tokStatus = "111:DEFAULTsecret", "222:PAGESsecret", "333:STATUSsecret"
	statusFile := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(statusFile, []byte(tokStatus+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWorker(nil, envOf(map[string]string{
		EnvBots:                        "default,pages,status",
		EnvTelegramToken:               tokDefault,
		"HERALD_BOT_PAGES_TOKEN":       tokPages,
		"HERALD_BOT_STATUS_TOKEN_FILE": statusFile,
	}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("start", "worker", w, "tokens", w.BotTokens, "pages", w.BotTokens["pages"])
	var text bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("start", "worker", w, "tokens", w.BotTokens, "pages", w.BotTokens["pages"])
	asJSON, err := json.Marshal(w.BotTokens)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{
		"slog":          buf.String(),
		"slog text":     text.String(),
		"json":          string(asJSON),
		"String":        w.String(),
		"%+v worker":    fmt.Sprintf("%+v", w),
		"%v tokens":     fmt.Sprintf("%v", w.BotTokens),
		"%+v bot token": fmt.Sprintf("%+v", w.BotTokens["pages"]),
		"%s bot token":  fmt.Sprintf("%s", w.BotTokens["pages"]),
		"%#v tokens":    fmt.Sprintf("%#v", w.BotTokens),
	}
	for name, out := range outs {
		for _, secret := range []string{tokDefault, tokPages, tokStatus, "secret"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s leaks %q: %s", name, secret, out)
			}
		}
	}
	for _, want := range []string{"HERALD_BOTS=default,pages,status", "HERALD_BOT_PAGES_TOKEN=[redacted]", "HERALD_BOT_STATUS_TOKEN_FILE=" + statusFile} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("String() lacks %q: %s", want, w.String())
		}
	}
	var rec struct {
		Worker map[string]any `json:"worker"`
	}
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Worker["HERALD_BOT_PAGES_TOKEN"] != config.RedactedValue || rec.Worker["HERALD_BOT_STATUS_TOKEN"] != "" ||
		rec.Worker["HERALD_BOT_STATUS_TOKEN_FILE"] != statusFile || rec.Worker["TELEGRAM_BOT_TOKEN"] != config.RedactedValue {
		t.Errorf("worker log value = %v", rec.Worker)
	}

	// Errors about a token never quote it, whichever bot it belongs to.
	_, err = LoadWorker(nil, envOf(map[string]string{
		EnvBots: "pages", "HERALD_BOT_PAGES_TOKEN": tokPages, "HERALD_BOT_PAGES_TOKEN_FILE": statusFile, EnvTelegramToken: tokDefault,
	}))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, secret := range []string{tokDefault, tokPages, tokStatus} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error leaks %q: %v", secret, err)
		}
	}
}

func TestProducerDefaultChatNeedsTheDefaultBot(t *testing.T) {
	t.Parallel()
	base := map[string]string{httpapi.EnvAuthDisabled: "true", EnvBots: "pages,status", alerts.EnvDefaultChat: "-1001"}
	_, err := LoadProducer(nil, envOf(base))
	want := `HERALD_ALERTS_DEFAULT_CHAT (-alerts-default-chat) sends every alert as the bot "default", which HERALD_BOTS (pages, status) does not list; ` +
		`add "default" there, or set HERALD_ROUTES_FILE to a routing file whose routes name their bot (bot: pages)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	// A routing file takes the default chat's place: its routes say.
	base[alerts.EnvRoutesFile] = "/etc/herald/routes.yaml"
	if _, err := LoadProducer(nil, envOf(base)); err != nil {
		t.Errorf("with a routing file: %v", err)
	}
	delete(base, alerts.EnvRoutesFile)
	base[EnvBots] = "pages,default"
	if _, err := LoadProducer(nil, envOf(base)); err != nil {
		t.Errorf("with the default bot listed: %v", err)
	}
}

func TestParseBots(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{"": {"default"}, " ": {"default"}, "pages, default": {"pages", "default"}} {
		got, err := ParseBots(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseBots(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseBots("pages,Pages"); err == nil || !strings.Contains(err.Error(), `HERALD_BOTS (-bots) has "Pages", which is not a bot name`) {
		t.Errorf("ParseBots of a bad name: %v", err)
	}
}
