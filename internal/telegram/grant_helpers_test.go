package telegram

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// grants is a limiter on miniredis with room for every test's requests,
// paid broadcasts on and off: the tests get their grants the way the worker
// does, from Acquire, since no other package can make one.
var grants struct {
	once       sync.Once
	free, paid *ratelimit.Limiter
	n          atomic.Int64
	err        error
	stop       func()
}

// closeGrants stops the limiter's miniredis, if it was started.
func closeGrants() {
	if grants.stop != nil {
		grants.stop()
	}
}

func grantLimiters() (free, paid *ratelimit.Limiter, err error) {
	grants.once.Do(func() {
		mr, err := miniredis.Run()
		if err != nil {
			grants.err = err
			return
		}
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		grants.stop = func() { _ = rdb.Close(); mr.Close() }
		lots := ratelimit.Per(10_000, time.Second)
		grants.free, grants.err = ratelimit.New(rdb, ratelimit.Config{Bot: lots, Private: lots, Group: lots, Guard: ratelimit.NoGuard})
		if grants.err == nil {
			grants.paid = grants.free.WithPaid(ratelimit.Paid{Limit: lots, Free: 1})
		}
	})
	return grants.free, grants.paid, grants.err
}

// slot is a grant of a free slot, as the limiter gives one.
func slot(t testing.TB) ratelimit.Grant { return grantOf(t, false, false) }

// paidSlot is a grant given under the paid limit when paid is set.
func paidSlot(t testing.TB, paid bool) ratelimit.Grant { return grantOf(t, paid, false) }

func grantOf(t testing.TB, paid, unpaid bool) ratelimit.Grant {
	t.Helper()
	free, withPaid, err := grantLimiters()
	if err != nil {
		t.Fatal(err)
	}
	lim := free
	if paid {
		lim = withPaid
	}
	n := strconv.FormatInt(grants.n.Add(1), 10)
	ask := ratelimit.Ask{Chat: n, Queue: "default", TaskID: "t" + n, Unpaid: unpaid}
	d, err := lim.Acquire(context.Background(), ask)
	for err == nil && d.Kind == ratelimit.Again {
		time.Sleep(d.Wait)
		d, err = lim.Acquire(context.Background(), ask)
	}
	if err != nil || d.Kind != ratelimit.Go || !d.Grant().Valid() {
		t.Fatalf("limiter gave %+v, %v; want a grant", d, err)
	}
	if d.Grant().Paid() != (paid && !unpaid) {
		t.Fatalf("grant paid = %v, want %v", d.Grant().Paid(), paid)
	}
	return d.Grant()
}
