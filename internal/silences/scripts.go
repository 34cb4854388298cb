package silences

import "github.com/redis/go-redis/v9"

// Times in the scripts are unix milliseconds from the caller's clock: a
// silence's start and end are wall-clock times a person chose, and a few
// milliseconds of skew between producers do not matter to them. Lua
// numbers are doubles, exact for millisecond times. Every key is a
// fleet-wide {herald} key, so each script runs in one hash slot.

// createScript stores a new silence unless the live ones are at the cap.
//
// KEYS[1] silences hash, KEYS[2] ends zset.
// ARGV[1] id, ARGV[2] record JSON, ARGV[3] end ms, ARGV[4] now ms,
// ARGV[5] most live silences.
// Returns 1 when stored, 0 when the cap is reached, -1 when the id is
// taken.
var createScript = redis.NewScript(`
if redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[4], '+inf') >= tonumber(ARGV[5]) then
  return 0
end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return -1
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`)

// rangeScript reads the silences whose end lies in a range, soonest end
// first.
//
// KEYS[1] silences hash, KEYS[2] ends zset.
// ARGV[1] lowest end (a ZRANGEBYSCORE bound: "(ms" excludes it),
// ARGV[2] highest end (likewise, or "+inf"), ARGV[3] most silences.
// Returns the records' JSON; an id whose record is gone is skipped.
var rangeScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local rec = redis.call('HGET', KEYS[1], id)
  if rec then out[#out + 1] = rec end
end
return out
`)

// replaceScript rewrites a silence if nobody changed it since the caller
// read it (compare and set), and moves its end.
//
// KEYS[1] silences hash, KEYS[2] ends zset.
// ARGV[1] id, ARGV[2] the record as read, ARGV[3] the new record,
// ARGV[4] the new end ms.
// Returns 1 when replaced, 0 when the record changed meanwhile, -1 when
// it is gone.
var replaceScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return -1 end
if cur ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return 1
`)

// collectScript removes silences that ended before a cutoff.
//
// KEYS[1] silences hash, KEYS[2] ends zset.
// ARGV[1] cutoff ms, ARGV[2] most silences to remove.
// Returns how many were removed.
var collectScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
return #ids
`)

// holdScript stores a message held by quiet hours, unless its
// idempotency key is claimed already or the same item is held.
//
// KEYS[1] held hash, KEYS[2] due zset, KEYS[3] the item's idempotency
// claim ({herald}:idem:<item id>).
// ARGV[1] item id, ARGV[2] record JSON, ARGV[3] release ms, ARGV[4] queue,
// ARGV[5] claim ttl ms, 0 when the message has no idempotency key.
// Returns {1} when held; {0, queue} for a duplicate, with the queue that
// the first one went (or goes) to.
var holdScript = redis.NewScript(`
local claim = ARGV[5] ~= '0'
if claim then
  local q = redis.call('GET', KEYS[3])
  if q then return {0, q} end
end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return {0, ARGV[4]}
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
if claim then
  redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5], 'NX')
end
return {1}
`)

// takeScript leases the held messages whose release time has come to the
// caller: their score moves to the lease's end, so another releaser takes
// them only when the lease runs out. It also tells when the next held
// message not taken now is due (one leased by another releaser included),
// so releasers need not look before then.
//
// KEYS[1] held hash, KEYS[2] due zset.
// ARGV[1] now ms, ARGV[2] lease end ms, ARGV[3] most messages.
// Returns {flat list: id, record JSON, id, record JSON, ...; when the next
// held message not taken is due, in ms, or "" when there is none}.
var takeScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local nx = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local out = {}
for _, id in ipairs(ids) do
  local rec = redis.call('HGET', KEYS[1], id)
  if rec then
    redis.call('ZADD', KEYS[2], ARGV[2], id)
    out[#out + 1] = id
    out[#out + 1] = rec
  else
    redis.call('ZREM', KEYS[2], id)
  end
end
return {out, nx[2] or ''}
`)
