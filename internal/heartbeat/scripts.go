package heartbeat

import "github.com/redis/go-redis/v9"

// Times and durations inside the scripts are unix microseconds and
// microseconds, from Redis's own clock (TIME), so that every replica agrees
// whatever its local clock says. Lua numbers are doubles: microsecond times
// (about 1.8e15) are exact, and every value is written back through
// string.format('%d') because tostring would round it to 14 digits. The JSON
// records hold numbers as strings for the same reason.
//
// A heartbeat record (a field of the records hash) is a JSON object:
//
//	interval   declared interval, µs
//	grace      declared grace, µs, or "" for the default
//	grace_eff  grace in force, µs
//	severity   critical, warning or info
//	labels     object of strings
//	state      "up" or "down"
//	created    first ping, µs
//	last_ping  last ping, µs
//	deadline   last_ping + interval + grace_eff, µs
//	down_since when the check found it overdue, µs (only while down)
//
// A notification (a member of the outbox) is a JSON object: n name, k "down"
// or "up", t the last ping before the outage (µs; it names the outage),
// at when the notification was created, dl the missed deadline, ds when it
// was found down (up only), i interval, g grace, s severity, l labels.
const luaPrelude = `
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function us(x) return string.format('%d', x) end
`

// pingScript records a ping.
//
// KEYS[1] records hash, KEYS[2] deadlines zset, KEYS[3] outbox zset.
// ARGV[1] name, ARGV[2] interval µs or "" (keep), ARGV[3] grace µs or ""
// (keep), ARGV[4] severity or "" (keep), ARGV[5] labels JSON or "" (keep),
// ARGV[6] lease µs, ARGV[7] default grace fraction, ARGV[8] minimum default
// grace µs, ARGV[9] default severity, ARGV[10] most heartbeats (0: no cap).
// Returns {0} when the heartbeat is new and no interval was given, {2} when
// it is new and the records hash already holds the most heartbeats; otherwise
// {1, stored record JSON, created 0/1, now µs, lease end µs,
// notifications...}: when the ping ends an outage, the recovery notification
// and any notifications of the heartbeat still waiting in the outbox, all
// leased to the caller until the lease end (their score in the outbox).
var pingScript = redis.NewScript(luaPrelude + `
local name = ARGV[1]
local now = now_us()
local raw = redis.call('HGET', KEYS[1], name)
local rec, created = nil, 0
if raw then
  rec = cjson.decode(raw)
else
  if ARGV[2] == '' then return {0} end
  local cap = tonumber(ARGV[10])
  if cap > 0 and redis.call('HLEN', KEYS[1]) >= cap then return {2} end
  rec = {created = us(now), severity = ARGV[9], labels = {}, grace = ''}
  created = 1
end
if ARGV[2] ~= '' then rec.interval = ARGV[2] end
if ARGV[3] ~= '' then rec.grace = ARGV[3] end
if ARGV[4] ~= '' then rec.severity = ARGV[4] end
if ARGV[5] ~= '' then rec.labels = cjson.decode(ARGV[5]) end
local interval = tonumber(rec.interval)
local grace
if rec.grace ~= nil and rec.grace ~= '' then
  grace = tonumber(rec.grace)
else
  grace = math.max(tonumber(ARGV[8]), math.floor(interval * tonumber(ARGV[7])))
end
local out = {}
local until_ = now + tonumber(ARGV[6])
if rec.state == 'down' then
  for _, ev in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', us(now))) do
    local ok, e = pcall(cjson.decode, ev)
    if ok and e.n == name then
      redis.call('ZADD', KEYS[3], 'XX', us(until_), ev)
      table.insert(out, ev)
    end
  end
  local up = cjson.encode({n = name, k = 'up', t = rec.last_ping, at = us(now), dl = rec.deadline,
    ds = rec.down_since, i = rec.interval, g = us(grace), s = rec.severity, l = rec.labels})
  redis.call('ZADD', KEYS[3], us(until_), up)
  table.insert(out, up)
end
rec.state = 'up'
rec.down_since = nil
rec.last_ping = us(now)
rec.grace_eff = us(grace)
local deadline = now + interval + grace
rec.deadline = us(deadline)
local stored = cjson.encode(rec)
redis.call('HSET', KEYS[1], name, stored)
redis.call('ZADD', KEYS[2], us(deadline), name)
return {1, stored, created, us(now), us(until_), unpack(out)}
`)

