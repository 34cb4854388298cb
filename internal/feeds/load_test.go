package feeds

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
)

func TestLoadConfigExample(t *testing.T) {
	t.Parallel()
	f, err := LoadConfig(filepath.Join("..", "..", "deploy", "feeds.example.yaml"))
	if err != nil {
		t.Fatalf("the example file does not load: %v", err)
	}
	if len(f.Feeds) < 2 {
		t.Fatalf("the example has %d feeds; it should show several", len(f.Feeds))
	}
}

func TestParseFile(t *testing.T) {
	t.Parallel()
	src := `
defaults:
  interval: 10m
  timeout: 15s
  user_agent: "Herald at example.org"
  severity: warning
  labels:
    team: ops
feeds:
  - name: go-releases
    url: https://github.com/golang/go/releases.atom
    interval: 1h
    labels: {project: go, team: lang}
  - name: status_page
    url: http://status.example.org/history.rss
    severity: critical
    source: statuspage
    timeout: 5s
`
	f, err := parseFile("", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if f.Defaults.Interval != 10*time.Minute || f.Defaults.Timeout != 15*time.Second ||
		f.Defaults.UserAgent != "Herald at example.org" || f.Defaults.Severity != alerts.SeverityWarning {
		t.Fatalf("defaults %+v", f.Defaults)
	}
	if len(f.Feeds) != 2 || f.Feeds[0].Line != 10 || f.Feeds[1].Line != 14 {
		t.Fatalf("feeds %+v", f.Feeds)
	}
	r := f.WithDefaults()
	g, s := r.Feeds[0], r.Feeds[1]
	if g.Interval != time.Hour || g.Timeout != 15*time.Second || g.Severity != alerts.SeverityWarning || g.Source != "feed" ||
		g.Labels["team"] != "lang" || g.Labels["project"] != "go" || len(g.Labels) != 2 {
		t.Fatalf("go-releases resolved to %+v", g)
	}
	if s.Interval != 10*time.Minute || s.Timeout != 5*time.Second || s.Severity != alerts.SeverityCritical ||
		s.Source != "statuspage" || s.Labels["team"] != "ops" {
		t.Fatalf("status_page resolved to %+v", s)
	}
	// WithDefaults on a minimal file.
	m := file{Feeds: []feed{{Name: "a", URL: "https://a.test/"}}}.WithDefaults()
	if m.Feeds[0].Interval != defaultInterval || m.Feeds[0].Timeout != defaultTimeout ||
		m.Defaults.UserAgent != defaultUserAgent || m.Feeds[0].Severity != alerts.SeverityInfo || m.Feeds[0].Source != defaultSource {
		t.Fatalf("defaults not applied: %+v", m)
	}
}

func TestConfigErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		// want are "line:column: field: what; fix" fragments that must all
		// appear in the error.
		want []string
	}{
		{"empty file", "", []string{"1:1: the file is empty; add a feeds: list"}},
		{"only comments", "# nothing yet\n", []string{"1:1: the file is empty; add a feeds: list"}},
		{"no feeds", "defaults:\n  interval: 5m\n", []string{"1:1: feeds: no feeds"}},
		{"not a mapping", "- a\n- b\n", []string{"1:1: the document is a list, expected a mapping; write key: value pairs", "(keys: defaults, feeds)"}},
		// The mis-indented key is on line 3 (yaml/v4 v4.0.0 names it;
		// v4.0.0-rc.4 named the line before).
		{"syntax error", "feeds:\n  - name: a\n   url: x\n", []string{"3:4: invalid YAML: did not find expected '-' indicator", "; check the indentation"}},
		{"unknown top-level key", "feds:\n  - name: a\n", []string{`1:1: feds: unknown key; did you mean "feeds"?`}},
		{"unknown feed key", "feeds:\n  - name: a\n    url: https://a.test/\n    intervall: 5m\n", []string{`4:5: feeds[0].intervall: unknown key; did you mean "interval"?`}},
		{"unknown key far from any", "feeds:\n  - name: a\n    url: https://a.test/\n    colour: red\n", []string{
			"4:5: feeds[0].colour: unknown key; use one of name, url, interval, timeout, severity, source, labels"}},
		{"bad duration", "defaults:\n  interval: five minutes\nfeeds:\n  - name: a\n    url: https://a.test/\n",
			[]string{`2:13: defaults.interval: got "five minutes", expected a duration; write a number with a unit, such as 90s or 5m`}},
		{"negative duration", "feeds:\n  - name: a\n    url: https://a.test/\n    timeout: -5s\n",
			[]string{`4:14: feeds[0].timeout: "-5s" is not a positive duration; write a number with a unit`}},
		{"empty duration is unset", "defaults:\n  interval:\nfeeds: []\n", []string{"3:8: feeds: no feeds"}},
		{"interval too short", "feeds:\n  - name: a\n    url: https://a.test/\n    interval: 1s\n", []string{"4:15: feeds[0].interval: 1s is out of range"}},
		{"timeout too long", "defaults:\n  timeout: 1h\nfeeds:\n  - name: a\n    url: https://a.test/\n", []string{"2:12: defaults.timeout: 1h0m0s is out of range"}},
		{"missing url", "feeds:\n  - name: a\n", []string{"2:5: feeds[0].url: is required"}},
		{"missing name", "feeds:\n  - url: https://a.test/\n", []string{"2:5: feeds[0].name: is required"}},
		{"bad name", "feeds:\n  - name: Bad Name\n    url: https://a.test/\n", []string{`2:11: feeds[0].name: "Bad Name" must be`}},
		{"duplicate name", "feeds:\n  - name: a\n    url: https://a.test/\n  - name: a\n    url: https://b.test/\n",
			[]string{`4:11: feeds[1].name: "a" is already the name of feeds[0]`}},
		{"ftp url", "feeds:\n  - name: a\n    url: ftp://a.test/feed\n", []string{"3:10: feeds[0].url: must start with http:// or https://"}},
		{"relative url", "feeds:\n  - name: a\n    url: /feed.xml\n", []string{"3:10: feeds[0].url: must start with http"}},
		{"credentials in url", "feeds:\n  - name: a\n    url: https://user:pw@a.test/\n", []string{"3:10: feeds[0].url: must not contain credentials"}},
		{"bad severity", "feeds:\n  - name: a\n    url: https://a.test/\n    severity: urgent\n", []string{`4:15: feeds[0].severity: "urgent" is not one of`}},
		{"reserved label", "feeds:\n  - name: a\n    url: https://a.test/\n    labels:\n      feed: other\n", []string{"5:7: feeds[0].labels.feed: the label \"feed\" is set by the poller"}},
		{"bad label name", "defaults:\n  labels:\n    bad-name: x\nfeeds:\n  - name: a\n    url: https://a.test/\n", []string{"3:5: defaults.labels.bad-name: label names are"}},
		{"labels not a mapping", "feeds:\n  - name: a\n    url: https://a.test/\n    labels: [a, b]\n", []string{"4:13: feeds[0].labels: got a list, expected a mapping; write key: value pairs"}},
		{"label written twice", "feeds:\n  - name: a\n    url: https://a.test/\n    labels: {team: a, team: b}\n", []string{
			"4:23: feeds[0].labels.team: the key is written twice (first at line 4, column 14); keep one"}},
		{"list where a value goes", "feeds:\n  - name: [a]\n    url: https://a.test/\n", []string{"2:11: feeds[0].name: got a list, expected a single value; write one value"}},
		{"tagged value", "feeds:\n  - name: !!binary YQ==\n    url: https://a.test/\n", []string{
			"2:11: feeds[0].name: has the tag !!binary, expected text; remove the tag"}},
		{"feeds not a list", "feeds:\n  name: a\n", []string{"2:3: feeds: got a mapping, expected a list; write one item per line"}},
		{"duplicate key", "feeds:\n  - name: a\n    name: b\n    url: https://a.test/\n", []string{"3:5: feeds[0].name: the key is written twice (first at line 2); keep one"}},
		{"alias", "defaults:\n  interval: &i 5m\nfeeds:\n  - name: a\n    url: https://a.test/\n    interval: *i\n", []string{"6:15: feeds[0].interval: uses the YAML alias *i, and aliases are not supported; write the value out"}},
		{"two documents", "feeds:\n  - name: a\n    url: https://a.test/\n---\nfeeds: []\n", []string{"4:1: a second YAML document starts here; remove the '---' separator"}},
		{"several problems at once", "feeds:\n  - name: a\n    url: ftp://x\n  - name: b\n    url: https://b.test/\n    interval: 2s\n    severity: loud\n",
			[]string{"3:10: feeds[0].url", "6:15: feeds[1].interval", "7:15: feeds[1].severity"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseFile("", []byte(tc.src))
			if err == nil {
				t.Fatal("accepted")
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *ConfigError", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "feeds.yaml")
	if err := os.WriteFile(path, []byte("feeds:\n  - name: a\n    url: gopher://a.test/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":3:10: feeds[0].url:") {
		t.Fatalf("error %v does not start with %s:3:10: feeds[0].url:", err, path)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("a missing file loaded")
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("#"+strings.Repeat("x", maxFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("an oversized file: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := file{Feeds: []feed{{Name: "a", URL: "https://a.test/"}}}
	rdb := testRedis(t)
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no redis", func(c *Config) { c.Redis = nil }, "Config.Redis is required"},
		{"no dispatcher", func(c *Config) { c.Dispatcher = nil }, "Config.Dispatcher is required"},
		{"negative concurrency", func(c *Config) { c.Concurrency = -1 }, "HERALD_FEEDS_CONCURRENCY (-feeds-concurrency) must be >= 1, got -1"},
		{"negative body limit", func(c *Config) { c.MaxBodyBytes = -1 }, "Config.MaxBodyBytes"},
		{"short state ttl", func(c *Config) { c.StateTTL = time.Minute }, "Config.StateTTL"},
		{"no feeds", func(c *Config) { c.File = file{} }, "feeds: no feeds"},
		{"bad feed in code", func(c *Config) { c.File = file{Feeds: []feed{{Name: "a", URL: "file:///etc/passwd"}}} }, "feeds[0].url: must start with http"},
	} {
		cfg := Config{File: ok, Redis: rdb, Dispatcher: &recorder{}}
		tc.edit(&cfg)
		if _, err := newFeedPoller(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	p, err := newFeedPoller(Config{File: ok, Redis: rdb, Dispatcher: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	c := p.cfg
	if c.Concurrency != DefaultConcurrency || c.MaxBodyBytes != defaultMaxBodyBytes || c.MaxBackoff != defaultMaxBackoff ||
		c.SeenLimit != defaultSeenLimit || c.MaxNewPerPoll != defaultMaxNewPerPoll || c.StateTTL != defaultStateTTL {
		t.Fatalf("defaults %+v", c)
	}
}
