package quota

import "github.com/redis/go-redis/v9"

// takeScript checks and takes a request's counts, all or nothing.
//
// KEYS[1]: the token's quota hash (keys.TokenQuota; tag {tok:NAME}).
// ARGV[1]: now, Unix milliseconds.
// ARGV[2..]: per quota, five values: name, bucket width (ms), buckets in
// the horizon, limit (negative: none), count to take.
// Returns {allowed (1/0), index of the first quota refused (1-based, 0
// when allowed), then per quota: its count (after the take when allowed),
// the Unix ms at which its oldest counted bucket leaves the horizon (0
// when nothing is counted)}. Buckets that left their horizon are deleted
// on the way; the hash expires one horizon (one bucket more) after the take
// that started its newest bucket.
var takeScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local qs, by = {}, {}
for i = 2, #ARGV, 5 do
  local q = {name = ARGV[i], w = tonumber(ARGV[i+1]), b = tonumber(ARGV[i+2]),
    limit = tonumber(ARGV[i+3]), n = tonumber(ARGV[i+4]), sum = 0, oldest = -1}
  q.cur = math.floor(now / q.w)
  qs[#qs+1] = q
  by[q.name] = q
end
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local f = all[i]
  local sep = string.find(f, ':', 1, true)
  local q = sep and by[string.sub(f, 1, sep - 1)]
  if q then
    local idx = tonumber(string.sub(f, sep + 1))
    local v = tonumber(all[i+1])
    if idx == nil or idx <= q.cur - q.b then
      redis.call('HDEL', KEYS[1], f)
    elseif v > 0 then
      q.sum = q.sum + v
      if q.oldest < 0 or idx < q.oldest then q.oldest = idx end
    end
  end
end
local out = {1, 0}
for i, q in ipairs(qs) do
  if out[1] == 1 and q.limit >= 0 and q.sum + q.n > q.limit then
    out[1] = 0
    out[2] = i
  end
end
local ttl, fresh = 0, false
for _, q in ipairs(qs) do
  if out[1] == 1 and q.n > 0 then
    if redis.call('HINCRBY', KEYS[1], q.name .. ':' .. q.cur, q.n) == q.n then fresh = true end
    q.sum = q.sum + q.n
    if q.oldest < 0 then q.oldest = q.cur end
  end
  local reset = 0
  if q.oldest >= 0 then reset = (q.oldest + q.b) * q.w end
  out[#out+1] = q.sum
  out[#out+1] = reset
  if q.w * (q.b + 1) > ttl then ttl = q.w * (q.b + 1) end
end
-- A bucket counts until its start plus the horizon, so the hash needs a
-- longer life only when a take starts a new bucket; the takes after it in
-- the same bucket leave the expiry alone (no PTTL per take).
if fresh then redis.call('PEXPIRE', KEYS[1], ttl) end
return out
`)

// releaseScript takes counts back from buckets that are still there (an
// expired bucket is not made again).
//
// KEYS[1]: the token's quota hash (keys.TokenQuota).
// ARGV: pairs of a field, "<quota>:<bucket>", and the count to take back
// from it. A bucket brought down to 0 is deleted (and the hash with its
// last field), so that a request refused after its take, which gives its
// count back, leaves nothing in Redis.
// Returns the new count of the last bucket, or 0 when it was gone.
var releaseScript = redis.NewScript(`
local n = 0
for i = 1, #ARGV, 2 do
  n = 0
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    n = redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1]))
    if n <= 0 then
      redis.call('HDEL', KEYS[1], ARGV[i])
      n = 0
    end
  end
end
return n
`)

// audienceScript admits one audience of a token: a new name only while
// the token keeps fewer than its limit (expired ones do not count).
//
// KEYS[1]: the token's audiences (keys.TokenAudiences; tag {tok:NAME}).
// ARGV[1]: now, Unix seconds; ARGV[2]: the audience's name; ARGV[3]: its
// expiry, Unix seconds; ARGV[4]: the limit (negative: none).
// Returns {admitted (1/0), audiences kept (after the admission when
// admitted)}.
var audienceScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local n = redis.call('ZCARD', KEYS[1])
local known = redis.call('ZSCORE', KEYS[1], ARGV[2])
local limit = tonumber(ARGV[4])
if not known and limit >= 0 and n >= limit then
  return {0, n}
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
if not known then n = n + 1 end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('EXPIREAT', KEYS[1], last[2])
return {1, n}
`)
