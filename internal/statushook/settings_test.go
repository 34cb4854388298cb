package statushook_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/statushook"
)

// load binds c's settings and applies env, as the binaries do.
func load(t *testing.T, env map[string]string) (statushook.Config, error) {
	t.Helper()
	c := statushook.Config{}.WithDefaults()
	if _, err := config.Load("test", c.Specs(), nil, func(k string) string { return env[k] }); err != nil {
		return c, err
	}
	var p config.Problems
	c.Check(&p)
	return c, p.Err()
}

func TestSettingsRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, map[string]string{
		statushook.EnvSecretFile: file, statushook.EnvAllow: " 127.0.0.1, 10.0.0.0/8 ,hooks.internal,",
		statushook.EnvRetrySchedule: "1s, 1m", statushook.EnvDisableAfter: "1h", statushook.EnvTimeout: "5s", statushook.EnvConcurrency: "4",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := statushook.Config{SecretFile: file, Allow: []string{"127.0.0.1", "10.0.0.0/8", "hooks.internal"},
		Schedule: statushook.Schedule{time.Second, time.Minute}, DisableAfter: time.Hour, Timeout: 5 * time.Second, Concurrency: 4}
	if !reflect.DeepEqual(c, want) || !c.Enabled() {
		t.Fatalf("loaded %+v, want %+v", c, want)
	}
	if d, _ := load(t, nil); d.Enabled() || d.Schedule.String() != "5s,5m,30m,2h,5h,10h,10h" || d.DisableAfter != 120*time.Hour ||
		d.Timeout != 15*time.Second || d.Concurrency != 32 {
		t.Fatalf("defaults %+v", d)
	}
}

func TestSettingsRefuse(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{statushook.EnvSecret: "plain-words"}, `HERALD_CALLBACK_SECRET (-callback-secret) signing secret: does not start with "whsec_"; generate one with`},
		{map[string]string{statushook.EnvSecret: "whsec_c2hvcnQ="}, "key is 5 bytes"},
		{map[string]string{statushook.EnvSecret: testKey, statushook.EnvSecretFile: "/x"}, "HERALD_CALLBACK_SECRET (-callback-secret) and HERALD_CALLBACK_SECRET_FILE"},
		{map[string]string{statushook.EnvAllow: "10.0.0.0/33"}, "HERALD_CALLBACK_ALLOW (-callback-allow) allow-list entry"},
		{map[string]string{statushook.EnvRetrySchedule: "5s,soon"}, `HERALD_CALLBACK_RETRY_SCHEDULE (-callback-retry-schedule) has "soon", which is not a duration`},
		{map[string]string{statushook.EnvRetrySchedule: "5s,48h"}, "has the wait 48h; each must be above 0 and at most 24h"},
		{map[string]string{statushook.EnvRetrySchedule: strings.Repeat("1s,", 20) + "1s"}, "must list 1 to 20 waits"},
		{map[string]string{statushook.EnvDisableAfter: "-1s"}, "HERALD_CALLBACK_DISABLE_AFTER (-callback-disable-after) must be above 0"},
		{map[string]string{statushook.EnvTimeout: "2m"}, "HERALD_CALLBACK_TIMEOUT (-callback-timeout) must be above 0 and at most 1m"},
		{map[string]string{statushook.EnvConcurrency: "0"}, "HERALD_CALLBACK_CONCURRENCY (-callback-concurrency) must be between 1 and 1024"},
	}
	for _, c := range cases {
		_, err := load(t, c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.env, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "plain-words") {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}

// TestSharedSpecsAreTheProducers: the producer binds the key and the
// allow-list alone, and CheckShared checks those alone.
func TestSharedSpecsAreTheProducers(t *testing.T) {
	var c statushook.Config
	var names []string
	for _, s := range c.SharedSpecs() {
		names = append(names, s.Env)
	}
	if want := []string{statushook.EnvSecret, statushook.EnvSecretFile, statushook.EnvAllow}; !reflect.DeepEqual(names, want) {
		t.Errorf("shared settings %v, want %v", names, want)
	}
	var p config.Problems
	c.CheckShared(&p) // the delivery's settings are unset, and no problem
	if err := p.Err(); err != nil {
		t.Errorf("CheckShared of the zero Config: %v", err)
	}
}
