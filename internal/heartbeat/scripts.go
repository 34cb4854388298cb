package heartbeat

import (
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Times and durations inside the scripts are unix microseconds and
// microseconds, from Redis's own clock (TIME), so that every replica agrees
// whatever its local clock says. Lua numbers are doubles: microsecond times
// (about 1.8e15) are exact, and every value is written back through
// string.format('%d') because tostring would round it to 14 digits. The JSON
// records hold numbers as strings for the same reason.
//
// Lua cannot evaluate a cron schedule, so for a scheduled heartbeat the Go
// side computes the schedule's next few times and the ping script picks the
// first one after its own clock (see pingScript).
//
// A heartbeat record (a field of the records hash) is a JSON object:
//
//	interval    declared interval, µs (absent for a scheduled heartbeat)
//	schedule    cron expression (absent for an interval heartbeat)
//	tz          the schedule's time zone
//	grace       declared grace, µs, or "" for the default
//	grace_eff   grace in force, µs
//	max_run     declared longest run from /start, µs (absent: the grace)
//	severity    critical, warning or info
//	labels      object of strings
//	state       "up" or "down"
//	created     first signal, µs
//	last_ping   last success ping, µs (absent until the first one)
//	pdl         the deadline the last success ping set: last_ping +
//	            interval + grace_eff, or the next scheduled time after
//	            last_ping + grace_eff
//	deadline    when it becomes overdue: pdl, or while a run that
//	            /start announced in time is in progress, the start plus
//	            max_run (or grace_eff)
//	dk          "run" when deadline is the run's limit rather than pdl
//	started     when the run in progress started (/start), µs
//	last_run    how long the last finished run took, µs
//	down_since  when it went down, µs (only while down)
//	down_reason overdue, run_timeout or fail (only while down)
//
// A notification (a member of the outbox) is a JSON object: n name, k "down"
// or "up", t the outage's name (the last ping before it, or the creation
// when there was none, with np "1"), at when the notification was created,
// dl the missed deadline (the failure's time for a fail), ds when it went
// down (up only), r the reason it went down ("" overdue, run_timeout or
// fail), d the detail of a fail, st when the run in progress started, rt
// the run time that the signal ended, mr the run limit, i interval, sc
// schedule, tz time zone, g grace, s severity, l labels.
//
// Every script that reads the clock begins with keys.ClockPrelude and
// takes one last argument: "" to use Redis's TIME, or a time in µs that
// replaces it (tests drive a fake clock through it).

// pingScript records a signal: a success ping, the start of a run, or a
// failure.
//
// KEYS[1] records hash, KEYS[2] deadlines zset, KEYS[3] outbox zset.
// ARGV[1] name, ARGV[2] interval µs or "" (keep), ARGV[3] grace µs or ""
// (keep), ARGV[4] severity or "" (keep), ARGV[5] labels JSON or "" (keep),
// ARGV[6] lease µs, ARGV[7] default grace fraction, ARGV[8] minimum default
// grace µs, ARGV[9] default severity, ARGV[10] most heartbeats (0: no cap),
// ARGV[11] a JSON object of strings: sig ping, start or fail; sc declared
// schedule or "" (keep), tz its zone; mr declared run limit µs, "0" (the
// grace) or "" (keep); d a fail's detail; key the schedule and zone
// ("expr\ntz") the candidates were computed for, from the time they were
// computed from, cands the schedule's first times after from (µs, in
// order). ARGV[12] the clock (see keys.ClockPrelude).
//
// Returns {0} when the heartbeat is new and neither interval nor schedule
// was given, {2} when it is new and the records hash already holds the most
// heartbeats, {3, now µs, schedule, zone} when the heartbeat is scheduled
// and the candidates are missing, stale (computed for another schedule, or
// from a time after now) or too short: nothing was changed, and the caller
// computes candidates from now and calls again. Otherwise {1, stored record
// JSON, created 0/1, now µs, lease end µs, notifications...}: when the
// signal ends an outage (ping) or starts one (fail), its notification and
// any notifications of the heartbeat still waiting in the outbox, all
// leased to the caller until the lease end (their score in the outbox).
var pingScript = redis.NewScript(keys.ClockPrelude + `
local name = ARGV[1]
local now = now_us()
local opt = cjson.decode(ARGV[11])
local raw = redis.call('HGET', KEYS[1], name)
local rec, created = nil, 0
if raw then
  rec = cjson.decode(raw)
else
  if ARGV[2] == '' and opt.sc == '' then return {0} end
  local cap = tonumber(ARGV[10])
  if cap > 0 and redis.call('HLEN', KEYS[1]) >= cap then return {2} end
  rec = {created = us(now), severity = ARGV[9], labels = {}, grace = '', state = 'up'}
  created = 1
end
if ARGV[2] ~= '' then rec.interval = ARGV[2]; rec.schedule = nil; rec.tz = nil end
if opt.sc ~= '' then rec.schedule = opt.sc; rec.tz = opt.tz; rec.interval = nil end
if ARGV[3] ~= '' then rec.grace = ARGV[3] end
if ARGV[4] ~= '' then rec.severity = ARGV[4] end
if ARGV[5] ~= '' then rec.labels = cjson.decode(ARGV[5]) end
if opt.mr == '0' then rec.max_run = nil elseif opt.mr ~= '' then rec.max_run = opt.mr end

-- A scheduled heartbeat's next time after now, and the gap to the one
-- after it (the base of the default grace).
local next_run, gap
if rec.schedule then
  if opt.key == rec.schedule .. '\n' .. rec.tz and opt.from ~= '' and tonumber(opt.from) <= now then
    for i = 1, #opt.cands - 1 do
      local c = tonumber(opt.cands[i])
      if c > now then
        next_run, gap = c, tonumber(opt.cands[i + 1]) - c
        break
      end
    end
  end
  if not next_run then return {3, us(now), rec.schedule, rec.tz} end
end
local grace
if rec.grace ~= nil and rec.grace ~= '' then
  grace = tonumber(rec.grace)
else
  grace = math.max(tonumber(ARGV[8]), math.floor((gap or tonumber(rec.interval)) * tonumber(ARGV[7])))
end
rec.grace_eff = us(grace)
-- The deadline a success ping now sets.
local pdl
if next_run then pdl = next_run + grace else pdl = now + tonumber(rec.interval) + grace end

local out = {}
local until_ = now + tonumber(ARGV[6])
-- Claim the heartbeat's notifications still waiting, so that the caller
-- dispatches them before the new one.
local function claim_waiting()
  for _, ev in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', us(now))) do
    local ok, e = pcall(cjson.decode, ev)
    if ok and e.n == name then
      redis.call('ZADD', KEYS[3], 'XX', us(until_), ev)
      table.insert(out, ev)
    end
  end
end
local function notify(ev)
  ev.n = name
  ev.t = rec.last_ping or rec.created
  if not rec.last_ping then ev.np = '1' end
  ev.at = us(now)
  ev.i, ev.sc, ev.tz, ev.g, ev.s, ev.l = rec.interval, rec.schedule, rec.tz, us(grace), rec.severity, rec.labels
  local m = cjson.encode(ev)
  redis.call('ZADD', KEYS[3], us(until_), m)
  table.insert(out, m)
end

local run
if opt.sig ~= 'start' and rec.started then
  run = us(now - tonumber(rec.started))
  rec.last_run = run
  rec.started = nil
end
if opt.sig == 'ping' then
  if rec.state == 'down' then
    claim_waiting()
    notify({k = 'up', dl = rec.deadline, ds = rec.down_since, r = rec.down_reason, rt = run})
  end
  rec.state = 'up'
  rec.down_since, rec.down_reason, rec.dk = nil, nil, nil
  rec.last_ping = us(now)
  rec.pdl, rec.deadline = us(pdl), us(pdl)
  redis.call('ZADD', KEYS[2], rec.deadline, name)
elseif opt.sig == 'start' then
  rec.started = us(now)
  if created == 1 then rec.pdl = us(pdl) end
  if rec.state ~= 'down' then
    -- A run that starts in time must end within its limit (which may be
    -- later than the schedule's deadline); one that starts late is
    -- overdue already.
    local normal = tonumber(rec.pdl or rec.deadline)
    if now <= normal then
      rec.deadline, rec.dk = us(now + (rec.max_run and tonumber(rec.max_run) or grace)), 'run'
    else
      rec.deadline, rec.dk = us(normal), nil
    end
    redis.call('ZADD', KEYS[2], rec.deadline, name)
  end
else
  if created == 1 then rec.pdl, rec.deadline = us(pdl), us(pdl) end
  if rec.state ~= 'down' then
    claim_waiting()
    notify({k = 'down', r = 'fail', d = opt.d, dl = us(now), rt = run})
    rec.state, rec.down_since, rec.down_reason, rec.dk = 'down', us(now), 'fail', nil
    redis.call('ZREM', KEYS[2], name)
  end
end
local stored = cjson.encode(rec)
redis.call('HSET', KEYS[1], name, stored)
return {1, stored, created, us(now), us(until_), unpack(out)}
`)

// checkScript turns overdue heartbeats down and claims due notifications.
// A heartbeat is overdue when its deadline is before now; the up→down
// transition happens here and only here, so it happens once whatever the
// number of replicas checking.
//
// KEYS[1] records hash, KEYS[2] deadlines zset, KEYS[3] outbox zset.
// ARGV[1] lease µs, ARGV[2] batch size, ARGV[3] the clock.
// Returns {now µs, newly overdue count, lease end µs, claimed
// notifications...}: every notification due (new ones and ones whose lease
// ran out or was released), at most batch size, each now leased to the
// caller until the lease end (its score in the outbox).
var checkScript = redis.NewScript(keys.ClockPrelude + `
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
      local ev = {n = name, k = 'down', t = rec.last_ping or rec.created, at = us(now), dl = rec.deadline,
        i = rec.interval, sc = rec.schedule, tz = rec.tz, g = rec.grace_eff, s = rec.severity, l = rec.labels}
      if not rec.last_ping then ev.np = '1' end
      rec.down_reason = 'overdue'
      if rec.dk == 'run' then
        rec.down_reason = 'run_timeout'
        ev.r, ev.st, ev.mr = 'run_timeout', rec.started, rec.max_run or rec.grace_eff
      end
      rec.state = 'down'
      rec.down_since = us(now)
      rec.dk = nil
      redis.call('HSET', KEYS[1], name, cjson.encode(rec))
      ev = cjson.encode(ev)
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
// ARGV[1] notification, ARGV[2] the caller's lease end µs, ARGV[3] lease µs,
// ARGV[4] the clock.
// Returns the renewed lease end µs, or false when the notification is no
// longer the caller's.
var handoverScript = redis.NewScript(keys.ClockPrelude + `
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
// ARGV[1] a name, or "" for all, ARGV[2] the clock.
// Returns {now µs, name, record, name, record, ...} (no pairs when the named
// heartbeat does not exist).
var readScript = redis.NewScript(keys.ClockPrelude + `
local out = {us(now_us())}
if ARGV[1] == '' then
  for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do table.insert(out, v) end
else
  local raw = redis.call('HGET', KEYS[1], ARGV[1])
  if raw then table.insert(out, ARGV[1]); table.insert(out, raw) end
end
return out
`)
