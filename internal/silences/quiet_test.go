package silences

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

func heldRequest(chat, key string) jobs.Request {
	return jobs.Request{Queue: jobs.QueueDefault, Coalesce: true,
		Message: jobs.SendMessage{Chat: chat, Text: "<b>disk</b> 91%", ParseMode: "HTML", IdempotencyKey: key},
		Item:    &jobs.DigestItem{Title: "disk 91%", URL: "https://x.test/d", Summary: "db-1"}}
}

// TestHoldAndRelease: a held message stays until its time, then goes into
// its digest group once, and is forgotten.
func TestHoldAndRelease(t *testing.T) {
	t.Parallel()
	onBoth(t, testHoldAndRelease)
}

func testHoldAndRelease(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk()
	ctx := context.Background()
	until := t0.Add(8 * time.Hour)
	res, err := f.st.Hold(ctx, heldRequest("-1001", "fp/night/-1001"), until)
	if err != nil {
		t.Fatal(err)
	}
	wantID := jobs.IdempotencyID("", "fp/night/-1001")
	if res.TaskID != wantID || res.Queue != jobs.QueueDefault || !res.Coalesced || res.Duplicate {
		t.Fatalf("Hold = %+v", res)
	}
	// The idempotency key is claimed as an enqueue would claim it.
	if q, err := f.rdb.Get(ctx, keys.Idempotency(wantID)).Result(); err != nil || q != jobs.QueueDefault {
		t.Fatalf("claim = %q, %v", q, err)
	}
	if n, _ := f.st.HeldCount(ctx); n != 1 {
		t.Fatalf("held %d", n)
	}
	f.clock.Set(until.Add(-time.Millisecond))
	if n, err := f.st.Release(ctx); err != nil || n != 0 || len(f.items.list()) != 0 {
		t.Fatalf("released before the end: %d, %v", n, err)
	}
	f.clock.Set(until)
	if n, err := f.st.Release(ctx); err != nil || n != 1 {
		t.Fatalf("Release at the end = %d, %v", n, err)
	}
	got := f.items.list()
	if len(got) != 1 {
		t.Fatalf("released %d items", len(got))
	}
	it := got[0]
	if it.ID != wantID || it.Item.Title != "disk 91%" || it.Item.URL != "https://x.test/d" || it.Message.Chat != "-1001" ||
		it.Message.MaxRetry == nil || *it.Message.MaxRetry != jobs.DefaultMaxRetry || it.Message.V != jobs.PayloadVersion || f.items.qs[0] != jobs.QueueDefault {
		t.Fatalf("item %+v", it)
	}
	if n, _ := f.st.HeldCount(ctx); n != 0 || f.rdb.Exists(ctx, keys.QuietDue()).Val() != 0 {
		t.Fatalf("still held after release: %d", n)
	}
	f.clock.Add(time.Hour)
	if n, _ := f.st.Release(ctx); n != 0 || len(f.items.list()) != 1 {
		t.Fatal("released twice")
	}
}

// TestHoldDuplicates: a repeat of a held message, or of one whose key an
// enqueue claimed, is a duplicate; messages without a key are all held.
func TestHoldDuplicates(t *testing.T) {
	t.Parallel()
	onBoth(t, testHoldDuplicates)
}

func testHoldDuplicates(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk()
	ctx := context.Background()
	until := t0.Add(time.Hour)
	if _, err := f.st.Hold(ctx, heldRequest("1", "k1"), until); err != nil {
		t.Fatal(err)
	}
	res, err := f.st.Hold(ctx, heldRequest("1", "k1"), until)
	if err != nil || !res.Duplicate || res.TaskID != jobs.IdempotencyID("", "k1") {
		t.Fatalf("repeat: %+v, %v", res, err)
	}
	// A key an enqueue claimed (into the low queue) earlier.
	f.rdb.Set(ctx, keys.Idempotency(jobs.IdempotencyID("", "k2")), jobs.QueueLow, time.Hour)
	res, err = f.st.Hold(ctx, heldRequest("1", "k2"), until)
	if err != nil || !res.Duplicate || res.Queue != jobs.QueueLow {
		t.Fatalf("claimed key: %+v, %v", res, err)
	}
	for i := 0; i < 2; i++ {
		if res, err := f.st.Hold(ctx, heldRequest("1", ""), until); err != nil || res.Duplicate {
			t.Fatalf("no key: %+v, %v", res, err)
		}
	}
	if n, _ := f.st.HeldCount(ctx); n != 3 {
		t.Fatalf("held %d, want 3", n)
	}
}

// TestHoldCriticalQueue: a message bound for the critical queue is
// released into the default queue, where digests exist.
func TestHoldCriticalQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := heldRequest("1", "")
	req.Queue = jobs.QueueCritical
	res, err := f.st.Hold(context.Background(), req, t0)
	if err != nil || res.Queue != jobs.QueueDefault {
		t.Fatalf("%+v, %v", res, err)
	}
}

