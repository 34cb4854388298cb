package ratelimit

import "github.com/redis/go-redis/v9"

// The limiter's state is a set of logs, each a sorted set of send times in
// Redis microseconds: the bot's, each chat's sends, each chat's turns, each
// limited queue's turns and the priority allowance's. A log holds the recent
// sends and the slots reserved ahead. Members name a reservation as
// "<chat>|<id>|<task id>": the chat lets a script find another chat's log,
// the id (creation time, with a "p" for priority messages) keeps members
// unique, and the task id leads to the task's reservation key.
//
// New slots of a chat's logs are appended in time order, so whether a slot
// fits a window of N sends per span is decided by the entry N places back
// alone (earliest). The bot's log also takes slots between reserved ones
// (fit), when every window holds around them.
//
// A chat's log expires once its windows no longer need it; its expiry is
// written when a slot starts a new minute in it (keep), not on every send.
//
// Every script below has the one hash tag of internal/keys; the keys it
// builds from prefixes (another chat's log, another task's reservation) carry
// the same tag, so they share the slot of the declared keys on Redis Cluster.

// luaCommon is the shared part of the scripts. It expects `guard` (µs) to be
// defined before it.
const luaCommon = `
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
local function num(x) return string.format('%.0f', x) end

-- A member's id is its creation time with flags: 'p' a priority message,
-- 'u' one sent without allow_paid_broadcast (an edit).
local function flagsOf(member) return string.match(member, '^[^|]*|%d*(%a*)|') or '' end
local function priorityOf(member) return string.find(flagsOf(member), 'p', 1, true) ~= nil end
local function unpaidOf(member) return string.find(flagsOf(member), 'u', 1, true) ~= nil end

-- wins parses "n:span:g;..." (µs) into a list of {n, span, g}: n sends per
-- span, each at least span+g after the one n places back. It also gives the
-- largest n and the longest span.
local function wins(s)
  local out = {maxn = 0, longest = 0}
  for n, p, g in string.gmatch(s, '(%d+):(%d+):(%d+)') do
    n, p = tonumber(n), tonumber(p)
    out[#out + 1] = {n, p, tonumber(g)}
    if n > out.maxn then out.maxn = n end
    if p > out.longest then out.longest = p end
  end
  return out
end

-- seen[key] is the newest entry of log key (-1: none) as the last read of
-- it found; add uses it to skip refreshing the key's expiry.
local seen = {}

-- earliest is the first time at or after t at which one more send fits at
-- the end of log key: not before its last entry, and span+g after the
-- entry n places back, for every window. A log whose windows are small
-- (at most rangeMax sends) is read in one range of its newest maxn
-- entries; a larger window is read by rank, its last entry and the one n
-- places back for each window, so a decision costs O(log size) per window
-- whatever N is (a 1000/s paid broadcast limit reads 2 entries, not 1,000).
local rangeMax = 32
-- tailWant[key] asks earliest to read the newest tailWant[key] entries of
-- a large log at once (instead of its last one), and tails[key] keeps
-- what it read: the acquire script tells from them whether a paid send
-- appended there is charged, with no read of its own.
local tailWant, tails = {}, {}
-- keepMore[key] keeps that much (µs) more of a log's past: a bot with a
-- Stars budget keeps its sends while their count may still check them.
local keepMore = {}
local function earliest(key, w, t)
  if w.maxn == 0 then return t end
  seen[key] = -1
  if w.maxn <= rangeMax then
    local e = redis.call('ZRANGE', key, -w.maxn, -1, 'WITHSCORES')
    local m = #e / 2
    if m > 0 then
      seen[key] = tonumber(e[2 * m])
      if seen[key] > t then t = seen[key] end
    end
    for _, x in ipairs(w) do
      if m >= x[1] then
        local s = tonumber(e[2 * (m - x[1] + 1)]) + x[2] + x[3]
        if s > t then t = s end
      end
    end
    return t
  end
  local k = tailWant[key] or 1
  local tail = redis.call('ZRANGE', key, -k, -1, 'WITHSCORES')
  tails[key] = tail
  if #tail == 0 then return t end
  local last = {tail[#tail - 1], tail[#tail]}
  seen[key] = tonumber(last[2])
  if seen[key] > t then t = seen[key] end
  for _, x in ipairs(w) do
    local e = last
    if x[1] > 1 then e = redis.call('ZRANGE', key, -x[1], -x[1], 'WITHSCORES') end
    if #e > 0 then
      local s = tonumber(e[2]) + x[2] + x[3]
      if s > t then t = s end
    end
  end
  return t
end

-- fit is the first time at or after t at which one more send fits in log
-- key, between two reserved slots or after the last: every window must
-- still hold around it (of any n+1 consecutive entries, the first and the
-- last at least span+g apart). Entries older than the longest span+g
-- before t cannot bind; it reads the others, up to 4*maxn of the newest.
-- When there are more (a long schedule reserved ahead), it looks no
-- further and appends, as earliest does. Logs with windows of more than
-- rangeMax sends are append-only (earliest): reading the entries that can
-- bind would cost O(N) per decision, and the caller then never leaves a gap
-- in them (see stage 3 of the acquire script).
local function fit(key, w, t, floor)
  if w.maxn == 0 then return t end
  if w.maxn > rangeMax then return earliest(key, w, t) end
  local reach = 0
  for _, x in ipairs(w) do reach = math.max(reach, x[2] + x[3]) end
  local lim = 4 * w.maxn
  local e = redis.call('ZREVRANGEBYSCORE', key, '+inf', '(' .. num(t - reach), 'WITHSCORES', 'LIMIT', 0, lim)
  local m = #e / 2
  if floor then
    -- An unpaid slot was placed where the free windows hold: a slot
    -- inserted before it would crowd them, so none goes before it.
    for i = 1, 2 * m, 2 do
      local x = tonumber(e[i + 1])
      if x >= t and unpaidOf(e[i]) then t = x + 1 end
    end
  end
  -- s: the scores read, oldest first.
  local s = {}
  for i = m, 1, -1 do s[#s + 1] = tonumber(e[2 * i]) end
  seen[key] = -1
  if m > 0 then seen[key] = s[m] end
  -- The end of the log: after its last entry and span+g after the entry
  -- n places back.
  local tail = t
  if m > 0 and s[m] > tail then tail = s[m] end
  for _, x in ipairs(w) do
    if m >= x[1] and s[m - x[1] + 1] + x[2] + x[3] > tail then tail = s[m - x[1] + 1] + x[2] + x[3] end
  end
  if m == 0 or m == lim or tail == t then return tail end
  -- ok tells whether x fits: with x inserted after the entries at or
  -- before it (index p+1), every pair of entries n apart whose span
  -- includes x is at least span+g apart. The windows with the fewest sends
  -- go first: in a full schedule a spacing of one send rules a candidate
  -- out after two comparisons.
  local byN = {}
  for i, win in ipairs(w) do byN[i] = win end
  table.sort(byN, function(a, b) return a[1] < b[1] end)
  local function ok(x, p)
    for _, win in ipairs(byN) do
      local n, need = win[1], win[2] + win[3]
      for i = p + 1, math.min(p + 1 + n, m + 1) do
        local j = i - n
        if j >= 1 then
          local hi, lo = x, x
          if i > p + 1 then hi = s[i - 1] end
          if j < p + 1 then lo = s[j] end
          if hi - lo < need then return false end
        end
      end
    end
    return true
  end
  -- Where a fit can begin: t itself, an entry's own time, or span+g after
  -- an entry; the earliest candidate before the end that fits wins.
  local cand = {t}
  for i = 1, m do
    if s[i] > t and s[i] < tail then cand[#cand + 1] = s[i] end
    for _, x in ipairs(w) do
      local c = s[i] + x[2] + x[3]
      if c > t and c < tail then cand[#cand + 1] = c end
    end
  end
  table.sort(cand)
  local p = 0
  for _, x in ipairs(cand) do
    while p < m and s[p + 1] <= x do p = p + 1 end
    if ok(x, p) then return x end
  end
  return tail
end

-- add records member at s in log key and, one time in 32, forgets the
-- entries too old to bind any window (the decisions read only the newest
-- entries, so stale ones cost memory, not correctness). With expire, the
-- key lives until its windows no longer need it: until two minutes past
-- the minute of its newest slot, plus the longest window. That expiry is
-- written only when the slot starts a new minute in the log (a log read
-- just before tells), so a busy chat's log refreshes it once a minute,
-- not on every send.
local keepUnit = 60000000
local function keep(key, w, s)
  redis.call('PEXPIREAT', key, math.floor(((math.floor(s / keepUnit) + 2) * keepUnit + w.longest + guard) / 1000))
end
local function add(key, w, s, member, expire)
  redis.call('ZADD', key, num(s), member)
  if now % 32 == 0 then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. num(now - w.longest - guard - (keepMore[key] or 0)))
  end
  if expire then
    local last = seen[key]
    if not last or last < 0 or math.floor(last / keepUnit) < math.floor(s / keepUnit) then keep(key, w, s) end
    if not last or s > last then seen[key] = s end
  end
end

local function chatOf(member) return string.match(member, '^([^|]*)|') end
local function taskOf(member) return string.match(member, '^[^|]*|[^|]*|(.*)$') end
`

