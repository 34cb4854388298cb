package silences

import (
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Times in the scripts are unix milliseconds from the caller's clock: a
// silence's start and end are wall-clock times a person chose, and a few
// milliseconds of skew between producers do not matter to them. Lua
// numbers are doubles, exact for millisecond times. Every key is a
// fleet-wide {herald} key, so each script runs in one hash slot.

// A silence's meta entry (KEYS[3], field = its id) is "rev:size": rev
// counts the writes of its record (1 when created, one more at each
// replaceScript), size is its regular expressions' program size
// (Silence.ProgramSize). The cache reads the entries of the live silences
// to know which it has compiled already; createScript sums their sizes.

// trimLua is a Lua function, put in front of the scripts that use it,
// that removes the oldest expired silences (end <= now) beyond keep, at
// most most of them, and returns how many it removed.
const trimLua = `
local function trim(now, keep, most)
  local n = redis.call('ZCOUNT', KEYS[2], '-inf', now) - tonumber(keep)
  if n <= 0 then return 0 end
  local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, math.min(n, tonumber(most)))
  for _, id in ipairs(ids) do
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('ZREM', KEYS[2], id)
  end
  return #ids
end
`

// trimPerWrite is how many expired silences one create or expire removes
// at most; Collect removes the rest.
const trimPerWrite = 100

// createScript stores a new silence unless the live ones are at the cap,
// or their regular expressions and its own would pass the fleet's
// budget. It also trims the expired silences.
//
// KEYS[1] silences hash, KEYS[2] ends zset, KEYS[3] meta hash.
// ARGV[1] id, ARGV[2] record JSON, ARGV[3] end ms, ARGV[4] now ms,
// ARGV[5] most live silences, ARGV[6] its program size, ARGV[7] the
// budget of the live silences' program sizes, ARGV[8] most expired
// silences kept.
// Returns {1} when stored, {0} when the cap is reached, {-1} when the id
// is taken, {-2, size of the live ones} when the budget would be passed.
var createScript = redis.NewScript(trimLua + `
local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[4], '+inf')
if #live >= tonumber(ARGV[5]) then
  return {0}
end
local size = tonumber(ARGV[6])
if size > 0 then
  local used = 0
  for i = 1, #live, 500 do
    local part = {}
    for j = i, math.min(i + 499, #live) do part[#part + 1] = live[j] end
    for _, m in ipairs(redis.call('HMGET', KEYS[3], unpack(part))) do
      if m then used = used + (tonumber(string.match(m, ':(%d+)$')) or 0) end
    end
  end
  if used + size > tonumber(ARGV[7]) then
    return {-2, used}
  end
end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return {-1}
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], '1:' .. ARGV[6])
trim(ARGV[4], ARGV[8], ` + strconv.Itoa(trimPerWrite) + `)
return {1}
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

// liveScript lists the live silences (end after now) with their end and
// meta entry, soonest end first, but not their records: the cache fetches
// only the records it has not compiled.
//
// KEYS[2] ends zset, KEYS[3] meta hash.
// ARGV[1] now ms.
// Returns {id, end ms, meta entry or "", id, ...}.
var liveScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf', 'WITHSCORES')
local out = {}
for i = 1, #ids, 2 do
  out[#out + 1] = ids[i]
  out[#out + 1] = ids[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[3], ids[i]) or ''
end
return out
`)

// replaceScript rewrites a silence if nobody changed it since the caller
// read it (compare and set), moves its end and counts the write in its
// meta entry. It also trims the expired silences.
//
// KEYS[1] silences hash, KEYS[2] ends zset, KEYS[3] meta hash.
// ARGV[1] id, ARGV[2] the record as read, ARGV[3] the new record,
// ARGV[4] the new end ms, ARGV[5] now ms, ARGV[6] most expired silences
// kept, ARGV[7] its program size (for a record that has no meta entry).
// Returns 1 when replaced, 0 when the record changed meanwhile, -1 when
// it is gone.
var replaceScript = redis.NewScript(trimLua + `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return -1 end
if cur ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
local rev, size = 0, ARGV[7]
local m = redis.call('HGET', KEYS[3], ARGV[1])
if m then
  local r, sz = string.match(m, '^(%d+):(%d+)$')
  if r then rev, size = tonumber(r), sz end
end
redis.call('HSET', KEYS[3], ARGV[1], (rev + 1) .. ':' .. size)
trim(ARGV[5], ARGV[6], ` + strconv.Itoa(trimPerWrite) + `)
return 1
`)

// collectScript removes silences that ended before a cutoff, then the
// oldest expired ones beyond the number kept.
//
// KEYS[1] silences hash, KEYS[2] ends zset, KEYS[3] meta hash.
// ARGV[1] cutoff ms, ARGV[2] most silences to remove, ARGV[3] now ms,
// ARGV[4] most expired silences kept.
// Returns how many were removed.
var collectScript = redis.NewScript(trimLua + `
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZREM', KEYS[2], id)
end
local most = tonumber(ARGV[2]) - #ids
if most <= 0 then return #ids end
return #ids + trim(ARGV[3], ARGV[4], most)
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
