package broker

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/background"
)

// sweepLeasesScript puts active tasks whose lease has not been extended for a
// while back at the head of their queue's pending list. asynq's own recoverer
// does the same only for leases that expired 30 s ago, checked once a
// minute, which leaves a crashed worker's task undelivered for 60-90 s.
//
// KEYS[1] asynq:{q}:lease, KEYS[2] asynq:{q}:active, KEYS[3] asynq:{q}:pending.
// ARGV[1] lease horizon in seconds (LeaseDuration - staleAfter): a lease
// ending before now+ARGV[1] is stale; ARGV[2] the task key prefix
// "asynq:{q}:t:" (same hash slot); ARGV[3] the most tasks moved per call.
// Returns the ids moved. Redis TIME is the clock, so workers' clocks do not
// matter beyond the skew of the lease scores asynq wrote.
var sweepLeasesScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now + tonumber(ARGV[1])), 'LIMIT', 0, tonumber(ARGV[3]))
local moved = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  if redis.call('LREM', KEYS[2], 0, id) > 0 then
    redis.call('RPUSH', KEYS[3], id)
    redis.call('HSET', ARGV[2] .. id, 'state', 'pending', 'pending_since', now * 1000000000 + tonumber(t[2]) * 1000)
    moved[#moved + 1] = id
  end
end
return moved
`)

// sweepClient is what the sweeper needs of a Redis client.
type sweepClient interface {
	redis.Scripter
	ZCount(ctx context.Context, key, min, max string) *redis.IntCmd
}

// leaseSweeper requeues the tasks of workers that stopped extending their
// leases (killed, frozen or cut off from Redis). Every worker runs one; the
// script is atomic, so two sweepers never move the same task twice.
//
// Safety: a live asynq server extends its leases every 5 s, so staleAfter
// (default 15 s, at least 10 s) means three missed extensions. If a stalled
// worker comes back and finishes the task anyway, asynq's acknowledgement
// finds the task gone from the active list and does nothing, and Herald's
// sent record stops the second worker from sending it again unless both
// send at the same moment.
type leaseSweeper struct {
	rdb        sweepClient
	queues     []string
	staleAfter time.Duration
	interval   time.Duration
	wake       func(queue string)
	recovered  func(queue string, n int)
	log        *slog.Logger
	// reach, when set, holds the sweep back until Redis has answered
	// steadily for reachGrace after an outage (see reach).
	reach *reach
}

// newLeaseSweeper returns a sweeper of queues that requeues a task whose
// lease went staleAfter without an extension, every interval (±20%). wake
// and recovered, when set, hear of each queue a sweep moved tasks in.
func newLeaseSweeper(rdb sweepClient, queues []string, staleAfter, interval time.Duration,
	wake func(queue string), recovered func(queue string, n int), log *slog.Logger) *leaseSweeper {
	return &leaseSweeper{rdb: rdb, queues: queues, staleAfter: staleAfter, interval: interval,
		wake: wake, recovered: recovered, log: log}
}

// Sweep runs the script once per queue and returns how many tasks it moved.
func (s *leaseSweeper) Sweep(ctx context.Context) int {
	horizon := strconv.Itoa(int((leaseDuration - s.staleAfter) / time.Second))
	// A plain read on this process's clock (a second lenient, for skew)
	// finds the queues with a lease that may be stale; only those run the
	// script, which decides on Redis' clock. An idle fleet then costs one
	// command per queue and round instead of three.
	lenient := strconv.FormatInt(time.Now().Add(leaseDuration-s.staleAfter+time.Second).Unix(), 10)
	total := 0
	for _, q := range s.queues {
		if n, err := s.rdb.ZCount(ctx, LeaseKey(q), "-inf", "("+lenient).Result(); err == nil && n == 0 {
			continue
		}
		if s.reach != nil && !s.reach.steady(reachGrace) {
			// Every lease went stale in the outage, the live workers' too:
			// they extend them at their next heartbeat.
			s.log.Info("lease sweep waits: Redis answers again after an outage", "queue", q, "grace", reachGrace)
			continue
		}
		res, err := sweepLeasesScript.Run(ctx, s.rdb,
			[]string{LeaseKey(q), ActiveKey(q), PendingKey(q)},
			horizon, taskKeyPrefix(q), 100).StringSlice()
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("lease sweep failed; asynq's recoverer remains the backstop", "queue", q, "error", err)
			}
			continue
		}
		if len(res) == 0 {
			continue
		}
		total += len(res)
		s.log.Warn("requeued tasks of a worker that stopped extending its leases", "queue", q, "tasks", len(res), "task_ids", res)
		if s.recovered != nil {
			s.recovered(q, len(res))
		}
		if s.wake != nil {
			s.wake(q)
		}
	}
	return total
}

// Run sweeps every interval until ctx ends, and once more as soon as an
// outage's grace ends, so that a dead worker's tasks do not wait a whole
// interval longer for it.
func (s *leaseSweeper) Run(ctx context.Context) {
	timer := time.NewTimer(background.Jitter(s.interval))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		s.Sweep(ctx)
		next := background.Jitter(s.interval)
		if s.reach != nil {
			if left := s.reach.left(reachGrace); left > 0 && left < next {
				next = left + 100*time.Millisecond
			}
		}
		timer.Reset(next)
	}
}