// acquireScript decides when one message may be sent.
//
// KEYS[1] bot log, KEYS[2] queue log, KEYS[3] chat turns, KEYS[4] chat
// sends, KEYS[5] the task's reservation, KEYS[6] the task's progress record
// (read only, returned to save a round trip), KEYS[7] priority log,
// KEYS[8] bot pause, KEYS[9] chat pause, KEYS[10] the chat's blocked mark,
// KEYS[11] the task's cancel mark, KEYS[12] the bot's paid-off mark,
// KEYS[13] the bot's charged-sends counter of the day (the sends made,
// which the workers add: Limiter.CountCharged), KEYS[14] the bot's charged
// slots on their way (task id by slot; only with a budget).
// ARGV[1..4] windows ("n:span:guard;..." in µs, "" for none) of the bot, the queue,
// the chat and the priority allowance ("" unless the task is from a priority
// queue), ARGV[5] guard µs, ARGV[6] SleepMax µs, ARGV[7] lead µs, ARGV[8]
// reservation TTL ms, ARGV[9] task id, ARGV[10] normalised chat, ARGV[11]
// chat send log prefix, ARGV[12..13] windows of private and group chats (for
// the chat of a message that a priority message displaces), ARGV[14] "1" to
// read the progress record, ARGV[15] reservation key prefix, ARGV[16] a
// reservation the caller holds in memory ("" for none; the stored one wins),
// ARGV[17] go-ahead µs: how far ahead a bot-wide slot may be handed out as
// "send at" (0: never), ARGV[18] the bot's windows while paid broadcasts
// are on ("" when the bot has none; they replace ARGV[1] unless KEYS[12]
// exists), ARGV[19] the sends per second Telegram does not charge for,
// ARGV[20] the charged sends a day's Stars budget pays for (0: no budget),
// ARGV[21] the next UTC midnight, ms, ARGV[22] the span (µs) the free sends
// count over, ARGV[23] "1" when the task's queue is a lane (Config.Lanes)
// with no limit of its own: its queue log then keeps each bot-wide window
// of N at N - max(1, 3% of N), so the bot always has room for the others,
// ARGV[24] "1" when the message cannot be sent with allow_paid_broadcast
// (Ask.Unpaid: an edit), ARGV[25] how long (µs) after its slot a charged
// slot on its way still counts against the budget unless sent and counted.
//
// An unpaid message while the paid windows are on is held to the free
// ones (ARGV[1]), as Telegram holds it: its member carries a 'u' (when the
// bot has paid windows at all), its bot-wide slot is appended to the
// shared bot log where both the paid and the free windows hold (up to a
// free span after the end of a paid schedule), and its Go has paid = 0.
// Nothing is later placed before it: an append-only log never is, fit in
// a smaller one starts after the newest unpaid slot, a priority message
// neither takes its slot nor moves it (an unpaid priority message takes no
// other's either), and a 429 gives its chat new turns rather than other
// slots. The paid sends after it resume at the paid rate, counting it.
//
// Returns {kind, wait µs, progress or false, member, now µs, reservation,
// paid, charged}:
// kind 1 = send after wait (0: now; member names the slot, for Penalize; now
// is the decision's time), 2 = sleep wait then ask again, 3 = defer the task
// by wait (it comes back lead µs before its slot), 4 = the chat blocked the
// bot, 5 = the message was cancelled (neither takes a slot, and the turns
// and slot a reservation held for it are given back). The reservation comes
// with a wait that the caller holds in memory (go-ahead > 0); it passes it
// back as ARGV[16]. A Go under the paid windows has paid = 1 (send with
// allow_paid_broadcast) and charged = 1 when its slot is beyond ARGV[19]
// sends in the second up to it: Telegram bills it. With a budget, a
// charged Go holds its share (the task id in KEYS[14], at its slot) until
// the worker that sent it counts it in KEYS[13] and drops the hold; a task
// holds at most one, however often it is decided again, and gives it back
// when decided again uncharged. A hold whose slot is more than ARGV[25]
// past (the send never came) no longer counts. A decision is paid only
// while the sends counted and the holds are below the budget; when the
// holds fill what is left, the task asks again once the last of them is
// counted (their sends are checked again then, and one that was not
// charged gives its share back); once the sends counted reach it, KEYS[12]
// turns paid broadcasts off until midnight. A bot-wide
// slot placed under the paid windows is a 'p' reservation: when it comes
// back with paid broadcasts off it cannot go without the flag where it is
// (the free windows count every send), so it is given up and placed again
// under the free windows, after the paid sends still on their way.
//
// A send after a wait stores no reservation: the caller sleeps through the
// wait, checks that its slot has not moved (Limiter.Confirm: a pause shifts
// the schedule, a priority message may take the slot) and sends, or asks
// again with the reservation "g|<slot>|<member>".
//
// A reservation ("<stage>|<slot µs>|<member>") records how far a waiting
// task got: 'c' its chat turn, 'q' its queue turn (or a wait for the chat's
// spacing), 'g' its bot-wide slot, whose time is the member's score in the
// bot's log (or the chat's), so that a pause can move it.
var acquireScript = redis.NewScript(`
local guard = tonumber(ARGV[5])
` + luaCommon + `
-- One read for the reservation, the progress record, both pauses and the
-- marks that stop a send.
local st = redis.call('MGET', KEYS[5], KEYS[6], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12])
local r, progress = st[1], false
if ARGV[14] == '1' then progress = st[2] end
if not r and ARGV[16] ~= '' then r = ARGV[16] end
if st[5] or st[6] then
  -- A message that will not be sent gives back the turns and the slot it
  -- reserved, so that no other message waits behind them.
  if r then
    local m = string.match(r, '^%a|%d+|(.*)$')
    if m then for i = 1, 4 do redis.call('ZREM', KEYS[i], m) end end
    if st[1] then redis.call('DEL', KEYS[5]) end
  end
  if st[5] then return {4, '0', progress} end
  return {5, '0', progress}
end
local goAhead = tonumber(ARGV[17])
local pb, pc = tonumber(st[3] or 0), tonumber(st[4] or 0)
local paid = ARGV[18] ~= '' and not st[7]
-- A Stars budget: the sends counted and the charged slots on their way
-- (holds) must stay below it for one more paid decision.
local budget, holds = tonumber(ARGV[20]), 0
if ARGV[18] ~= '' and budget > 0 then keepMore[KEYS[1]] = tonumber(ARGV[25]) end
if paid and budget > 0 then
  local live = '(' .. num(now - tonumber(ARGV[25]))
  if now % 32 == 0 then redis.call('ZREMRANGEBYSCORE', KEYS[14], '-inf', live) end
  holds = redis.call('ZCOUNT', KEYS[14], live, '+inf')
  local counted = tonumber(redis.call('GET', KEYS[13]) or 0)
  if counted >= budget then
    redis.call('SET', KEYS[12], 'budget', 'PXAT', ARGV[21])
  end
  if counted >= budget then
    redis.call('ZREM', KEYS[14], ARGV[9])
    paid = false
  elseif counted + holds >= budget and not redis.call('ZSCORE', KEYS[14], ARGV[9]) then
    -- All that is left is held by sends on their way: ask again once the
    -- last of them is counted (its slot, then a count), when what they did
    -- not spend (a send that looked charged and was not) is known.
    local last = redis.call('ZRANGE', KEYS[14], -1, -1, 'WITHSCORES')
    local w = 200000
    if #last == 2 then w = math.max(tonumber(last[2]) - now, 0) + 200000 end
    local keep = ''
    if not st[1] then keep = ARGV[16] end
    return {2, num(w), progress, '', num(now), keep}
  end
end
local bw, qw, cw, pw = wins(ARGV[1]), wins(ARGV[2]), wins(ARGV[3]), wins(ARGV[4])
-- fw: the free windows, which hold a request without allow_paid_broadcast
-- (unpaid) even while the paid ones pace the others.
local fw, unpaid = bw, false
if paid then
  bw = wins(ARGV[18])
  bw.longest = math.max(bw.longest, fw.longest)
  unpaid = ARGV[24] == '1'
end
if ARGV[23] == '1' and qw.maxn == 0 then
  -- A lane (a broadcast) takes its queue turns a little below the bot's
  -- rate: the rest of every window is left to the other queues, whose
  -- messages then find a bot-wide slot soon instead of behind the lane's
  -- whole backlog.
  for _, x in ipairs(bw) do
    if x[1] > 1 then
      local n = x[1] - math.max(1, math.ceil(x[1] * 0.03))
      qw[#qw + 1] = {n, x[2], x[3]}
      if n > qw.maxn then qw.maxn = n end
      if x[2] > qw.longest then qw.longest = x[2] end
    end
  end
end
local sleepMax, lead = tonumber(ARGV[6]), tonumber(ARGV[7])

-- A reservation that is used up is deleted at the end, unless a new one
-- has replaced it by then.
local stage, member, held = 'n', nil, st[1] and true

local function waitFor(w)
  if w > sleepMax then return {3, num(w - lead), progress} end
  return {2, num(w), progress}
end
-- reserve records how far the message got. A caller that holds its
-- reservation in memory (goAhead > 0) gets it back with a wait it sleeps
-- through; a longer wait, which hands the task back to Redis, stores it.
local function reserve(stage, s, member)
  local rv = stage .. '|' .. num(s) .. '|' .. member
  if goAhead > 0 and s - now <= sleepMax then
    if held then redis.call('DEL', KEYS[5]) end
    return {2, num(s - now), progress, member, num(now), rv}
  end
  redis.call('SET', KEYS[5], rv, 'PX', ARGV[8])
  return waitFor(s - now)
end
-- botStage is the reservation stage of a bot-wide slot: 'p' when it was
-- placed under the paid windows, 'g' otherwise.
local function botStage()
  if paid and not unpaid then return 'p' end
  return 'g'
end
-- goAt hands out a bot-wide slot up to goAhead ahead as a send after a
-- wait: the caller sleeps through it and checks that the slot is still its
-- own (Limiter.Confirm) instead of asking again.
local free, freePer = tonumber(ARGV[19]), tonumber(ARGV[22])
-- appended: the bot-wide slot about to be handed out was appended to the
-- bot's log right after the entries earliest read.
local appended = false
if paid and not unpaid and free > 0 then tailWant[KEYS[1]] = free end
local function goAt(s, member, known)
  if held then redis.call('DEL', KEYS[5]) end
  if not paid or unpaid then
    return {1, num(math.max(s - now, 0)), progress, member, num(now), 'g|' .. num(s) .. '|' .. member, 0, 0}
  end
  -- Telegram charges the sends beyond the free ones in any second: this
  -- one is charged when the second (freePer) up to its slot already holds
  -- that many. A slot appended after the entries earliest read (the
  -- newest free ones) is charged when the oldest of them is in that
  -- second; a slot decided before keeps what was decided (known).
  local charged = known
  local tail = tails[KEYS[1]]
  if charged == nil and appended and tail and s >= (seen[KEYS[1]] or -1) then
    -- Fewer than free entries in the whole log: none is charged yet.
    charged = 0
    if #tail == 2 * free and tonumber(tail[2]) > s - freePer then charged = 1 end
  elseif charged == nil then
    charged = 0
    if redis.call('ZCOUNT', KEYS[1], '(' .. num(s - freePer), num(s)) > free then charged = 1 end
  end
  if budget > 0 and charged == 1 then
    if holds == 0 then redis.call('PEXPIREAT', KEYS[14], ARGV[21]) end
    redis.call('ZADD', KEYS[14], num(s), ARGV[9])
  elseif budget > 0 then
    redis.call('ZREM', KEYS[14], ARGV[9])
  end
  local st = 'p'
  if charged == 1 then st = 'h' end
  return {1, num(math.max(s - now, 0)), progress, member, num(now), st .. '|' .. num(s) .. '|' .. member, 1, charged}
end

if r then
  local rs, slot, m = string.match(r, '^(%a)|(%d+)|(.*)$')
  slot, member = tonumber(slot), m
  local paidSlot = rs == 'p' or rs == 'h'
  if paidSlot and not paid then
    -- Placed under the paid windows, which are off now: the free ones
    -- count every send, so it is placed again under them.
    redis.call('ZREM', KEYS[1], m)
    redis.call('ZREM', KEYS[4], m)
    if ARGV[20] ~= '0' then redis.call('ZREM', KEYS[14], ARGV[9]) end
    stage = 'q'
  elseif rs == 'g' or paidSlot then
    local sc = slot
    if bw.maxn > 0 then
      sc = redis.call('ZSCORE', KEYS[1], m)
    elseif cw.maxn > 0 then
      sc = redis.call('ZSCORE', KEYS[4], m)
    end
    if sc then
      sc = tonumber(sc)
      -- A paid slot that did not move keeps whether it was charged.
      local known = nil
      if paidSlot and paid and sc == slot then
        known = 0
        if rs == 'h' then known = 1 end
      end
      if sc > now and sc - now <= goAhead then return goAt(sc, m, known) end
      if sc > now then return reserve(botStage(), sc, m) end
      if sc >= now - guard / 2 then return goAt(now, m, known) end
      -- Back later than half the guard (the other half is for the trip to
      -- Telegram): sending now could crowd the sends reserved after this
      -- one. Leave the slot unused and take a new one.
      redis.call('ZREM', KEYS[1], m)
      redis.call('ZREM', KEYS[4], m)
    elseif bw.maxn > 0 then
      -- The slot is gone from the bot's log (paid broadcasts were turned
      -- off, which forgets the slots ahead): forget it in the chat's too.
      redis.call('ZREM', KEYS[4], m)
    end
    stage = 'q'
  else
    -- A turn that moved since (a priority message, a pause) comes with a
    -- stored reservation, which wins over the one held in memory.
    if slot > now then return reserve(rs, slot, m) end
    stage = rs
  end
end
if not member then
  local p = ''
  if pw.maxn > 0 then p = 'p' end
  if ARGV[24] == '1' and ARGV[18] ~= '' then p = p .. 'u' end
  member = ARGV[10] .. '|' .. num(now) .. p .. '|' .. ARGV[9]
end

-- Stage 1: the chat's turn. A chat's messages get turns one window apart,
-- so a long backlog neither crowds the bot-wide stage nor polls. When every
-- window of the chat is one send per span (a private chat), a turn that is
-- now is not written: only the last entry of a log binds such windows, and
-- stage 3 reads the chat's sends, so a message that has to wait there for
-- its chat writes its turn then (unturned); one that takes a bot-wide slot
-- is spaced from by the chat's sends log. An idle chat's message then costs
-- no write to its turns.
local unturned = false
if stage == 'n' and cw.maxn > 0 then
  local s
  if pw.maxn > 0 then
    -- A priority message goes ahead of its chat's other waiting messages:
    -- it takes the earliest turn they hold, each of them the next one's,
    -- and the last a new turn at the end. The turns keep their spacing.
    local f = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. num(now), '+inf', 'WITHSCORES')
    local ms, ts = {}, {}
    for i = 1, #f, 2 do
      if chatOf(f[i]) and not priorityOf(f[i]) then
        ms[#ms + 1] = f[i]
        ts[#ts + 1] = tonumber(f[i + 1])
      end
    end
    if #ms > 0 then
      -- move stores the moved turn as the task's reservation, which wins
      -- over one its task holds in memory.
      local function move(m, t)
        local task = taskOf(m)
        if task then
          redis.call('SET', ARGV[15] .. task, 'c|' .. num(t) .. '|' .. m, 'PX', ARGV[8])
        end
      end
      local k = #ms
      redis.call('ZREM', KEYS[3], ms[k])
      for i = k - 1, 1, -1 do
        redis.call('ZADD', KEYS[3], num(ts[i + 1]), ms[i])
        move(ms[i], ts[i + 1])
      end
      s = ts[1]
      redis.call('ZADD', KEYS[3], num(s), member)
      local last = earliest(KEYS[3], cw, now)
      add(KEYS[3], cw, last, ms[k], true)
      move(ms[k], last)
    end
  end
  if not s then
    s = earliest(KEYS[3], cw, math.max(now, pc))
    if s > now or cw.maxn > 1 then
      add(KEYS[3], cw, s, member, true)
    else
      unturned = true
    end
  end
  if s > now then return reserve('c', s, member) end
end

-- Stage 2: the queue's turn, when the queue has a limit.
if stage ~= 'q' and qw.maxn > 0 then
  local s = earliest(KEYS[2], qw, now)
  add(KEYS[2], qw, s, member, false)
  if s > now then return reserve('q', s, member) end
end

-- Stage 3: a bot-wide slot, first come first served, that also keeps the
-- chat's windows over its actual sends.
local cs = math.max(now, pc)
if cw.maxn > 0 then cs = earliest(KEYS[4], cw, cs) end
if unturned and cs > now and goAhead > 0 and cs - now <= goAhead then
  -- Its chat's last send holds it back a little: that is its turn, as
  -- stage 1 would have given it. It waits holding the turn, not a
  -- bot-wide slot, so a priority message of the chat can take the turn.
  add(KEYS[3], cw, cs, member, true)
  return reserve('c', cs, member)
end

-- place is the bot-wide slot at or after t. An unpaid message while the
-- paid windows are on is appended where the free windows hold too: Telegram
-- counts every send in them, and at the paid rate the second before the
-- end of the schedule holds far more than they allow, so its slot comes up
-- to a free window's span after that end, and the messages asking after it
-- are placed after it. In an append-only log nothing goes in the gap left;
-- fit keeps out of it (floor).
local function place(t)
  if bw.maxn == 0 then return t end
  if unpaid then return earliest(KEYS[1], fw, earliest(KEYS[1], bw, t)) end
  return fit(KEYS[1], bw, t, paid)
end
local sb
-- An append-only bot log (windows above rangeMax sends) never takes a slot
-- past the next free one: the gap before it could not be filled.
if goAhead == 0 or cs - now > goAhead or bw.maxn > rangeMax or unpaid then
  -- The caller comes back for a slot that is not now. When an earlier
  -- message of the chat went out late and the chat's spacing ends after
  -- the bot's next free slot, it comes back then, holding no bot-wide slot.
  sb = place(math.max(now, pb, pc))
  if cs > sb then
    -- The chat's last send holds it back: when stage 1 did not write its
    -- turn, its turn is now when that spacing ends, and the chat's next
    -- message queues behind it.
    if unturned then add(KEYS[3], cw, cs, member, true) end
    return reserve('q', cs, member)
  end
else
  -- The caller sleeps through the wait: it takes the first bot-wide slot
  -- that fits at or after its chat's spacing, between slots promised to
  -- others or after them, so waiting a little for its chat neither pushes
  -- the end of the schedule nor leaves slots before it unused.
  sb = place(math.max(cs, pb))
end

local s = sb
appended = bw.maxn > rangeMax
-- A priority message does not queue behind the bot-wide slots promised to
-- others: while its allowance has room it takes the earliest promised slot
-- (after its own chat's spacing) of another message. That message's chat
-- moves back by one place: each of its messages from there on takes the
-- next one's slot, and its last a new slot at the end of the schedule. The
-- bot's log keeps the same times plus one at its end, so the bot-wide
-- windows hold, and so do that chat's order and windows.
if pw.maxn > 0 and bw.maxn > 0 and sb > now and not unpaid and earliest(KEYS[7], pw, now) <= now then
  local lo = math.max(now + 1, cs)
  local c = redis.call('ZRANGEBYSCORE', KEYS[1], num(lo), '(' .. num(sb), 'WITHSCORES', 'LIMIT', 0, 16)
  for i = 1, #c, 2 do
    local x = tonumber(c[i + 1])
    local mchat = chatOf(c[i])
    local ck, mw, f = nil, nil, {}
    if mchat and not priorityOf(c[i]) and mchat ~= ARGV[10] then
      ck = ARGV[11] .. mchat
      mw = wins(ARGV[12])
      if string.match(mchat, '^[-@]') then mw = wins(ARGV[13]) end
      f = {c[i], x}
      if mw.maxn > 0 then f = redis.call('ZRANGEBYSCORE', ck, num(x), '+inf', 'WITHSCORES') end
      -- While the paid windows are on, an unpaid slot keeps its place: moved
      -- to the next one's, it could land where the free windows are full.
      for j = 1, #f, 2 do
        if paid and unpaidOf(f[j]) then f = {} break end
      end
    end
    if #f > 0 then
      local k = #f / 2
      local last = f[2 * k - 1]
      redis.call('ZREM', KEYS[1], last)
      redis.call('ZREM', ck, last)
      for j = k - 1, 1, -1 do
        redis.call('ZADD', KEYS[1], f[2 * j + 2], f[2 * j - 1])
        redis.call('ZADD', ck, f[2 * j + 2], f[2 * j - 1])
      end
      -- The priority message holds x before the displaced one's new slot
      -- is chosen: the log must count every slot it keeps.
      redis.call('ZADD', KEYS[1], num(x), member)
      local ms = earliest(KEYS[1], bw, now)
      if mw.maxn > 0 then ms = earliest(ck, mw, ms) end
      add(KEYS[1], bw, ms, last, false)
      if mw.maxn > 0 then add(ck, mw, ms, last, true) end
      add(KEYS[7], pw, now, member, false)
      s = x
      appended = false
      break
    end
  end
end

if bw.maxn > 0 then add(KEYS[1], bw, s, member, false) end
if cw.maxn > 0 then add(KEYS[4], cw, s, member, true) end
if s > now and s - now > goAhead then return reserve(botStage(), s, member) end
return goAt(s, member)
`)