// TestReleaseLease: a message whose release failed is taken again only
// when its lease has ended.
func TestReleaseLease(t *testing.T) {
	t.Parallel()
	onBoth(t, testReleaseLease)
}

func testReleaseLease(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk(func(c *Config) { c.ReleaseLease = 30 * time.Second })
	ctx := context.Background()
	if _, err := f.st.Hold(ctx, heldRequest("1", "k"), t0); err != nil {
		t.Fatal(err)
	}
	f.items.setFail(jobs.ErrUnavailable)
	if n, err := f.st.Release(ctx); n != 0 || !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("failing release: %d, %v", n, err)
	}
	f.items.setFail(nil)
	f.clock.Add(29 * time.Second)
	if n, err := f.st.Release(ctx); n != 0 || err != nil {
		t.Fatalf("within the lease: %d, %v", n, err)
	}
	f.clock.Add(time.Second)
	if n, err := f.st.Release(ctx); n != 1 || err != nil {
		t.Fatalf("after the lease: %d, %v", n, err)
	}
}

// TestReleaseBatches: more due messages than one script takes are all
// released in one call.
func TestReleaseBatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.ReleaseBatch = 3 })
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if _, err := f.st.Hold(ctx, heldRequest("1", ""), t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Add(time.Minute)
	if n, err := f.st.Release(ctx); n != 10 || err != nil {
		t.Fatalf("Release = %d, %v", n, err)
	}
}

// TestStartReleases: the background loop releases held messages.
func TestStartReleases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.ReleaseInterval = 20 * time.Millisecond; c.ReleaseLease = time.Second })
	if _, err := f.st.Hold(context.Background(), heldRequest("1", "k"), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.st.Shutdown()
	if err := f.st.Start(context.Background()); err == nil {
		t.Fatal("second Start accepted")
	}
	time.Sleep(60 * time.Millisecond)
	if len(f.items.list()) != 0 {
		t.Fatal("released during quiet hours")
	}
	f.clock.Add(time.Hour)
	deadline := time.Now().Add(5 * time.Second)
	for len(f.items.list()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("not released within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	_, err := New(Config{CacheTTL: time.Millisecond, ReleaseBatch: -1, MaxSilences: -1})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"Config.Redis", "Config.Items", "Config.CacheTTL", "Config.ReleaseBatch", "Config.MaxSilences"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
}

// TestReleaserAsksRedisOnlyWhenSomethingIsDue: the releaser looks in Redis
// at start, then, while nothing is due, only every releaseBackstop
// intervals; a message this process holds makes it look at its time, and
// one another producer held is found by the backstop look.
func TestReleaserAsksRedisOnlyWhenSomethingIsDue(t *testing.T) {
	t.Parallel()
	onBoth(t, testReleaserAsksRedisOnlyWhenSomethingIsDue)
}

func testReleaserAsksRedisOnlyWhenSomethingIsDue(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk()
	ctx := context.Background()
	looks := func(ticks int) int {
		n := 0
		for i := 0; i < ticks; i++ {
			if f.st.releaseDue() {
				n++
				if _, err := f.st.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		return n
	}
	if n := looks(1); n != 1 {
		t.Fatalf("first interval: %d looks, want 1 (nothing known yet)", n)
	}
	if n := looks(releaseBackstop - 1); n != 0 {
		t.Fatalf("%d idle intervals: %d looks, want 0", releaseBackstop-1, n)
	}
	if n := looks(1); n != 1 {
		t.Fatalf("interval %d: %d looks, want the backstop's", releaseBackstop, n)
	}
	// Held here: due in an hour; no look before then.
	if _, err := f.st.Hold(ctx, heldRequest("-100", "mine"), f.clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := looks(releaseBackstop - 1); n != 0 {
		t.Fatalf("before the held message is due: %d looks, want 0", n)
	}
	f.clock.Add(time.Hour)
	if n := looks(1); n != 1 || len(f.items.list()) != 1 {
		t.Fatalf("when it is due: %d looks and %d released, want 1 and 1", n, len(f.items.list()))
	}
	// Held by another producer (another store on the same Redis): found by
	// the backstop's look once due, though this process never knew of it.
	other, err := New(f.st.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Hold(ctx, heldRequest("-100", "theirs"), f.clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	if n := looks(releaseBackstop - 1); n != 0 || len(f.items.list()) != 1 {
		t.Fatalf("another producer's message, before the backstop: %d looks and %d released, want 0 and 1", n, len(f.items.list()))
	}
	if n := looks(1); n != 1 || len(f.items.list()) != 2 {
		t.Fatalf("another producer's message, at the backstop: %d looks and %d released, want 1 and 2", n, len(f.items.list()))
	}
}
