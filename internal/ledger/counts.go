package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// A broadcast's status is read from a counts hash (keys.Space.BroadcastCounts)
// rather than from each of its messages' records: every write of a
// broadcast message's record (a worker's send record, a settle, a reopen
// for a retry) and of its cancel mark goes through a script that compares
// the record before and after and moves the counts with it, in the same
// round trip as the write itself. So the counts equal the records'
// states whatever order the writes come in, a record written twice counts
// once, and a failed message retried leaves the failed count.

// The fields of a counts hash: the settled records by kind, and the
// messages marked cancelled but not settled yet.
const (
	CountSent       = "sent"
	CountFailed     = "failed"
	CountBlocked    = "blocked"
	CountCancelled  = "cancelled"
	CountOther      = "other"
	CountCancelling = "cancelling"
)

// kindLua classifies a stored value as the counts do: nil for no record or
// a worker's progress record (on its way), else the field of its settled
// state (Decode's rule: a JSON object with a state).
const kindLua = `
local function kind(v)
  if not v or string.sub(v, 1, 1) ~= '{' then return nil end
  if string.sub(v, 1, 11) == '{"s":"` + string(StateSent) + `"' then return '` + CountSent + `' end
  local ok, r = pcall(cjson.decode, v)
  if not ok or type(r) ~= 'table' or type(r.s) ~= 'string' or r.s == '' then return nil end
  if r.s == '` + string(StateFailed) + `' then
    if r.r == '` + ReasonChatBlocked + `' then return '` + CountBlocked + `' end
    return '` + CountFailed + `'
  end
  if r.s == '` + string(StateSent) + `' or r.s == '` + string(StateCancelled) + `' then return r.s end
  return '` + CountOther + `'
end
`

// writeScript writes (or deletes) a broadcast message's send record and
// moves its broadcast's counts from the old record's kind to the new one's.
//
// KEYS[1]: the message's record (keys.Space.Sent); KEYS[2]: its
// broadcast's counts (keys.Space.BroadcastCounts); KEYS[3]: its cancel
// mark (keys.Space.Cancel). All in the bot's space ({bot} tag).
// ARGV[1]: the new value, "" to delete the record; ARGV[2]: its TTL (ms);
// ARGV[3]: the counts' TTL (ms).
// Returns 1 when the counts moved, 0 when the kind stayed the same.
var writeScript = redis.NewScript(kindLua + `
local old = redis.call('GET', KEYS[1])
local new = ARGV[1]
if new == '' then
  redis.call('DEL', KEYS[1])
  new = nil
else
  redis.call('SET', KEYS[1], new, 'PX', ARGV[2])
end
local was, now = kind(old), kind(new)
if was == now then return 0 end
if was then redis.call('HINCRBY', KEYS[2], was, -1) end
if now then redis.call('HINCRBY', KEYS[2], now, 1) end
if (was == nil) ~= (now == nil) and redis.call('EXISTS', KEYS[3]) == 1 then
  if now then
    redis.call('HINCRBY', KEYS[2], '` + CountCancelling + `', -1)
  else
    redis.call('HINCRBY', KEYS[2], '` + CountCancelling + `', 1)
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`)

// markScript puts the cancel mark on the broadcast's messages that are
// neither settled nor marked, and counts them as cancelling.
//
// KEYS[1]: the broadcast's counts (keys.Space.BroadcastCounts); then per
// message KEYS[2i], KEYS[2i+1]: its record (keys.Space.Sent) and its
// cancel mark (keys.Space.Cancel). All in the bot's space.
// ARGV[1]: the mark's value (who cancelled); ARGV[2]: the mark's TTL (ms);
// ARGV[3]: the counts' TTL (ms).
// Returns the 1-based positions of the messages it marked.
var markScript = redis.NewScript(kindLua + `
local marked = {}
for i = 2, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 and not kind(redis.call('GET', KEYS[i])) then
    redis.call('SET', KEYS[i + 1], ARGV[1], 'PX', ARGV[2])
    marked[#marked + 1] = i / 2
  end
end
if #marked > 0 then
  redis.call('HINCRBY', KEYS[1], '` + CountCancelling + `', #marked)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return marked
`)

// markChunk is how many messages one markScript call marks.
const markChunk = 1000

// write stores value as the record of the bot's message taskID for ttl
// ("" deletes it): through writeScript for a broadcast's message, a plain
// SET or DEL otherwise. Either way one command.
func (s *Store) write(ctx context.Context, bot, taskID, value string, ttl time.Duration) error {
	ks := keys.Bot(bot)
	id, ok := keys.BroadcastOf(taskID)
	switch {
	case ok:
		return writeScript.Run(ctx, s.rdb, []string{ks.Sent(taskID), ks.BroadcastCounts(id), ks.Cancel(taskID)},
			value, ttl.Milliseconds(), s.retention.Milliseconds()).Err()
	case value == "":
		return s.rdb.Del(ctx, ks.Sent(taskID)).Err()
	}
	return s.rdb.Set(ctx, ks.Sent(taskID), value, ttl).Err()
}

// Write stores a worker's send record of the bot's message taskID (its
// progress, or the settled record once every part went) for ttl, keeping
// its broadcast's counts, if it has one, in the same command.
func (s *Store) Write(ctx context.Context, bot, taskID, value string, ttl time.Duration) error {
	return s.write(ctx, bot, taskID, value, ttl)
}

// MarkCancelled puts the cancel mark, by, on those of the bot's messages
// taskIDs (all of broadcast's) that are neither settled nor marked,
// counting them in the broadcast's counts, a thousand per round trip. It
// returns the ids it marked.
func (s *Store) MarkCancelled(ctx context.Context, bot, broadcast string, taskIDs []string, by string) ([]string, error) {
	ks := keys.Bot(bot)
	var marked []string
	for start := 0; start < len(taskIDs); start += markChunk {
		part := taskIDs[start:min(start+markChunk, len(taskIDs))]
		names := make([]string, 0, 1+2*len(part))
		names = append(names, ks.BroadcastCounts(broadcast))
		for _, id := range part {
			names = append(names, ks.Sent(id), ks.Cancel(id))
		}
		pos, err := markScript.Run(ctx, s.rdb, names, by, s.retention.Milliseconds(), s.retention.Milliseconds()).Int64Slice()
		if err != nil {
			return marked, fmt.Errorf("ledger: cancel %d messages of %s: %w", len(part), broadcast, err)
		}
		for _, p := range pos {
			marked = append(marked, part[p-1])
		}
	}
	return marked, nil
}