// penalizeScript applies a 429 answer.
//
// The chat is paused for its pause, and, when the bot pause is positive, the
// whole bot too: every bot-wide slot from now on moves back by the same
// amount, so that none falls inside the pause and the schedule keeps its
// order and spacing. Then the refused message goes back to the head of its
// chat: within a bot-wide pause it takes its chat's first slot and the
// chat's messages move back by one slot each; in a pause of the chat alone
// (or one longer than the bot's), it and every message of the chat that
// holds a slot or a turn get new turns, in that order, from the end of the
// pause.
//
// KEYS[1] bot log, KEYS[2] bot pause, KEYS[3] chat pause, KEYS[4] chat sends,
// KEYS[5] chat turns.
// ARGV[1] chat pause µs, ARGV[2] bot pause µs (0 for none), ARGV[3] the
// refused message's member ("" for none), ARGV[4] chat send log prefix,
// ARGV[5] chat windows, ARGV[6] guard µs, ARGV[7] reservation TTL ms,
// ARGV[8] reservation key prefix, ARGV[9] bot windows.
// Returns {bot paused 0|1, bot pause left µs, chat pause left µs, shift µs,
// messages requeued}.
var penalizeScript = redis.NewScript(`
local guard = tonumber(ARGV[6])
` + luaCommon + `
local cw = wins(ARGV[5])
local function extend(key, v)
  local cur = tonumber(redis.call('GET', key) or 0)
  if v > cur then
    redis.call('SET', key, num(v), 'PX', math.floor((v - now) / 1000) + 1000)
    return v
  end
  return cur
end
local function bulk(cmd, key, args)
  for i = 1, #args, 1000 do
    redis.call(cmd, key, unpack(args, i, math.min(i + 999, #args)))
  end
end

local ce = extend(KEYS[3], now + tonumber(ARGV[1]))
local be, shift, botPaused = now, 0, 0
if tonumber(ARGV[2]) > 0 then
  botPaused = 1
  be = extend(KEYS[2], now + tonumber(ARGV[2]))
  local f = redis.call('ZRANGEBYSCORE', KEYS[1], num(now - guard), '+inf', 'WITHSCORES')
  if #f > 0 then
    shift = be - tonumber(f[2])
    if shift > 0 then
      local args, moved = {}, {}
      for i = 1, #f, 2 do
        local m, x = f[i], tonumber(f[i + 1]) + shift
        args[#args + 1] = num(x)
        args[#args + 1] = m
        local mchat = chatOf(m)
        if mchat then
          redis.call('ZADD', ARGV[4] .. mchat, 'XX', num(x), m)
          moved[ARGV[4] .. mchat] = x
        end
      end
      bulk('ZADD', KEYS[1], args)
      -- A chat's log now ends later: keep it as long as its last slot
      -- needs (an hour covers any window a limit can have).
      for key, x in pairs(moved) do keep(key, {longest = math.max(cw.longest, 3600000000)}, x) end
    else
      shift = 0
    end
  end
end

local head, requeued = ARGV[3], 0
if head ~= '' then
  -- The refused send did not count at Telegram.
  redis.call('ZREM', KEYS[1], head)
  redis.call('ZREM', KEYS[4], head)
  local bw = wins(ARGV[9])
  local g = redis.call('ZRANGEBYSCORE', KEYS[4], num(now - guard), '+inf', 'WITHSCORES')
  -- An unpaid message (an edit) takes no other message's slot: its own was
  -- placed where the free windows hold, another's may not be.
  local swap = not unpaidOf(head)
  for i = 1, #g, 2 do
    if unpaidOf(g[i]) then swap = false end
  end
  if swap and botPaused == 1 and ce <= be and #g > 0 and bw.maxn > 0 then
    -- The whole schedule has moved behind the pause. The refused message
    -- takes its chat's first slot, each of the chat's messages the next
    -- one's, and the last a new slot at the end: the chat keeps its order
    -- and its place in the bot-wide schedule.
    local k = #g / 2
    local last = g[2 * k - 1]
    redis.call('ZREM', KEYS[1], last)
    redis.call('ZREM', KEYS[4], last)
    for j = k - 1, 1, -1 do
      redis.call('ZADD', KEYS[1], g[2 * j + 2], g[2 * j - 1])
      redis.call('ZADD', KEYS[4], g[2 * j + 2], g[2 * j - 1])
    end
    redis.call('ZADD', KEYS[1], g[2], head)
    redis.call('ZADD', KEYS[4], g[2], head)
    local task = taskOf(head)
    if task then
      redis.call('SET', ARGV[8] .. task, 'g|' .. g[2] .. '|' .. head, 'PX', ARGV[7])
    end
    local ms = earliest(KEYS[4], cw, earliest(KEYS[1], bw, now))
    add(KEYS[1], bw, ms, last, false)
    add(KEYS[4], cw, ms, last, true)
    return {botPaused, num(be - now), num(ce - now), num(shift), k + 1}
  end
  local seq, stages = {head}, {'q'}
  local gm = {}
  for i = 1, #g, 2 do gm[#gm + 1] = g[i] end
  g = gm
  for _, m in ipairs(g) do seq[#seq + 1] = m; stages[#stages + 1] = 'q' end
  if #g > 0 then
    bulk('ZREM', KEYS[1], g)
    bulk('ZREM', KEYS[4], g)
  end
  local tn = redis.call('ZRANGEBYSCORE', KEYS[5], '(' .. num(now), '+inf')
  for _, m in ipairs(tn) do seq[#seq + 1] = m; stages[#stages + 1] = 'c' end
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '(' .. num(now), '+inf')
  local t = math.max(ce, be)
  for i, m in ipairs(seq) do
    t = earliest(KEYS[5], cw, t)
    add(KEYS[5], cw, t, m, true)
    local task = taskOf(m)
    if task then
      redis.call('SET', ARGV[8] .. task, stages[i] .. '|' .. num(t) .. '|' .. m, 'PX', ARGV[7])
    end
  end
  requeued = #seq
end
return {botPaused, num(be - now), num(ce - now), num(shift), requeued}
`)
