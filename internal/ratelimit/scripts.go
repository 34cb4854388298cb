package ratelimit

import "github.com/redis/go-redis/v9"

// acquireScript decides when a message may be sent. All keys share the
// {herald} hash tag.
//
// KEYS[1] bot TAT, KEYS[2] queue TAT, KEYS[3] chat arrival TAT,
// KEYS[4] chat send TAT, KEYS[5] the task's reservation, KEYS[6] the task's
// progress record (read only, returned to the caller to save a round trip),
// KEYS[7] the priority allowance's TAT.
// ARGV[1..6] interval and tolerance in microseconds of bot, queue and chat
// (interval 0 = no limit), ARGV[7] SleepMax µs, ARGV[8] LateTolerance µs,
// ARGV[9] reservation TTL ms, ARGV[10] the chat spacing slack µs,
// ARGV[11..12] interval and tolerance of the priority allowance (interval 0
// for a task that is not from a priority queue).
// Returns {kind, wait µs as a decimal string, progress or false}: kind 1 = go
// after wait, 2 = sleep wait then ask again, 3 = defer the task by wait.
var acquireScript = redis.NewScript(`
local progress = redis.call('GET', KEYS[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local bi, btau = tonumber(ARGV[1]), tonumber(ARGV[2])
local qi, qtau = tonumber(ARGV[3]), tonumber(ARGV[4])
local ci, ctau = tonumber(ARGV[5]), tonumber(ARGV[6])
local sleepMax, late = tonumber(ARGV[7]), tonumber(ARGV[8])

local function num(x) return string.format('%.0f', x) end
local function tat(key)
  local v = redis.call('GET', key)
  if v then return tonumber(v) end
  return 0
end
local function store(key, v, tau)
  local ttl = math.floor((v - now + tau) / 1000) + 1000
  redis.call('SET', key, num(v), 'PX', ttl)
end
local function wait(kindShort, w)
  if w > sleepMax then return {3, num(w), progress} end
  return {kindShort, num(w), progress}
end

-- A reservation records the stage a deferred task has passed: 'c' its chat
-- turn, 'q' its queue turn, 'g' its final slot.
local stage = 'n'
local r = redis.call('GET', KEYS[5])
if r then
  local st, slot = string.sub(r, 1, 1), tonumber(string.sub(r, 3))
  local w = slot - now
  if w > 0 then
    if st == 'g' then
      if w > sleepMax then return {3, num(w), progress} end
      redis.call('DEL', KEYS[5])
      return {1, num(w), progress}
    end
    return wait(2, w)
  end
  redis.call('DEL', KEYS[5])
  if st == 'g' then
    if w >= -late then return {1, '0', progress} end
    -- Too late to use the slot safely; take a fresh final slot.
    stage = 'q'
  else
    stage = st
  end
end

-- Stage 1: the chat's turn.
if stage == 'n' and ci > 0 then
  local ctat = tat(KEYS[3])
  local s = math.max(now, ctat - ctau)
  store(KEYS[3], math.max(ctat, s) + ci, ctau)
  if s > now then
    redis.call('SET', KEYS[5], 'c:' .. num(s), 'PX', ARGV[9])
    return wait(2, s - now)
  end
end

-- Stage 2: the queue's turn.
if stage ~= 'q' and qi > 0 then
  local qtat = tat(KEYS[2])
  local s = math.max(now, qtat - qtau)
  store(KEYS[2], math.max(qtat, s) + qi, qtau)
  if s > now then
    redis.call('SET', KEYS[5], 'q:' .. num(s), 'PX', ARGV[9])
    return wait(2, s - now)
  end
end

-- Stage 3: a bot-wide slot, first come first served, that also keeps the
-- chat's spacing at Telegram.
local s = now
local btat = 0
if bi > 0 then btat = tat(KEYS[1]); s = math.max(s, btat - btau) end
-- A task from a priority queue does not queue behind the bot-wide slots
-- already promised to others: while the priority allowance has room it goes
-- now, and the bot's schedule moves on by one interval as for any send.
-- The allowance bounds how far the bot may run over its rate meanwhile.
local pi, ptau = tonumber(ARGV[11]), tonumber(ARGV[12])
local jump, ptat = false, 0
if pi > 0 and s > now then
  ptat = tat(KEYS[7])
  if ptat - ptau <= now then jump = true end
end
local sb = s
if jump then s = now end
local c2 = 0
if ci > 0 then
  c2 = tat(KEYS[4])
  local cs = c2 - ctau - tonumber(ARGV[10])
  if cs > s then
    -- The chat's previous message went out late: wait for the chat's own
    -- spacing without holding a bot-wide slot that would sit unused.
    redis.call('SET', KEYS[5], 'q:' .. num(cs), 'PX', ARGV[9])
    return wait(2, cs - now)
  end
  store(KEYS[4], math.max(c2, s) + ci, ctau)
end
if jump then store(KEYS[7], math.max(ptat, now) + pi, ptau) end
if bi > 0 then store(KEYS[1], math.max(btat, sb) + bi, btau) end
local w = s - now
if w > sleepMax then
  redis.call('SET', KEYS[5], 'g:' .. num(s), 'PX', ARGV[9])
  return {3, num(w), progress}
end
return {1, num(w), progress}
`)

// penalizeScript applies a 429 answer: the chat is paused until retry_after
// has passed, and when several distinct chats were refused within the flood
// window the whole bot is paused too.
//
// KEYS[1] chat arrival TAT, KEYS[2] chat send TAT, KEYS[3] bot TAT,
// KEYS[4] recent 429s (sorted set of chats scored by time).
// ARGV[1] pause µs, ARGV[2] chat tolerance µs, ARGV[3] bot tolerance µs,
// ARGV[4] chat id, ARGV[5] flood window µs, ARGV[6] flood chats.
// Returns 1 when the whole bot was paused, else 0.
var penalizeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local pause = tonumber(ARGV[1])
local function num(x) return string.format('%.0f', x) end
local function push(key, tau)
  local v = redis.call('GET', key)
  local cur = 0
  if v then cur = tonumber(v) end
  local want = now + pause + tau
  if want > cur then
    redis.call('SET', key, num(want), 'PX', math.floor((pause + tau) / 1000) + 1000)
  end
end
local ctau, btau = tonumber(ARGV[2]), tonumber(ARGV[3])
push(KEYS[1], ctau)
push(KEYS[2], ctau)
local window = tonumber(ARGV[5])
redis.call('ZADD', KEYS[4], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - window)
redis.call('PEXPIRE', KEYS[4], math.floor(window / 1000) + 1000)
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[6]) then
  push(KEYS[3], btau)
  return 1
end
return 0
`)
