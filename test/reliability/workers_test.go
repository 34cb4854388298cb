package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/fleet"
)

// wkFigures is the one-line summary a worker scenario prints.
type wkFigures struct {
	Scenario   string
	Messages   int
	Delivered  int
	Lost       int
	Duplicates int
	Kills      int
	Orphans    int // tasks left in active by a killed worker
	Recovery   []time.Duration
	Requests   int64
	TooMany    int64
}

func (f wkFigures) percentile(p float64) time.Duration {
	if len(f.Recovery) == 0 {
		return 0
	}
	l := append([]time.Duration{}, f.Recovery...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	return l[int(float64(len(l)-1)*p/100)]
}

// String is the fixed log format quoted in docs/reliability/workers.md.
func (f wkFigures) String() string {
	perMsg := 0.0
	if f.Delivered > 0 {
		perMsg = float64(f.Requests) / float64(f.Delivered)
	}
	return fmt.Sprintf("%s: messages=%d delivered=%d lost=%d duplicates=%d kills=%d orphans=%d recovered=%d "+
		"recovery_p50=%s recovery_max=%s 429s=%d requests_per_delivered=%.3f",
		f.Scenario, f.Messages, f.Delivered, f.Lost, f.Duplicates, f.Kills, f.Orphans, len(f.Recovery),
		f.percentile(50).Round(100*time.Millisecond), f.percentile(100).Round(100*time.Millisecond), f.TooMany, perMsg)
}

// wkKill is one SIGKILL and what it left behind.
type wkKill struct {
	at time.Time
	// dead are the ids of tasks whose lease was not extended after the
	// kill: asynq's heartbeat extends every live lease every 5s, so 8s after
	// the kill a lease still expiring no later than kill+30s belongs to a
	// dead process.
	dead map[string]string // task id -> message text
	err  error
}

// wkDeadLeases reads, once every live lease has been extended past it, the
// tasks whose lease expires no later than kill+30s.
func wkDeadLeases(ctx context.Context, rdb *redis.Client, s *stack, at time.Time) (map[string]string, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Until(at.Add(8 * time.Second))):
	}
	// asynq stores the lease as whole Unix seconds of now+30s.
	limit := strconv.FormatInt(at.Add(30*time.Second).Unix(), 10)
	out := map[string]string{}
	for _, q := range heraldQueues {
		ids, err := rdb.ZRangeByScore(ctx, broker.LeaseKey(q), &redis.ZRangeBy{Min: "-inf", Max: limit}).Result()
		if err != nil {
			return nil, fmt.Errorf("reading the lease set of queue %s: %w", q, err)
		}
		for _, id := range ids {
			info, err := s.insp.GetTaskInfo(q, id)
			if err != nil {
				return nil, fmt.Errorf("task %s in queue %s: %w", id, q, err)
			}
			var p struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(info.Payload, &p); err != nil {
				return nil, fmt.Errorf("task %s payload: %w", id, err)
			}
			out[id] = p.Text
		}
	}
	return out, nil
}

// wkRecovery attributes each orphaned task to the first kill that left it
// behind and returns the time from that kill to the message's delivery.
// Orphans whose message had reached the fake before the kill (sent, not yet
// acknowledged) are recovered without a second send and are not timed.
func wkRecovery(kills []*wkKill, first map[string]time.Time) (orphans int, recovery []time.Duration) {
	seen := map[string]bool{}
	for _, k := range kills {
		for id, text := range k.dead {
			if seen[id] {
				continue
			}
			seen[id] = true
			orphans++
			if at, ok := first[text]; ok && at.After(k.at) {
				recovery = append(recovery, at.Sub(k.at))
			}
		}
	}
	return orphans, recovery
}

