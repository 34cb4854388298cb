package feeds

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Fields of the feed state hash (keys.FeedState).
const (
	fieldETag         = "etag"
	fieldLastModified = "last_modified"
	fieldPrimed       = "primed"
)

// takeLease takes a feed's poll lease when it is free or already held by
// the same poller process (which keeps it between its own polls, see
// releaseLease); a lease of another process is left alone.
//
// KEYS[1] the lease key (keys.FeedLease)
// ARGV[1] the new token, which starts with the owner prefix
// ARGV[2] the owner prefix of this process
// ARGV[3] the lease time to live in milliseconds
// Returns 1 when the lease was taken, 0 when another process holds it.
var takeLease = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and string.sub(cur, 1, string.len(ARGV[2])) ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`)

// releaseLease ends or shortens a poll lease, only if the caller still holds
// it.
//
// KEYS[1] the lease key (keys.FeedLease)
// ARGV[1] the holder's token
// ARGV[2] milliseconds to keep the lease for (0: delete it now)
// Returns 1 when the lease was the caller's, 0 otherwise.
var releaseLease = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local hold = tonumber(ARGV[2])
if hold and hold > 0 then
  redis.call('PEXPIRE', KEYS[1], hold)
else
  redis.call('DEL', KEYS[1])
end
return 1
`)

// store keeps the poller's per-feed state in Redis.
type store struct {
	rdb redis.UniversalClient
	// keep is the number of seen items remembered per feed (more when a
	// feed lists more items at once).
	keep int
	// ttl is how long a feed's state outlives its last poll.
	ttl time.Duration
}

// state is what the store knows about a feed before a poll.
type state struct {
	validators validators
	// primed is true once a successful poll recorded the feed's items.
	primed bool
}

// acquire takes the feed's poll lease for ttl with token, whose prefix
// owner identifies the process; false when another process holds it.
func (s *store) acquire(ctx context.Context, feed, owner, token string, ttl time.Duration) (bool, error) {
	n, err := takeLease.Run(ctx, s.rdb, []string{keys.FeedLease(feed)}, token, owner, ttl.Milliseconds()).Int()
	return n == 1, err
}

// release keeps the lease for hold more (so that a replica on the same
// schedule does not poll right after), or deletes it when hold is zero.
func (s *store) release(ctx context.Context, feed, token string, hold time.Duration) error {
	return releaseLease.Run(ctx, s.rdb, []string{keys.FeedLease(feed)}, token, hold.Milliseconds()).Err()
}

// load reads the feed's validators and whether it was primed.
func (s *store) load(ctx context.Context, feed string) (state, error) {
	vals, err := s.rdb.HMGet(ctx, keys.FeedState(feed), fieldETag, fieldLastModified, fieldPrimed).Result()
	if err != nil {
		return state{}, err
	}
	str := func(v any) string {
		s, _ := v.(string)
		return s
	}
	return state{
		validators: validators{ETag: str(vals[0]), LastModified: str(vals[1])},
		primed:     str(vals[2]) == "1",
	}, nil
}

// seen reports, for each member, whether it is in the feed's seen set.
func (s *store) seen(ctx context.Context, feed string, members []string) ([]bool, error) {
	out := make([]bool, len(members))
	if len(members) == 0 {
		return out, nil
	}
	scores, err := s.rdb.ZMScore(ctx, keys.FeedSeen(feed), members...).Result()
	if err != nil {
		return nil, err
	}
	if len(scores) != len(members) {
		return nil, errors.New("ZMSCORE returned the wrong number of scores")
	}
	for i, sc := range scores {
		out[i] = sc > 0 // scores are Unix milliseconds; a missing member reads as 0
	}
	return out, nil
}

// markSeen adds members to the feed's seen set.
func (s *store) markSeen(ctx context.Context, feed string, now time.Time, members ...string) error {
	if len(members) == 0 {
		return nil
	}
	return s.rdb.ZAdd(ctx, keys.FeedSeen(feed), zmembers(now, members)...).Err()
}

// commit is what a successful fetch stores.
type commit struct {
	// add are members to record as seen (the first poll records all).
	add []string
	// refresh are members still listed by the feed: their score moves to
	// now so trimming never forgets an item the feed still shows.
	refresh []string
	// listed is the number of items the feed lists now.
	listed int
	// validators replace the stored ones unless nil (kept when a dispatch
	// failed, so the next poll fetches the same items again).
	validators *validators
	// prime marks the feed as primed.
	prime bool
}

// trimSeenScript shrinks a feed's seen set to its limit, oldest first,
// never removing an item the feed lists now (scores are milliseconds, so
// items recorded in the same millisecond tie, and a plain trim by rank
// could drop a listed one).
//
// KEYS[1] the seen set. ARGV[1] how many to keep; ARGV[2..] the members the
// feed lists now. Returns how many were removed.
var trimSeenScript = redis.NewScript(`
local n = redis.call('ZCARD', KEYS[1])
local excess = n - tonumber(ARGV[1])
if excess <= 0 then return 0 end
local listed = {}
for i = 2, #ARGV do listed[ARGV[i]] = true end
local removed = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if removed >= excess then break end
  if not listed[m] then
    redis.call('ZREM', KEYS[1], m)
    removed = removed + 1
  end
end
return removed
`)

// save applies c in one transaction, trims the seen set and renews the
// expiry of the feed's keys.
func (s *store) save(ctx context.Context, feed string, now time.Time, c commit) error {
	seenKey, stateKey := keys.FeedSeen(feed), keys.FeedState(feed)
	keep := max(s.keep, c.listed)
	_, err := s.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		if len(c.add) > 0 {
			tx.ZAdd(ctx, seenKey, zmembers(now, c.add)...)
		}
		if len(c.refresh) > 0 {
			tx.ZAddArgs(ctx, seenKey, redis.ZAddArgs{XX: true, GT: true, Members: zmembers(now, c.refresh)})
		}
		listed := make([]any, 0, 1+len(c.add)+len(c.refresh))
		listed = append(listed, keep)
		for _, m := range c.add {
			listed = append(listed, m)
		}
		for _, m := range c.refresh {
			listed = append(listed, m)
		}
		trimSeenScript.Eval(ctx, tx, []string{seenKey}, listed...)
		if c.validators != nil {
			tx.HSet(ctx, stateKey, fieldETag, c.validators.ETag, fieldLastModified, c.validators.LastModified)
		}
		if c.prime {
			tx.HSet(ctx, stateKey, fieldPrimed, "1")
		}
		tx.PExpire(ctx, seenKey, s.ttl)
		tx.PExpire(ctx, stateKey, s.ttl)
		return nil
	})
	return err
}

// touch renews the expiry of the feed's keys (after a 304).
func (s *store) touch(ctx context.Context, feed string) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.PExpire(ctx, keys.FeedSeen(feed), s.ttl)
		p.PExpire(ctx, keys.FeedState(feed), s.ttl)
		return nil
	})
	return err
}

func zmembers(now time.Time, members []string) []redis.Z {
	score := float64(now.UnixMilli())
	zs := make([]redis.Z, len(members))
	for i, m := range members {
		zs[i] = redis.Z{Score: score, Member: m}
	}
	return zs
}
