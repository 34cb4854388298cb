package quota

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Store counts the tokens' use in Redis.
type Store struct {
	rdb     redis.UniversalClient
	metrics *Metrics
	reserve *Reserve
}

// WithReserve makes s's Bulk answer for r, and returns s.
func (s *Store) WithReserve(r *Reserve) *Store {
	s.reserve = r
	return s
}

// Bulk is the reserve's verdict on bulk work (Reserve.Bulk): nil when it
// may be stored, or when s (or its reserve) is nil.
func (s *Store) Bulk() error {
	if s == nil {
		return nil
	}
	return s.reserve.Bulk()
}

// BulkFits is the reserve's verdict on n bulk messages of textBytes each
// (Reserve.Fits): nil when they may be stored, or when s (or its reserve)
// is nil.
func (s *Store) BulkFits(n, textBytes int) error {
	if s == nil {
		return nil
	}
	return s.reserve.Fits(n, textBytes)
}

// StartReserve samples Redis' memory in the background (Reserve.Start);
// without a reserve, stop does nothing.
func (s *Store) StartReserve(ctx context.Context) (stop func()) {
	if s == nil || s.reserve == nil {
		return func() {}
	}
	return s.reserve.Start(ctx)
}

// NewStore returns a store on rdb; m (nil: none) receives the figures of
// every check.
func NewStore(rdb redis.UniversalClient, m *Metrics) *Store {
	return &Store{rdb: rdb, metrics: m}
}

// Want is a count a request asks of one quota.
type Want struct {
	Name string
	N    int
}

// Usage is where one quota of a token stands: its limit (negative: none),
// what is counted, and when the oldest count leaves it (zero when nothing
// is counted or the quota frees as messages settle).
type Usage struct {
	Name  string
	Limit int
	Used  int
	Reset time.Time
}

// Remaining is what is left of the limit (0 when over it).
func (u Usage) Remaining() int { return max(u.Limit-u.Used, 0) }

// Exceeded is a refusal: the request would take the quota over its limit.
type Exceeded struct {
	Usage
	// Asked is the request's count.
	Asked int
	// RetryAfter is when a retry may succeed, at the earliest.
	RetryAfter time.Duration
}

func (e *Exceeded) Error() string {
	return fmt.Sprintf("quota %s exceeded: %d counted, %d asked, limit %d", e.Name, e.Used, e.Asked, e.Limit)
}

// Take checks the counts wants asks of the token's quotas limits at time
// at and, when all fit, counts them (one script). It returns the usage of
// each quota asked, and an *Exceeded naming the first that does not fit
// (nothing is counted then).
func (s *Store) Take(ctx context.Context, token string, limits Limits, at time.Time, wants ...Want) ([]Usage, error) {
	args := []any{at.UnixMilli()}
	for _, w := range wants {
		k, ok := kinds[w.Name]
		if !ok {
			return nil, fmt.Errorf("quota: %q is not a counting quota", w.Name)
		}
		args = append(args, w.Name, k.width.Milliseconds(), k.buckets, limits.limitOf(w.Name), w.N)
	}
	res, err := takeScript.Run(ctx, s.rdb, []string{keys.TokenQuota(token)}, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("quota: check %s: %w", token, err)
	}
	if len(res) != 2+2*len(wants) {
		return nil, fmt.Errorf("quota: the check answered %d values for %d quotas", len(res), len(wants))
	}
	usage := make([]Usage, len(wants))
	for i, w := range wants {
		usage[i] = Usage{Name: w.Name, Limit: limits.limitOf(w.Name), Used: int(res[2+2*i])}
		if ms := res[3+2*i]; ms > 0 && kinds[w.Name].retry == 0 {
			usage[i].Reset = time.UnixMilli(ms)
		}
	}
	refused := int(res[1]) - 1
	s.metrics.observe(token, usage, refused, wants)
	if res[0] == 1 {
		return usage, nil
	}
	u, w := usage[refused], wants[refused]
	retry := kinds[w.Name].retry
	if !u.Reset.IsZero() {
		retry = max(u.Reset.Sub(at), time.Second)
	}
	return usage, &Exceeded{Usage: u, Asked: w.N, RetryAfter: retry}
}

// Give takes back n that Take counted at time at in the quota name, when
// the request did not store what it counted (refused later, a duplicate,
// chats left out).
func (s *Store) Give(ctx context.Context, token, name string, at time.Time, n int) error {
	if n <= 0 {
		return nil
	}
	k, ok := kinds[name]
	if !ok {
		return fmt.Errorf("quota: %q is not a counting quota", name)
	}
	field := bucketField(name, k, at)
	if err := releaseScript.Run(ctx, s.rdb, []string{keys.TokenQuota(token)}, field, n).Err(); err != nil {
		return fmt.Errorf("quota: release %s: %w", token, err)
	}
	return nil
}

// bucketField is the quota hash's field of quota name's bucket that holds
// the time at.
func bucketField(name string, k kind, at time.Time) string {
	return name + ":" + strconv.FormatInt(at.UnixMilli()/k.width.Milliseconds(), 10)
}

// settledQuota is the quota a message that left the queues is taken back
// from (Releases): a broadcast's (queue broadcast) from its recipients',
// any other from the messages'. Herald's own messages (from "") count
// against no quota.
func settledQuota(broadcast bool) string {
	if broadcast {
		return NameRecipients
	}
	return NameQueued
}

// KeepAudience admits the token's audience name until expires: a name it
// keeps already, or a new one while it keeps fewer than its limit (an
// *Exceeded otherwise). Expired audiences do not count.
func (s *Store) KeepAudience(ctx context.Context, token, name string, limits Limits, at, expires time.Time) (Usage, error) {
	limit := limits.limitOf(NameAudiences)
	res, err := audienceScript.Run(ctx, s.rdb, []string{keys.TokenAudiences(token)},
		at.Unix(), name, expires.Unix(), limit).Int64Slice()
	if err != nil || len(res) != 2 {
		return Usage{}, fmt.Errorf("quota: audiences of %s: %w", token, err)
	}
	u := Usage{Name: NameAudiences, Limit: limit, Used: int(res[1])}
	want := []Want{{Name: NameAudiences, N: 1}}
	if res[0] == 1 {
		s.metrics.observe(token, []Usage{u}, -1, want)
		return u, nil
	}
	s.metrics.observe(token, []Usage{u}, 0, want)
	return u, &Exceeded{Usage: u, Asked: 1, RetryAfter: time.Minute}
}

// DropAudience forgets the token's audience name (deleted).
func (s *Store) DropAudience(ctx context.Context, token, name string) error {
	if err := s.rdb.ZRem(ctx, keys.TokenAudiences(token), name).Err(); err != nil {
		return fmt.Errorf("quota: audiences of %s: %w", token, err)
	}
	return nil
}
