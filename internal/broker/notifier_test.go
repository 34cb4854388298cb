package broker_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

// holdFirstPush holds the first LPUSH that reaches it (alone or in a
// pipeline) until release is closed: a push on its way to Redis.
type holdFirstPush struct {
	seen             atomic.Bool
	entered, release chan struct{}
}

func (h *holdFirstPush) hold(cmds ...redis.Cmder) {
	for _, c := range cmds {
		if c.Name() == "lpush" && h.seen.CompareAndSwap(false, true) {
			close(h.entered)
			<-h.release
		}
	}
}

func (h *holdFirstPush) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *holdFirstPush) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.hold(cmd); return next(ctx, cmd) }
}
func (h *holdFirstPush) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.hold(cmds...); return next(ctx, cmds) }
}

// TestNotifierGathersNoticesWhileAPushIsOnItsWay: while the first notice's
// push is held on its way to Redis, 399 more notices return at once without
// touching Redis; the first call then pushes them together, so 400 notices
// cost two LPUSHes, the list stays within MaxWakeTokens, and the one
// notice for another queue keeps its token among the 398 of the first.
func TestNotifierGathersNoticesWhileAPushIsOnItsWay(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	h := &holdFirstPush{entered: make(chan struct{}), release: make(chan struct{})}
	rdb.AddHook(h)
	n := broker.NewNotifier(rdb)

	first := make(chan error, 1)
	go func() { first <- n.Notify(ctx, "default") }()
	<-h.entered
	var wg sync.WaitGroup
	for i := range 399 {
		q := "default"
		if i == 200 {
			q = "critical"
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = n.Notify(ctx, q) }()
	}
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("notices made while a push was on its way waited for it")
	}
	close(h.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	by, err := redistest.CommandCalls(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := rdb.LRange(ctx, keys.WakeList(), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if by["lpush"] != 2 || len(tokens) > broker.MaxWakeTokens || !slices.Contains(tokens, "critical") || !slices.Contains(tokens, "default") {
		t.Fatalf("400 notices: %d LPUSHes, tokens %q; want 2 pushes, at most %d tokens, one for critical", by["lpush"], tokens, broker.MaxWakeTokens)
	}
}

// TestNotifierPushesAtOnce: with no push on its way, a notice is in Redis
// when Notify returns, even for a request whose context has ended.
func TestNotifierPushesAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	n := broker.NewNotifier(rdb)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i, q := range []string{"low", "default"} {
		if err := n.Notify(ctx, q); err != nil {
			t.Fatal(err)
		}
		tokens := rdb.LRange(context.Background(), keys.WakeList(), 0, -1).Val()
		if len(tokens) != i+1 || tokens[0] != q {
			t.Fatalf("after notice %d (%s): tokens %q", i+1, q, tokens)
		}
	}
}
