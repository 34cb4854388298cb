package broker

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/background"
)

// reclaimSetsScript puts the tasks of stale aggregation sets back into their
// groups. asynq's aggregator moves a group's tasks into an aggregation set,
// stores the aggregated task, then deletes the set; a set that is still there
// long after its creation belongs to an aggregator that died. asynq reclaims
// such sets only two minutes after their creation, and does not put the
// group's name back into the queue's set of groups, so the aggregator would
// not look at the group again until a new task joins it. This script does
// both, sooner.
//
// KEYS[1] asynq:{q}:aggregation_sets, KEYS[2] asynq:{q}:groups.
// ARGV[1] horizon in seconds: a set scored (creation + 2 minutes, in Unix
// seconds) at or below Redis TIME + horizon is stale; ARGV[2] the group key
// prefix "asynq:{q}:g:" (same hash slot); ARGV[3] the most sets per call.
// Returns {sets reclaimed, tasks put back}.
var reclaimSetsScript = redis.NewScript(`
local now = tonumber(redis.call('TIME')[1])
local sets = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now + tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[3]))
local moved = 0
for _, set in ipairs(sets) do
  local group = string.match(set, '^(.*):[^:]*$')
  local res = redis.call('ZRANGE', set, 0, -1, 'WITHSCORES')
  for i = 1, #res, 2 do
    redis.call('ZADD', group, tonumber(res[i + 1]), res[i])
    moved = moved + 1
  end
  redis.call('DEL', set)
  redis.call('ZREM', KEYS[1], set)
  if #res > 0 and string.sub(group, 1, #ARGV[2]) == ARGV[2] then
    redis.call('SADD', KEYS[2], string.sub(group, #ARGV[2] + 1))
  end
end
return {#sets, moved}
`)

// reclaimer returns the items of aggregation sets left behind by a dead
// aggregator to their groups, where the next aggregation picks them up.
// Every worker runs one; the script is atomic, so two reclaimers never move
// a set twice. Should an aggregator merely be slow, its set is aggregated
// twice, and the digest handler's per-item claims deliver each item once.
type reclaimer struct {
	rdb       redis.Scripter
	queues    []string
	after     time.Duration
	interval  time.Duration
	reclaimed func(items int)
	log       *slog.Logger
}

// newReclaimer returns a reclaimer of queues' aggregation sets older than
// after (below AggregationTimeout); reclaimed, when set, hears how many items
// each pass put back.
func newReclaimer(rdb redis.Scripter, queues []string, after time.Duration, reclaimed func(int), log *slog.Logger) *reclaimer {
	return &reclaimer{rdb: rdb, queues: queues, after: after,
		interval: min(max(after/2, time.Second), 15*time.Second), reclaimed: reclaimed, log: log}
}

// horizon is ARGV[1] of reclaimSetsScript: a set created at least `after`
// ago (whole seconds, rounded up, plus one for the truncation of the score)
// has a score at or below now + horizon.
func (s *reclaimer) horizon() int {
	after := int((s.after + time.Second - 1) / time.Second)
	return int(AggregationTimeout/time.Second) - after - 1
}

// Reclaim runs the script for every queue and returns how many items it
// put back.
func (s *reclaimer) Reclaim(ctx context.Context) int {
	horizon := strconv.Itoa(s.horizon())
	total := 0
	for _, q := range s.queues {
		for {
			res, err := reclaimSetsScript.Run(ctx, s.rdb,
				[]string{AggregationSetsKey(q), GroupsKey(q)},
				horizon, groupKeyPrefix(q), 100).Int64Slice()
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("aggregation set reclaim failed; asynq's recoverer remains the backstop", "queue", q, "error", err)
				}
				break
			}
			if len(res) != 2 || res[0] == 0 {
				break
			}
			total += int(res[1])
			s.log.Warn("put the items of an abandoned digest aggregation back into their groups",
				"queue", q, "sets", res[0], "items", res[1])
			if s.reclaimed != nil {
				s.reclaimed(int(res[1]))
			}
			if res[0] < 100 {
				break
			}
		}
	}
	return total
}

// Run reclaims every interval (±20% jitter) until ctx ends.
func (s *reclaimer) Run(ctx context.Context) {
	background.Every(ctx, background.Jitter(s.interval), s.interval, func() { s.Reclaim(ctx) })
}
