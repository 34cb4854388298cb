package statushook

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Reasons an endpoint is disabled for, the values of
// herald_callback_endpoints_disabled_total's reason and of an endpoint's
// disabled_reason.
const (
	// disabledGone: the receiver answered 410 Gone.
	disabledGone = "gone"
	// disabledFailing: it failed for longer than DisableAfter without a
	// success.
	disabledFailing = "failing"
)

// The fields of an endpoint's health record (keys.HookEndpoint).
// Times are unix milliseconds.
const (
	fieldFirstFailure   = "first_failure"
	fieldLastFailure    = "last_failure"
	fieldLastError      = "last_error"
	fieldFailures       = "failures"
	fieldDisabledAt     = "disabled_at"
	fieldDisabledReason = "disabled_reason"
)

// health keeps each endpoint's record in Redis, shared by the fleet. A
// healthy endpoint has none. The first failed attempt starts a run of
// failures (its time, the last error, a count); a delivered one ends it
// (the record is deleted). A run that lasts longer than DisableAfter, or
// a 410, disables the endpoint: the record then stays, without expiry,
// until Enable deletes it. A run's record expires when no failure renews
// it for ttl, so failures far apart (a receiver that had one bad minute a
// week ago) do not add up to a run.
type health struct {
	rdb redis.UniversalClient
}

// standing is what one endpoint's record says before an attempt.
type standing struct {
	failing  bool // a run of failures is under way
	disabled bool
	since    time.Time // when it was disabled
	reason   string    // why (disabledGone, disabledFailing)
}

// before reads an endpoint's standing: one HMGET.
func (h health) before(ctx context.Context, endpoint string) (standing, error) {
	v, err := h.rdb.HMGet(ctx, keys.HookEndpoint(endpoint), fieldFirstFailure, fieldDisabledAt, fieldDisabledReason).Result()
	if err != nil {
		return standing{}, err
	}
	s := standing{failing: v[0] != nil, disabled: v[1] != nil}
	if s.disabled {
		s.since = fromMillis(v[1])
		s.reason, _ = v[2].(string)
	}
	return s, nil
}

// failureScript records a failed attempt and disables the endpoint when
// its run of failures has lasted longer than the limit.
//
// KEYS[1] the endpoint's record. ARGV[1] the endpoint, ARGV[2] now (unix
// ms), ARGV[3] the error, ARGV[4] the limit (ms), ARGV[5] the record's
// expiry (ms), ARGV[6] the reason to disable with.
// Returns 0 (recorded), 1 (disabled now) or 2 (disabled already).
var failureScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'disabled_at') == 1 then return 2 end
redis.call('HSETNX', KEYS[1], 'first_failure', ARGV[2])
redis.call('HSET', KEYS[1], 'endpoint', ARGV[1], 'last_failure', ARGV[2], 'last_error', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'failures', 1)
local first = tonumber(redis.call('HGET', KEYS[1], 'first_failure'))
if tonumber(ARGV[2]) - first > tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[1], 'disabled_at', ARGV[2], 'disabled_reason', ARGV[6])
  redis.call('PERSIST', KEYS[1])
  return 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 0
`)

// The answers of failureScript.
const (
	failureRecorded = iota
	failureDisabled
	failureAlreadyDisabled
)

// failure records a failed attempt; limit is DisableAfter and ttl how long
// the run is kept without another failure. It returns one of the answers
// of failureScript.
func (h health) failure(ctx context.Context, endpoint string, now time.Time, reason string, limit, ttl time.Duration) (int, error) {
	return failureScript.Run(ctx, h.rdb, []string{keys.HookEndpoint(endpoint)},
		endpoint, now.UnixMilli(), reason, limit.Milliseconds(), max(ttl, time.Second).Milliseconds(), disabledFailing).Int()
}

// disableScript disables an endpoint at once.
//
// KEYS[1] the endpoint's record. ARGV[1] the endpoint, ARGV[2] now (unix
// ms), ARGV[3] the reason, ARGV[4] the error. Returns 1 when it disabled
// the endpoint, 0 when it was disabled already.
var disableScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], 'disabled_at', ARGV[2]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'endpoint', ARGV[1], 'disabled_reason', ARGV[3], 'last_error', ARGV[4])
redis.call('PERSIST', KEYS[1])
return 1
`)

// disable disables an endpoint (a 410) and reports whether this call did.
func (h health) disable(ctx context.Context, endpoint string, now time.Time, reason, lastErr string) (bool, error) {
	n, err := disableScript.Run(ctx, h.rdb, []string{keys.HookEndpoint(endpoint)}, endpoint, now.UnixMilli(), reason, lastErr).Int()
	return n == 1, err
}

// successScript ends a run of failures, unless the endpoint was disabled
// meanwhile (by another worker's 410). KEYS[1] the endpoint's record.
var successScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'disabled_at') == 0 then redis.call('DEL', KEYS[1]) end
return 0
`)

// success ends a run of failures; call it only when before said failing,
// so that a healthy endpoint's delivery costs no write.
func (h health) success(ctx context.Context, endpoint string) error {
	return successScript.Run(ctx, h.rdb, []string{keys.HookEndpoint(endpoint)}).Err()
}

// enable deletes an endpoint's record, disabled or failing, and reports
// whether it was disabled.
func (h health) enable(ctx context.Context, endpoint string) (bool, error) {
	key := keys.HookEndpoint(endpoint)
	var was *redis.BoolCmd
	_, err := h.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		was = p.HExists(ctx, key, fieldDisabledAt)
		p.Del(ctx, key)
		return nil
	})
	return was.Val(), err
}

// record is an endpoint's health record as read whole.
type record struct {
	FirstFailure, LastFailure, DisabledAt time.Time
	LastError, DisabledReason             string
	Failures                              int
}

// read returns an endpoint's record; the zero record when it has none.
func (h health) read(ctx context.Context, endpoint string) (record, error) {
	m, err := h.rdb.HGetAll(ctx, keys.HookEndpoint(endpoint)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return record{}, err
	}
	n, _ := strconv.Atoi(m[fieldFailures])
	return record{
		FirstFailure: fromMillis(m[fieldFirstFailure]), LastFailure: fromMillis(m[fieldLastFailure]),
		DisabledAt: fromMillis(m[fieldDisabledAt]), LastError: m[fieldLastError],
		DisabledReason: m[fieldDisabledReason], Failures: n,
	}, nil
}

// fromMillis reads a unix-milliseconds field; the zero time when absent or
// not a number.
func fromMillis(v any) time.Time {
	s, _ := v.(string)
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