// checkScript turns overdue heartbeats down and claims due notifications.
// A heartbeat is overdue when its deadline is before now; the up→down
// transition happens here and only here, so it happens once whatever the
// number of replicas checking.
//
// KEYS[1] records hash, KEYS[2] deadlines zset, KEYS[3] outbox zset.
// ARGV[1] lease µs, ARGV[2] batch size.
// Returns {now µs, newly overdue count, lease end µs, claimed
// notifications...}: every notification due (new ones and ones whose lease
// ran out or was released), at most batch size, each now leased to the
// caller until the lease end (its score in the outbox).
var checkScript = redis.NewScript(luaPrelude + `
local now = now_us()
local batch = tonumber(ARGV[2])
local names = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. us(now), 'LIMIT', 0, batch)
local overdue = 0
for _, name in ipairs(names) do
  redis.call('ZREM', KEYS[2], name)
  local raw = redis.call('HGET', KEYS[1], name)
  if raw then
    local rec = cjson.decode(raw)
    if rec.state == 'up' then
      rec.state = 'down'
      rec.down_since = us(now)
      redis.call('HSET', KEYS[1], name, cjson.encode(rec))
      local ev = cjson.encode({n = name, k = 'down', t = rec.last_ping, at = us(now), dl = rec.deadline,
        i = rec.interval, g = rec.grace_eff, s = rec.severity, l = rec.labels})
      redis.call('ZADD', KEYS[3], 0, ev)
      overdue = overdue + 1
    end
  end
end
local until_ = us(now + tonumber(ARGV[1]))
local out = {us(now), overdue, until_}
for _, ev in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', us(now), 'LIMIT', 0, batch)) do
  redis.call('ZADD', KEYS[3], 'XX', until_, ev)
  table.insert(out, ev)
end
return out
`)

// handoverScript is the last step before a claimed notification is handed
// to the dispatcher: it succeeds only while the notification is still in the
// outbox under the caller's lease, and then renews the lease for the
// dispatch. A DELETE (deleteScript removes the notification) or another
// replica that took over an expired lease (the score changed) makes it fail,
// and the caller drops the notification. Scripts run one at a time, so a
// DELETE is ordered either before the handover (nothing is dispatched) or
// after it (the dispatch already under way completes).
//
// KEYS[1] outbox zset.
// ARGV[1] notification, ARGV[2] the caller's lease end µs, ARGV[3] lease µs.
// Returns the renewed lease end µs, or false when the notification is no
// longer the caller's.
var handoverScript = redis.NewScript(luaPrelude + `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return false end
local until_ = us(now_us() + tonumber(ARGV[3]))
redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[1])
return until_
`)

// deleteScript stops watching a heartbeat and drops its notifications that
// are still in the outbox.
//
// KEYS[1] records hash, KEYS[2] deadlines zset, KEYS[3] outbox zset.
// ARGV[1] name.
// Returns 1 when the heartbeat existed, 0 otherwise.
var deleteScript = redis.NewScript(`
local existed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
for _, ev in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  local ok, e = pcall(cjson.decode, ev)
  if ok and e.n == ARGV[1] then redis.call('ZREM', KEYS[3], ev) end
end
return existed
`)

// readScript reads heartbeat records along with Redis's clock, so the
// caller can tell a late heartbeat (deadline passed, not yet checked) from
// one that is up.
//
// KEYS[1] records hash.
// ARGV[1] a name, or "" for all.
// Returns {now µs, name, record, name, record, ...} (no pairs when the named
// heartbeat does not exist).
var readScript = redis.NewScript(luaPrelude + `
local out = {us(now_us())}
if ARGV[1] == '' then
  for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do table.insert(out, v) end
else
  local raw = redis.call('HGET', KEYS[1], ARGV[1])
  if raw then table.insert(out, ARGV[1]); table.insert(out, raw) end
end
return out
`)
