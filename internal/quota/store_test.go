package quota_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/test/redistest"
)

func newStore(t *testing.T) (*quota.Store, context.Context) {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	return quota.NewStore(rdb, quota.NewMetrics(nil)), context.Background()
}

// settle takes one settled message of token back through a Releases, as
// a worker does, flushed at once.
func settle(t *testing.T, s *quota.Store, token string, broadcast bool, created time.Time) {
	t.Helper()
	r := quota.NewReleases(s, time.Hour, slog.New(slog.DiscardHandler))
	r.Settled(token, broadcast, created)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestQueuedMessagesAreBoundedAndFreedAsTheySettle(t *testing.T) {
	s, ctx := newStore(t)
	lim := quota.Limits{QueuedMessages: 3}.WithDefaults()
	at := time.Date(2026, 12, 4, 10, 30, 0, 0, time.UTC)
	for i := range 3 {
		u, err := s.Take(ctx, "cron", lim, at, quota.Want{Name: quota.NameQueued, N: 1})
		if err != nil || u[0].Used != i+1 || u[0].Remaining() != 2-i {
			t.Fatalf("take %d: %+v, %v", i, u, err)
		}
	}
	_, err := s.Take(ctx, "cron", lim, at, quota.Want{Name: quota.NameQueued, N: 1})
	var ex *quota.Exceeded
	if !errors.As(err, &ex) || ex.Name != quota.NameQueued || ex.Used != 3 || ex.Limit != 3 || ex.RetryAfter <= 0 {
		t.Fatalf("the fourth: %v (%+v)", err, ex)
	}
	// Another token has its own count.
	if _, err := s.Take(ctx, "grafana", lim, at, quota.Want{Name: quota.NameQueued, N: 1}); err != nil {
		t.Fatalf("another token: %v", err)
	}
	// One settles (created in the same hour): one more fits.
	settle(t, s, "cron", false, at.Add(time.Minute))
	if _, err := s.Take(ctx, "cron", lim, at.Add(2*time.Minute), quota.Want{Name: quota.NameQueued, N: 1}); err != nil {
		t.Fatalf("after a settle: %v", err)
	}
	// A broadcast's message settling frees nothing of the messages.
	settle(t, s, "cron", true, at)
	if _, err := s.Take(ctx, "cron", lim, at, quota.Want{Name: quota.NameQueued, N: 1}); err == nil {
		t.Fatal("a broadcast's settle freed a message's place")
	}
	// What was never released leaves the count after 24 hours.
	if _, err := s.Take(ctx, "cron", lim, at.Add(25*time.Hour), quota.Want{Name: quota.NameQueued, N: 3}); err != nil {
		t.Fatalf("a day later: %v", err)
	}
}

func TestAReleaseNeverRecreatesAnExpiredBucket(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	s, ctx := quota.NewStore(rdb, nil), context.Background()
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	settle(t, s, "cron", false, at)
	if n := rdb.Exists(ctx, keys.TokenQuota("cron")).Val(); n != 0 {
		t.Fatalf("a release with nothing counted made the key (%d)", n)
	}
	lim := quota.Limits{QueuedMessages: 2}.WithDefaults()
	if _, err := s.Take(ctx, "cron", lim, at, quota.Want{Name: quota.NameQueued, N: 2}); err != nil {
		t.Fatal(err)
	}
	// Released twice: the bucket goes below zero but counts as zero, and
	// the other bucket's message still counts.
	later := at.Add(time.Hour)
	if _, err := s.Take(ctx, "cron", quota.Limits{QueuedMessages: 3}.WithDefaults(), later, quota.Want{Name: quota.NameQueued, N: 1}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		settle(t, s, "cron", false, at)
	}
	u, err := s.Take(ctx, "cron", lim, later, quota.Want{Name: quota.NameQueued, N: 1})
	if err != nil || u[0].Used != 2 {
		t.Fatalf("after a double release: %+v, %v", u, err)
	}
	if ttl := rdb.PTTL(ctx, keys.TokenQuota("cron")).Val(); ttl <= 24*time.Hour {
		t.Fatalf("the hash expires in %s, before its horizon", ttl)
	}
}

func TestRatesAreSlidingWindowsAndCheckAllOrNothing(t *testing.T) {
	s, ctx := newStore(t)
	lim := quota.Limits{BroadcastsPerHour: 2, QueuedRecipients: 10}.WithDefaults()
	at := time.Date(2026, 12, 4, 10, 7, 0, 0, time.UTC)
	take := func(at time.Time, n int) error {
		_, err := s.Take(ctx, "news", lim, at, quota.Want{Name: quota.NameBroadcastsPerHour, N: 1}, quota.Want{Name: quota.NameRecipients, N: n})
		return err
	}
	if err := take(at, 4); err != nil {
		t.Fatal(err)
	}
	// Too many recipients: the broadcast is not counted either.
	var ex *quota.Exceeded
	if err := take(at, 7); !errors.As(err, &ex) || ex.Name != quota.NameRecipients || ex.Used != 4 || ex.Asked != 7 {
		t.Fatalf("recipients: %v", err)
	}
	if err := take(at.Add(10*time.Minute), 1); err != nil {
		t.Fatal(err)
	}
	err := take(at.Add(20*time.Minute), 1)
	if !errors.As(err, &ex) || ex.Name != quota.NameBroadcastsPerHour || ex.Used != 2 {
		t.Fatalf("the third broadcast in an hour: %v", err)
	}
	// The first counted bucket (10:05-10:10) leaves the window at 11:05.
	if want := time.Date(2026, 12, 4, 11, 5, 0, 0, time.UTC); !ex.Reset.Equal(want) || ex.RetryAfter != want.Sub(at.Add(20*time.Minute)) {
		t.Fatalf("reset %s, retry after %s", ex.Reset, ex.RetryAfter)
	}
	if err := take(time.Date(2026, 12, 4, 11, 5, 0, 0, time.UTC), 1); err != nil {
		t.Fatalf("once the first left the window: %v", err)
	}
}

func TestAudiencesAreCountedUntilTheyExpire(t *testing.T) {
	s, ctx := newStore(t)
	lim := quota.Limits{Audiences: 2}.WithDefaults()
	at := time.Unix(1_800_000_000, 0)
	keep := func(name string, at time.Time) error {
		_, err := s.KeepAudience(ctx, "news", name, lim, at, at.Add(time.Hour))
		return err
	}
	for _, n := range []string{"a", "b", "a"} {
		if err := keep(n, at); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	var ex *quota.Exceeded
	if err := keep("c", at); !errors.As(err, &ex) || ex.Name != quota.NameAudiences || ex.Used != 2 {
		t.Fatalf("a third audience: %v", err)
	}
	if err := s.DropAudience(ctx, "news", "b"); err != nil {
		t.Fatal(err)
	}
	if err := keep("c", at); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	if err := keep("d", at.Add(2*time.Hour)); err != nil {
		t.Fatalf("after the others expired: %v", err)
	}
}

// TestTheHashLivesForItsNewestBucket: the quota hash lives one horizon past
// the take that started its newest bucket; the takes after it in the same
// bucket cost no expiry command (neither PTTL nor PEXPIRE), and a take in a
// new bucket extends the life again.
func TestTheHashLivesForItsNewestBucket(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	s, ctx := quota.NewStore(rdb, nil), context.Background()
	lim := quota.Limits{QueuedMessages: 100}.WithDefaults()
	key := keys.TokenQuota("cron")
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	take := func(at time.Time) {
		t.Helper()
		if _, err := s.Take(ctx, "cron", lim, at, quota.Want{Name: quota.NameQueued, N: 1}); err != nil {
			t.Fatal(err)
		}
	}
	calls := func(cmd string) int64 {
		t.Helper()
		by, err := redistest.CommandCalls(ctx, rdb)
		if err != nil {
			t.Fatal(err)
		}
		return by[cmd]
	}
	take(at)
	// The horizon is 24 one-hour buckets; the hash keeps one more.
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 24*time.Hour || ttl > 25*time.Hour {
		t.Fatalf("after the first take the hash expires in %s, want 24h-25h", ttl)
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		take(at.Add(time.Duration(i) * time.Minute))
	}
	if n, m := calls("pttl"), calls("pexpire"); n != 0 || m != 0 {
		t.Fatalf("10 takes in a started bucket ran PTTL %d and PEXPIRE %d times, want 0", n, m)
	}
	// Shorten the life, as time passing would: a take in the next bucket
	// gives it a whole horizon again.
	if err := rdb.PExpire(ctx, key, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	take(at.Add(time.Hour))
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 24*time.Hour {
		t.Fatalf("after a take in a new bucket the hash expires in %s, want over 24h", ttl)
	}
}
