package alerts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
)

// botsRoutes names a bot under defaults, in a route, and leaves a route to
// the defaults' bot.
const botsRoutes = `
defaults:
  bot: status
routes:
  - name: pager
    match: {severity: critical}
    bot: pages
    destinations: ["-1001"]
  - name: said-default
    match: {source: grafana}
    bot: default
    destinations: ["-1002"]
  - name: everything-else
    default: true
    destinations: ["-1003"]
`

func TestRouteBots(t *testing.T) {
	t.Parallel()
	tb, err := ParseRoutesWith("routes.yaml", []byte(botsRoutes), ParseOptions{Bots: []string{"default", "pages", "status"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.routes[0].bot; got != "pages" {
		t.Errorf("pager sends as %q, want pages", got)
	}
	if got := tb.routes[1].bot; got != "" {
		t.Errorf("said-default sends as %q, want the default bot, spelt \"\"", got)
	}
	if got := tb.fallback.bot; got != "status" {
		t.Errorf("everything-else sends as %q, want status from defaults", got)
	}

	// Without a list of bots, any well-formed name is accepted.
	if _, err := ParseRoutes("routes.yaml", []byte(botsRoutes)); err != nil {
		t.Errorf("ParseRoutes: %v", err)
	}
}

func TestRouteBotProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bots []string
		src  string
		want []string // each in the error
	}{
		{
			"unknown bot in a route", []string{"default", "pages"},
			"routes:\n  - name: pager\n    bot: pagse\n    destinations: [1]\n",
			[]string{`routes.yaml:3:10: routes[0].bot: route "pager" names the bot "pagse", which is not a bot of this Herald; use one of its bots: default, pages (HERALD_BOTS)`},
		},
		{
			"unknown bot under defaults, reported once", []string{"default", "pages"},
			"defaults:\n  bot: status\nroutes:\n  - name: a\n    destinations: [1]\n  - name: b\n    destinations: [2]\n",
			[]string{`routes.yaml:2:8: defaults.bot: names the bot "status", which is not a bot of this Herald; use one of its bots: default, pages (HERALD_BOTS)`},
		},
		{
			"no bot without the default bot", []string{"pages", "status"},
			"routes:\n  - name: pager\n    destinations: [1]\n  - name: ok\n    bot: status\n    destinations: [2]\n",
			[]string{`routes.yaml:2:5: routes[0].bot: route "pager" names no bot, and this Herald has no bot "default" to send it; add bot: with one of its bots: pages, status (HERALD_BOTS), or a bot: under defaults:`},
		},
		{
			"the bot default when it is not served", []string{"pages"},
			"routes:\n  - name: pager\n    bot: default\n    destinations: [1]\n",
			[]string{`routes[0].bot: route "pager" names the bot "default", which is not a bot of this Herald; use one of its bots: pages`},
		},
		{
			"malformed name", nil,
			"routes:\n  - name: pager\n    bot: Pages\n    destinations: [1]\n",
			[]string{`routes[0].bot: "Pages" is not a bot name; use 1 to 32 lower-case letters, digits, _ or -, starting with a letter`},
		},
		{
			"not a string", []string{"default"},
			"routes:\n  - name: pager\n    bot: [a, b]\n    destinations: [1]\n",
			[]string{"routes[0].bot"},
		},
		{
			"misspelt key", []string{"default"},
			"routes:\n  - name: pager\n    bots: pages\n    destinations: [1]\n",
			[]string{`did you mean "bot"?`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRoutesWith("routes.yaml", []byte(tc.src), ParseOptions{Bots: tc.bots})
			var re *routesError
			if !errors.As(err, &re) {
				t.Fatalf("error %v, want a *RoutesError", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error\n%s\nlacks\n%s", err, want)
				}
			}
			if tc.name == "unknown bot under defaults, reported once" && len(re.Problems) != 1 {
				t.Errorf("%d problems, want the defaults' bot reported once:\n%s", len(re.Problems), err)
			}
		})
	}
}

func TestDispatchCarriesTheRouteBot(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	bots := []string{"default", "pages", "status"}
	r := &Router{enq: rec, cfg: RouterConfig{Logger: quietLogger(), Now: func() time.Time { return testNow }, Bots: bots}.WithDefaults()}
	tb, err := ParseRoutesWith("routes.yaml", []byte(botsRoutes), ParseOptions{Bots: bots})
	if err != nil {
		t.Fatal(err)
	}
	r.table.Store(tb)
	if _, err := r.Dispatch(context.Background(), []Alert{
		{Title: "db down", Severity: SeverityCritical},
		{Title: "panel", Source: "grafana"},
		{Title: "other"},
	}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, req := range rec.requests() {
		got[req.Message.Chat] = req.Message.Bot
	}
	want := map[string]string{"-1001": "pages", "-1002": "", "-1003": "status"}
	for chat, bot := range want {
		if b, ok := got[chat]; !ok || b != bot {
			t.Errorf("chat %s got bot %q (sent: %v), want %q", chat, b, ok, bot)
		}
	}
}

func TestDispatchStoresTheBot(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	enq := jobs.NewEnqueuer(b.rdb, jobs.EnqueueConfig{Limits: jobs.Limits{Bots: []string{"pages"}}})
	t.Cleanup(func() { _ = enq.Close() })
	tb, err := ParseRoutesWith("routes.yaml", []byte("routes:\n  - name: all\n    bot: pages\n    destinations: [42]\n"),
		ParseOptions{Bots: []string{"pages"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRouter(tb, enq, RouterConfig{Logger: quietLogger(), Bots: []string{"pages"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Dispatch(context.Background(), []Alert{{Title: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := b.task(t, res.Messages[0].Queue, res.Messages[0].TaskID); m.Bot != "pages" {
		t.Fatalf("stored bot %q, want pages", m.Bot)
	}
}

func TestReloadChecksTheBots(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "routes.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bots := []string{"default", "pages"}
	write("routes:\n  - name: all\n    bot: pages\n    destinations: [1]\n")
	tb, err := LoadRoutesWith(path, ParseOptions{Bots: bots})
	if err != nil {
		t.Fatal(err)
	}
	r := &Router{enq: &recorder{}, cfg: RouterConfig{Logger: quietLogger(), Bots: bots}.WithDefaults()}
	r.table.Store(tb)

	write("routes:\n  - name: all\n    bot: status\n    destinations: [1]\n")
	if err := r.Reload(path); err == nil || !strings.Contains(err.Error(), `route "all" names the bot "status"`) {
		t.Fatalf("Reload with an unknown bot: %v", err)
	}
	if r.Table() != tb {
		t.Fatal("a file naming an unknown bot replaced the table")
	}
}
