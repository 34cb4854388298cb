package interact

import "github.com/redis/go-redis/v9"

// Every script below runs on keys of one bot's key space (keys.Space), so
// on one hash slot. Times are milliseconds.

// takeLeaseScript takes a bot's updates lease when it is free, or keeps it
// when the caller holds it already (a holder whose renewal failed once
// must not lock itself out).
//
// KEYS[1] the lease (keys.Space.UpdatesLease)
// ARGV[1] the caller's owner id, ARGV[2] the lease's time to live
// Returns 0 when the caller holds the lease now; else the other holder's
// lease's remaining time to live (at least 1), so that the caller tries
// again as it runs out.
var takeLeaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 1 then
    ttl = tonumber(ARGV[2])
  end
  return ttl
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 0
`)

// renewLeaseScript extends the lease of its holder.
//
// KEYS[1] the lease
// ARGV[1] the holder's owner id, ARGV[2] the new time to live
// Returns 1 when extended, 0 when the caller no longer holds it.
var renewLeaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// releaseLeaseScript ends the lease of its holder, so that another process
// takes over at once.
//
// KEYS[1] the lease
// ARGV[1] the holder's owner id
// Returns 1 when released, 0 when the caller did not hold it.
var releaseLeaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
`)

// advanceScript moves the confirmed getUpdates offset forward, only for
// the lease's holder and never backward (a redelivered old update leaves
// it alone).
//
// KEYS[1] the lease, KEYS[2] the offset (keys.Space.UpdatesOffset)
// ARGV[1] the holder's owner id, ARGV[2] the new offset, ARGV[3] the
// offset's time to live
// Returns the offset now stored, or -1 when the caller does not hold the
// lease (nothing changed).
var advanceScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
local cur = tonumber(redis.call('GET', KEYS[2]) or '0')
local new = tonumber(ARGV[2])
if new > cur then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
  return new
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return cur
`)

// claimScript records a press the first time its callback query comes,
// in a hash that later steps fill in (see record in press.go), and gives
// the query's answer to the recording task unless another task claimed it
// first (answerClaimScript).
//
// KEYS[1] the press record (keys.Space.CallbackQuery)
// ARGV[1] the owner: the id of the task handling the press
// ARGV[2] the action, ARGV[3] the record's time to live
// Returns {status, answerer}: status 1 when this call recorded the press,
// 2 when the owner comes back to a press it has not finished, 3 when the
// owner's press is finished, 0 for a duplicate (another task with the
// same query, which does nothing); answerer is 1 when the owner answers
// the query.
var claimScript = redis.NewScript(`
local owner = redis.call('HGET', KEYS[1], 'owner')
local status = 0
if not owner then
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'action', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  status = 1
elseif owner ~= ARGV[1] then
  return {0, 0}
elseif redis.call('HEXISTS', KEYS[1], 'done') == 1 then
  status = 3
else
  status = 2
end
redis.call('HSETNX', KEYS[1], 'answerer', ARGV[1])
if redis.call('HGET', KEYS[1], 'answerer') == ARGV[1] then
  return {status, 1}
end
return {status, 0}
`)

// answerClaimScript claims the answer of a callback query for a task
// that answers without recording the press (a refusal, an alert no longer
// tracked), so that the query is answered once whichever tasks bring it.
//
// KEYS[1] the press record
// ARGV[1] the id of the task, ARGV[2] the record's time to live when it
// is made here
// Returns 1 when the task answers, 0 when another task does.
var answerClaimScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'answerer')
if not cur then
  redis.call('HSET', KEYS[1], 'answerer', ARGV[1])
  if redis.call('PTTL', KEYS[1]) < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return 1
end
if cur == ARGV[1] then
  return 1
end
return 0
`)

// noteScript adds a press's line below its thread's message, once per
// press, keeping the latest maxLines lines.
//
// KEYS[1] the press record, KEYS[2] the thread's lines
// (keys.Space.PressLines)
// ARGV[1] the line, ARGV[2] the lines' time to live, ARGV[3] the most
// lines kept
// Returns every line kept, oldest first.
var noteScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], 'noted', '1') == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return redis.call('LRANGE', KEYS[2], 0, -1)
`)