// wkRunCrashes is scenario 1: three workers, a burst through the API, a
// random worker SIGKILLed every 2.5s while messages are undelivered and a
// replacement started after each kill.
func wkRunCrashes(tb testing.TB, messages, kills int) wkFigures {
	s := newStack(tb, stackOptions{Workers: 3, Timeout: 5 * time.Minute})
	rdb := s.redis.Client(tb)
	ms := burst("crash", messages, 20)
	seed := uint64(time.Now().UnixNano())
	tb.Logf("victims chosen with seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	posted := make(chan error, 1)
	go func() {
		_, err := s.fleet.PostAll(s.ctx, ms, 16)
		posted <- err
	}()
	live := append([]*fleet.Proc{}, s.fleet.Workers...)
	var done []*wkKill
	var wg sync.WaitGroup
	// The first kill comes once a fifth of the burst is out, so every
	// worker is busy; the next ones every 2.5s while work remains.
	if err := s.fake.Wait(s.ctx, messages/5); err != nil {
		tb.Fatal(err)
	}
	for len(done) < kills && len(missingTexts(ms, s.fake.Messages())) > 0 {
		if len(done) > 0 {
			select {
			case <-s.ctx.Done():
				tb.Fatal(s.ctx.Err())
			case <-time.After(2500 * time.Millisecond):
			}
		}
		i := rng.IntN(len(live))
		victim := live[i]
		k := &wkKill{at: time.Now()}
		victim.Kill()
		done = append(done, k)
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.dead, k.err = wkDeadLeases(s.ctx, rdb, s, k.at)
		}()
		w, err := s.fleet.StartWorker(s.ctx)
		if err != nil {
			tb.Fatalf("starting a replacement for %s: %v", victim.Name, err)
		}
		live[i] = w
	}
	if err := <-posted; err != nil {
		tb.Fatalf("posting the burst: %v", err)
	}
	wg.Wait()
	for i, k := range done {
		if k.err != nil {
			tb.Fatalf("kill %d: %v", i+1, k.err)
		}
	}
	s.waitDelivered(tb, ms)
	s.waitDrained(tb)
	if n, err := rdb.XLen(s.ctx, keys.Failures()).Result(); err != nil || n != 0 {
		tb.Errorf("failure stream %s: %d entries (err %v), want 0", keys.Failures(), n, err)
	}

	got := s.fake.Messages()
	first := map[string]time.Time{}
	for _, m := range got {
		if _, ok := first[m.Text]; !ok {
			first[m.Text] = m.At
		}
	}
	o := fleet.Tally(ms, got, s.fake.Stats(), time.Time{})
	f := wkFigures{Scenario: "worker-crashes", Messages: messages, Delivered: o.Delivered, Lost: o.Lost,
		Duplicates: o.Duplicates, Kills: len(done), Requests: s.fake.Stats().Requests, TooMany: o.TooMany}
	f.Orphans, f.Recovery = wkRecovery(done, first)
	if len(done) != kills {
		tb.Errorf("killed %d workers, want %d: the burst drained before the kills were done", len(done), kills)
	}
	if f.Lost != 0 {
		tb.Errorf("lost %d messages, want 0", f.Lost)
	}
	if f.Duplicates > f.Kills {
		tb.Errorf("%d duplicates after %d kills, want at most one per kill", f.Duplicates, f.Kills)
	}
	return f
}

// TestWorkerCrashes is scenario 1 of docs/RELIABILITY.md. With -short it
// sends 200 messages and kills one worker.
func TestWorkerCrashes(t *testing.T) {
	t.Parallel()
	messages, kills := 1000, 3
	if testing.Short() {
		messages, kills = 200, 1
	}
	f := wkRunCrashes(t, messages, kills)
	t.Log(f)
}

// wkRunShutdown is scenario 4: three workers get SIGTERM during a burst,
// then two fresh workers finish it.
func wkRunShutdown(tb testing.TB, messages int) wkFigures {
	s := newStack(tb, stackOptions{Workers: 3})
	ms := burst("term", messages, 20)
	if _, err := s.fleet.PostAll(s.ctx, ms, 16); err != nil {
		tb.Fatalf("posting the burst: %v", err)
	}
	if err := s.fake.Wait(s.ctx, messages/4); err != nil {
		tb.Fatal(err)
	}
	old := append([]*fleet.Proc{}, s.fleet.Workers...)
	errs := make([]error, len(old))
	var wg sync.WaitGroup
	for i, w := range old {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.fleet.StopWorker(s.ctx, w)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			tb.Errorf("%s after SIGTERM: %v, want exit status 0", old[i].Name, err)
		}
	}
	// Every worker is gone: a task still active now would wait for lease
	// expiry instead of being handed back.
	if c := s.counts(); c.Active != 0 {
		tb.Errorf("after every worker exited: %s, want active=0", c)
	}
	remaining := len(missingTexts(ms, s.fake.Messages()))
	tb.Logf("at shutdown %d of %d messages were still undelivered", remaining, messages)
	if remaining == 0 {
		tb.Errorf("the burst drained before the workers were stopped; the scenario did not test shutdown under load")
	}
	for i := 0; i < 2; i++ {
		if _, err := s.fleet.StartWorker(s.ctx); err != nil {
			tb.Fatal(err)
		}
	}
	s.waitDelivered(tb, ms)
	s.waitDrained(tb)
	o := fleet.Tally(ms, s.fake.Messages(), s.fake.Stats(), time.Time{})
	f := wkFigures{Scenario: "graceful-shutdown", Messages: messages, Delivered: o.Delivered, Lost: o.Lost,
		Duplicates: o.Duplicates, Requests: s.fake.Stats().Requests, TooMany: o.TooMany}
	if f.Lost != 0 || f.Duplicates != 0 || f.TooMany != 0 {
		tb.Errorf("graceful shutdown: lost=%d duplicates=%d 429s=%d, want 0/0/0", f.Lost, f.Duplicates, f.TooMany)
	}
	return f
}

// TestGracefulShutdownUnderLoad is scenario 4 of docs/RELIABILITY.md. It
// asserts zero 429s; at 10x Telegram time a chat's interval is 100ms, so
// sends delayed by CPU contention can bunch up enough to draw one. It
// therefore does not run alongside the package's other bursts: sequential
// tests finish before parallel ones start.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	f := wkRunShutdown(t, 600)
	t.Log(f)
}
