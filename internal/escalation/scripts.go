package escalation

import (
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Every key the scripts touch carries the {herald} tag (package keys), so
// that on a Redis Cluster each script's keys share a slot. The scripts that
// read the clock begin with keys.ClockPrelude: times are unix microseconds
// of Redis's own clock, and their last argument is "" for TIME or a time in
// µs that replaces it (tests).

// beginScript creates the escalation of a firing alert, once: while the
// record exists (the alert fired before and has not resolved, whether the
// escalation is still under way, acknowledged or done), a repeat of the
// alert changes nothing.
//
// KEYS[1] the record (keys.Escalation), KEYS[2] the due set
// (keys.EscalationsDue), KEYS[3...] the homes (keys.EscalationHome).
// ARGV[1] id, ARGV[2] retention ms, ARGV[3] a JSON object of the fields
// to write, ARGV[4] the first position, ARGV[5] the clock.
// Returns 1 when it created the escalation (due now), 0 when one exists.
var beginScript = redis.NewScript(keys.ClockPrelude + `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = now_us()
local f = cjson.decode(ARGV[3])
for k, v in pairs(f) do redis.call('HSET', KEYS[1], k, v) end
redis.call('HSET', KEYS[1], 'state', 'active', 'pos', ARGV[4], 'incident', ARGV[1] .. '.' .. us(now), 'begun', us(now))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], us(now), ARGV[1])
for i = 3, #KEYS do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end
return 1
`)

// claimScript leases the escalations that are due to the caller: their
// score in the due set becomes the lease's end, so that no other producer
// takes them until it runs out (a caller that dies is replaced then).
//
// KEYS[1] the due set.
// ARGV[1] lease µs, ARGV[2] most ids, ARGV[3] the clock.
// Returns {now µs, lease end µs, id...}.
var claimScript = redis.NewScript(keys.ClockPrelude + `
local now = now_us()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', us(now), 'LIMIT', 0, tonumber(ARGV[2]))
local until_ = us(now + tonumber(ARGV[1]))
for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], 'XX', until_, id) end
return {us(now), until_, unpack(ids)}
`)

// advanceScript moves an escalation on, once: only the holder of the
// lease, and only from the position it read, while the escalation is
// active. A record gone (the alert resolved) or no longer active
// (acknowledged, silenced) leaves the due set instead.
//
// KEYS[1] the record, KEYS[2] the due set.
// ARGV[1] id, ARGV[2] the caller's lease end µs, ARGV[3] the position
// read, ARGV[4] the new position, ARGV[5] the new state, ARGV[6] when it
// is due next, µs ("" never: it leaves the due set), ARGV[7] retention
// ms.
// Returns 1 when it moved the escalation, 0 when the lease or the
// position was not the caller's, 2 when the escalation is over.
var advanceScript = redis.NewScript(`
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'active' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 2
end
if redis.call('HGET', KEYS[1], 'pos') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'pos', ARGV[4], 'state', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
if ARGV[6] == '' then
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
end
return 1
`)

// ackScript records the acknowledgement of an escalation, once, and stops
// it.
//
// KEYS[1] the record, KEYS[2] the due set.
// ARGV[1] id, ARGV[2] who, ARGV[3] when, µs.
// Returns {0} without a record, {2} when it was acknowledged already,
// else {1, fired µs, policy}.
var ackScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {0} end
if state == 'acked' then return {2} end
redis.call('HSET', KEYS[1], 'state', 'acked', 'acked_by', ARGV[2], 'acked_at', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
return {1, redis.call('HGET', KEYS[1], 'fired'), redis.call('HGET', KEYS[1], 'policy')}
`)

// resolveScript forgets the escalation of an alert that resolved, and
// its homes: the alert's next firing escalates afresh.
//
// KEYS[1] the record, KEYS[2] the due set, KEYS[3...] the homes.
// ARGV[1] id.
// Returns 1 when there was an escalation.
var resolveScript = redis.NewScript(`
local existed = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
for i = 3, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return existed
`)
