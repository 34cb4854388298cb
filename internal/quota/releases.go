package quota

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/herald-dev/herald/internal/keys"
)

// DefaultReleaseEvery is how long a worker gathers settled messages before
// it takes them back from their tokens' counts.
const DefaultReleaseEvery = 100 * time.Millisecond

// Releases takes settled messages back from their tokens' queued counts
// in batches: a worker settles up to 1,000 messages a second, and one
// script run per message (EVALSHA, HEXISTS, HINCRBY) was three Redis
// commands of each. Gathered for every, a token's releases cost one script
// run however many messages settled meanwhile.
//
// A count taken back up to every late is a token kept below its quota that
// long after its messages left, never above it. A process that dies before
// its flush leaves those counts to expire with their bucket, as a failed
// release always did.
type Releases struct {
	store *Store
	every time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	pending map[string]map[string]int // token → bucket field → count
	armed   bool
}

// NewReleases returns a batcher on s that flushes every (default
// DefaultReleaseEvery when every <= 0).
func NewReleases(s *Store, every time.Duration, log *slog.Logger) *Releases {
	if every <= 0 {
		every = DefaultReleaseEvery
	}
	return &Releases{store: s, every: every, log: log, pending: map[string]map[string]int{}}
}

// Settled notes one message of token from, created at created, that left
// the queues (settledQuota); it is taken back at the next flush.
func (r *Releases) Settled(from string, broadcast bool, created time.Time) {
	if from == "" || created.IsZero() {
		return
	}
	name := settledQuota(broadcast)
	field := bucketField(name, kinds[name], created)
	r.mu.Lock()
	byField := r.pending[from]
	if byField == nil {
		byField = map[string]int{}
		r.pending[from] = byField
	}
	byField[field]++
	start := !r.armed
	r.armed = true
	r.mu.Unlock()
	if start {
		time.AfterFunc(r.every, func() { r.flushNow() })
	}
}

// flushNow is the timer's flush, bounded by two seconds.
func (r *Releases) flushNow() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.Flush(ctx) // logged
}

// Flush takes back what was gathered: one script run per token. A token
// whose run fails keeps its counts until they expire with their buckets;
// the failure is logged, and the failures are returned joined.
func (r *Releases) Flush(ctx context.Context) error {
	var errs []error
	r.mu.Lock()
	pending := r.pending
	r.pending, r.armed = map[string]map[string]int{}, false
	r.mu.Unlock()
	for token, byField := range pending {
		args := make([]any, 0, 2*len(byField))
		n := 0
		for field, c := range byField {
			args = append(args, field, c)
			n += c
		}
		if err := releaseScript.Run(ctx, r.store.rdb, []string{keys.TokenQuota(token)}, args...).Err(); err != nil {
			errs = append(errs, err)
			r.log.Warn("could not take settled messages out of their token's queued count; they leave with their buckets",
				"token", token, "messages", n, "error", err)
		}
	}
	return errors.Join(errs...)
}

// Start implements the worker's Component; the batcher needs no
// goroutine of its own.
func (r *Releases) Start(context.Context) error { return nil }

// Shutdown flushes what is gathered: the worker shuts its components down
// after the last task ended.
func (r *Releases) Shutdown() { r.flushNow() }
