package redisconn

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/durable"
)

// load reads the Redis settings as a binary does: defaults, then the
// environment, then flags, then Check.
func load(env map[string]string, args ...string) (Config, error) {
	c := Config{}.WithDefaults()
	if _, err := config.Load("test", c.Specs(), args, func(k string) string { return env[k] }); err != nil {
		return Config{}, err
	}
	var p config.Problems
	c.Check(&p)
	return c, p.Err()
}

// TestWaitSettings: HERALD_REDIS_WAIT_REPLICAS and _TIMEOUT parse,
// default and render back, and bad values name the setting and the fix.
func TestWaitSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value    string
		replicas int
		auto     bool
	}{{"", 0, true}, {"auto", 0, true}, {"AUTO", 0, true}, {"0", 0, false}, {"off", 0, false}, {"2", 2, false}} {
		c, err := load(map[string]string{EnvWaitReplicas: tc.value})
		if err != nil {
			t.Fatalf("%q: %v", tc.value, err)
		}
		want := durable.Config{Replicas: tc.replicas, Auto: tc.auto, Timeout: defaultWaitTimeout}
		if got := c.Durable(); got != want {
			t.Errorf("%q: Durable() = %+v, want %+v", tc.value, got, want)
		}
	}
	c, err := load(nil, "-redis-wait-replicas", "1", "-redis-wait-timeout", "250ms")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Durable(), (durable.Config{Replicas: 1, Timeout: 250 * time.Millisecond}); got != want {
		t.Errorf("flags: Durable() = %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvWaitReplicas: "two"}, `HERALD_REDIS_WAIT_REPLICAS (-redis-wait-replicas) must be auto, 0 (never wait) or a number of replicas such as 1, got "two"`},
		{map[string]string{EnvWaitReplicas: "-1"}, "HERALD_REDIS_WAIT_REPLICAS (-redis-wait-replicas) must be auto"},
		{map[string]string{EnvWaitReplicas: "65"}, "HERALD_REDIS_WAIT_REPLICAS (-redis-wait-replicas) is 65; use auto, 0 (never wait) or a number of replicas from 1 to 64"},
		{map[string]string{envWaitTimeout: "1"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) must be a duration with a unit"},
		{map[string]string{envWaitTimeout: "30s"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) is 30s; use a duration from 1ms to 10s such as 1s"},
		{map[string]string{envWaitTimeout: "-1s"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) is -1s"},
		{map[string]string{envWaitTimeout: "500us"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) is 500µs; Redis WAIT counts whole milliseconds"},
		{map[string]string{EnvURL: "memcached://x"}, `REDIS_URL (-redis-url) "memcached://x" has unsupported scheme "memcached"`},
	} {
		_, err := load(tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %q", tc.env, err, tc.want)
		}
	}
	var shown []string
	for _, s := range (&Config{}).Specs() {
		shown = append(shown, s.Env+"="+s.Default)
	}
	if strings.Join(shown, " ") != "REDIS_URL=redis://127.0.0.1:6379/0 HERALD_REDIS_WAIT_REPLICAS=auto HERALD_REDIS_WAIT_TIMEOUT=1s" {
		t.Errorf("documented defaults: %v", shown)
	}
}

// TestDurableZeroTimeout: a Config that skipped WithDefaults waits the
// default timeout, and WaitOff turns the waits off.
func TestDurableZeroTimeout(t *testing.T) {
	t.Parallel()
	if got, want := (Config{WaitReplicas: waitOff}).Durable(), (durable.Config{Timeout: defaultWaitTimeout}); got != want {
		t.Errorf("Durable() = %+v, want %+v", got, want)
	}
}

// TestSpecsShowRedactedURL: the rendered settings mask the URL's password.
func TestSpecsShowRedactedURL(t *testing.T) {
	t.Parallel()
	c := Config{URL: "redis://u:s3cret@cache:6379/0"}
	if got := config.Render(c.Specs()[:1]); got != "REDIS_URL=redis://u:xxxxx@cache:6379/0" {
		t.Errorf("Render = %q", got)
	}
}
