package worker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/worker"
)

// samples gives every setting of worker.Config a valid value other than its
// default, with the value Get renders it back as.
var samples = map[string]struct{ in, out string }{
	worker.EnvRetryAfterUnit:  {"100ms", "100ms"},
	worker.EnvConcurrency:     {" 8 ", "8"},
	worker.EnvWaiters:         {"-1", "-1"},
	worker.EnvWaitLong:        {"30s", "30s"},
	worker.EnvStrictPriority:  {"true", "true"},
	worker.EnvShutdownTimeout: {"5s", "5s"},
	worker.EnvBackoffBase:     {"1s", "1s"},
	worker.EnvBackoffCap:      {"1m", "1m"},
	worker.EnvSentRetention:   {"48h", "48h"},
	worker.EnvLeaseRecovery:   {"20s", "20s"},
	worker.EnvMaxIdle:         {"2s", "2s"},
	worker.EnvPaidBroadcast:   {"true", "true"},
	worker.EnvPaidLimit:       {"50/100ms", "50/100ms"},
	worker.EnvPaidBudget:      {"25", "25"},
}

// TestSettingsRoundTrip loads every setting of worker.Config from the
// environment with a value other than its default: each must be taken,
// render back, pass Check, and reach the Config that New is given.
func TestSettingsRoundTrip(t *testing.T) {
	c := worker.Config{}.WithDefaults()
	specs := c.Specs()
	env := map[string]string{}
	for _, s := range specs {
		v, ok := samples[s.Env]
		if !ok {
			t.Errorf("%s has no sample value in this test", s.Env)
			continue
		}
		if strings.TrimSpace(v.in) == s.Default {
			t.Errorf("%s: the sample %q is the default; pick another", s.Env, v.in)
		}
		env[s.Env] = v.in
	}
	if _, err := config.Load("worker", specs, nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if v, ok := samples[s.Env]; ok && s.Get() != v.out {
			t.Errorf("%s=%q reads back as %q, want %q", s.Env, v.in, s.Get(), v.out)
		}
	}
	var p config.Problems
	c.Check(&p)
	if err := p.Err(); err != nil {
		t.Fatalf("the samples do not pass Check: %v", err)
	}
	if c.Concurrency != 8 || c.Waiters != -1 || c.SentRetention != 48*time.Hour || !c.StrictPriority || !c.Paid.On || c.Paid.Budget != 25 {
		t.Fatalf("the settings did not reach the Config: %+v", c)
	}
}

// TestCheck reports each out-of-bounds setting by its variable, with the
// fix.
func TestCheck(t *testing.T) {
	tests := []struct {
		mutate func(*worker.Config)
		want   string
	}{
		{func(c *worker.Config) { c.Concurrency = -1 }, "HERALD_CONCURRENCY (-concurrency) must be >= 1, got -1"},
		{func(c *worker.Config) { c.Waiters = -2 }, "HERALD_WAITERS (-waiters) must be -1 (none) or more, got -2"},
		{func(c *worker.Config) { c.WaitLong = 2 * time.Hour }, "HERALD_WAIT_LONG (-wait-long) must be between 0 and 1h"},
		{func(c *worker.Config) { c.BackoffBase = time.Hour }, "HERALD_BACKOFF_BASE (-backoff-base) is 1h, above HERALD_BACKOFF_CAP (-backoff-cap) which is 10m"},
		{func(c *worker.Config) { c.SentRetention = time.Millisecond }, "HERALD_SENT_RETENTION (-sent-retention) must be at least 1s"},
		{func(c *worker.Config) { c.LeaseRecoveryAfter = 5 * time.Second }, "HERALD_LEASE_RECOVERY_AFTER (-lease-recovery-after) must be between 10s and 29s"},
		{func(c *worker.Config) { c.RetryAfterUnit = 2 * time.Second }, "TELEGRAM_RETRY_AFTER_UNIT (-telegram-retry-after-unit) must be above 0 and at most 1s"},
		{func(c *worker.Config) { c.MaxIdle = time.Millisecond }, "HERALD_MAX_IDLE (-max-idle) must be between 100ms and 10m"},
		{func(c *worker.Config) { c.ShutdownTimeout = -time.Second }, "HERALD_SHUTDOWN_TIMEOUT (-shutdown-timeout) must be > 0"},
		{func(c *worker.Config) {
			c.Paid = worker.PaidBroadcast{On: true, Limit: ratelimit.Per(2000, time.Second)}
		},
			"HERALD_PAID_LIMIT (-paid-limit) allows 2000/s, above Telegram's cap of 1000 sends per 1s for paid broadcasts; lower it to at most 1000/s"},
		{func(c *worker.Config) {
			c.Paid = worker.PaidBroadcast{On: true, Limit: ratelimit.Per(5, 5*time.Millisecond)}
		},
			"HERALD_PAID_LIMIT (-paid-limit) has the window 5/5ms, not longer than the 2 times HERALD_LIMIT_GUARD (20ms) the paid windows keep"},
		{func(c *worker.Config) { c.Paid = worker.PaidBroadcast{On: true, Budget: -5} }, "HERALD_PAID_BUDGET (-paid-budget) must be 0 (no budget)"},
	}
	for _, tc := range tests {
		c := worker.Config{}.WithDefaults()
		tc.mutate(&c)
		var p config.Problems
		c.Check(&p)
		if err := p.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check = %v, want %q", err, tc.want)
		}
	}
	var p config.Problems
	worker.Config{}.WithDefaults().Check(&p)
	if err := p.Err(); err != nil {
		t.Fatalf("the defaults fail Check: %v", err)
	}
}
