package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/settings"
)

// oldOnCallExample is docs/ONCALL.md's "Escalation policies" example as it
// stood before issue 38, with the worked example's schedules it named:
// "@carol" names nobody (Carol has no username), and the steps repeat
// after a last step without a wait. `producer serve` refused it.
const oldOnCallExample = `schedules:
  - name: primary
    time_zone: Europe/Berlin
    users:
      - {id: 111111111, name: Alice, username: alice}
      - {id: 333333333, name: Carol}
    layers:
      - {users: ["@alice", 333333333], shift: weekly, handoff: "09:00", start: 2026-01-05}
escalation_policies:
  - name: db-critical
    steps:
      - notify: [{chat: "-1001000000001", thread: 7, name: DB team}]
        wait: 2m
      - notify: {on_call: primary}
        wait: 4m
      - notify: [{user: "@carol"}, {user: {id: 444444444, name: Dana}}]
    repeat: 1
    repeat_interval: 30m
routes:
  - name: db
    escalation: db-critical
    destinations: ["-1001000000001"]
`

// checkConfig is a producer's settings with env on top of an open API.
func checkConfig(t *testing.T, env map[string]string) (settings.Producer, func(string) string) {
	t.Helper()
	env[httpapi.EnvAuthDisabled] = "true"
	getenv := func(k string) string { return env[k] }
	cfg, err := settings.LoadProducer(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, getenv
}

func tempFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckRefusesWhatServeRefuses: `producer check` loads the routing file
// as serve does (LoadRoutes), and so refuses the old ONCALL.md example
// with serve's own words, at its lines.
func TestCheckRefusesWhatServeRefuses(t *testing.T) {
	t.Parallel()
	cfg, getenv := checkConfig(t, map[string]string{alerts.EnvRoutesFile: tempFile(t, "routes.yaml", oldOnCallExample)})
	_, serveErr := LoadRoutes(cfg)
	if serveErr == nil {
		t.Fatal("serve's loader takes the old example")
	}
	err := CheckProducer(cfg, getenv)
	if err == nil {
		t.Fatal("producer check says the old example is OK")
	}
	for _, want := range []string{serveErr.Error(), `"@carol" names no user of the schedules`, "give the last step a wait:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("check's error\n%v\nlacks\n%s", err, want)
		}
	}
}

// TestCheckNamesAUserOfUsersOnly: a user listed only in a schedule's users:
// (on call in no layer) may be named in a policy by @username.
func TestCheckNamesAUserOfUsersOnly(t *testing.T) {
	t.Parallel()
	fixed := strings.NewReplacer("{id: 333333333, name: Carol}", "{id: 333333333, name: Carol, username: carol}",
		`["@alice", 333333333]`, `["@alice"]`,
		"      - notify: [{user: \"@carol\"}, {user: {id: 444444444, name: Dana}}]\n",
		"      - notify: [{user: \"@carol\"}, {user: {id: 444444444, name: Dana}}]\n        wait: 10m\n").Replace(oldOnCallExample)
	cfg, getenv := checkConfig(t, map[string]string{alerts.EnvRoutesFile: tempFile(t, "routes.yaml", fixed)})
	if err := CheckProducer(cfg, getenv); err != nil {
		t.Fatalf("check refuses a policy naming a user of users: only: %v", err)
	}
}

// TestCheckLoadsTheFeedList: the feed list of HERALD_FEEDS_FILE is read as
// `producer feeds` reads it; a missing or wrong one is refused.
func TestCheckLoadsTheFeedList(t *testing.T) {
	t.Parallel()
	good := tempFile(t, "feeds.yaml", "feeds:\n  - name: go\n    url: https://go.dev/blog/feed.atom\n")
	bad := tempFile(t, "feeds.yaml", "feeds:\n  - name: go\n    url: https://go.dev/blog/feed.atom\n    intervall: 1h\n")
	for path, ok := range map[string]bool{good: true, bad: false, filepath.Join(t.TempDir(), "none.yaml"): false} {
		cfg, getenv := checkConfig(t, map[string]string{feeds.EnvFile: path})
		err := CheckProducer(cfg, getenv)
		if ok != (err == nil) {
			t.Errorf("%s: check says %v", path, err)
		}
		if err != nil && !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%s: the error does not name the file: %v", path, err)
		}
	}
}
