// Package fleettest starts a whole Herald stack for a test — a real
// redis-server, the fake Telegram Bot API, the producer and worker binaries
// as processes — and offers the waits the end-to-end and reliability suites
// share.
package fleettest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/redistest"
)

// TimeScale is how much faster than real time Telegram's limits run in
// these scenarios, for Herald and the fake alike.
const TimeScale = 10

// Queues are the queues the fleet's workers serve.
var Queues = []string{"critical", "default", "low"}

var (
	buildOnce sync.Once
	bins      fleet.Binaries
	buildErr  error
)

// Binaries builds cmd/producer and cmd/worker once per test binary run.
func Binaries(tb testing.TB) fleet.Binaries {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "herald-fleettest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		bins, buildErr = fleet.Build(context.Background(), dir)
	})
	if buildErr != nil {
		tb.Fatalf("building herald binaries: %v", buildErr)
	}
	return bins
}

// Options shape a stack. The zero value is a producer and no worker,
// a plain (non-AOF) redis-server, the fake with Telegram's default limits at
// TimeScale, and a three-minute deadline.
type Options struct {
	// Workers is how many worker processes start before Start returns.
	Workers int
	// Redis configures redis-server (AppendOnly for the Redis-crash case).
	Redis redistest.Options
	// Fake configures the fake Bot API; a zero TimeScale means TimeScale.
	Fake telegramfake.Config
	// WorkerEnv is added to every worker's environment (fleet.ExtraEnv).
	WorkerEnv []string
	// ProducerEnv is added to the producer's environment.
	ProducerEnv []string
	// Timeout bounds the whole scenario through stack.ctx; zero means 3m.
	Timeout time.Duration
	// NoProducer skips starting the producer API.
	NoProducer bool
	// Updates lets the workers read button presses with getUpdates
	// (fleet.Fleet.Updates); off by default in tests.
	Updates bool
	// Paid turns the bot's paid broadcasts on (fleet.PaidWindows), with
	// the paid permission on the senders' token; set Fake.PaidBroadcast
	// too.
	Paid bool
	// Bots, when set, are the bots the stack serves: the fake knows each by
	// the token BotToken gives it and the processes get HERALD_BOTS and
	// every bot's token (fleet.Fleet.Bots).
	Bots []string
}

// BotToken is the token the fake and the workers use for the i-th of
// Options.Bots.
func BotToken(i int, name string) string { return fmt.Sprintf("3%08d:%s-token", i+1, name) }

// Stack is one running scenario environment: redis-server, the fake Bot
// API, the producer and the workers, all torn down at test cleanup.
type Stack struct {
	Fleet *fleet.Fleet
	Fake  *telegramfake.Server
	Redis *redistest.Server
	Insp  *asynq.Inspector
	// Ctx ends at the scenario's deadline (Options.Timeout).
	Ctx context.Context
}

// Start starts everything o asks for, or skips the test when
// redis-server is missing (see redistest.Binary). On failure the tail of
// every process log is written to the test log.
func Start(tb testing.TB, o Options) *Stack {
	tb.Helper()
	srv := redistest.Start(tb, o.Redis)
	b := Binaries(tb)
	cfg := o.Fake
	if cfg.TimeScale == 0 {
		cfg.TimeScale = TimeScale
	}
	var bots map[string]string
	if len(o.Bots) > 0 {
		bots = map[string]string{}
		if cfg.Tokens == nil {
			cfg.Tokens = map[string]string{}
		}
		for i, name := range o.Bots {
			bots[name] = BotToken(i, name)
			cfg.Tokens[name] = bots[name]
		}
	}
	fake, err := telegramfake.Start(cfg)
	if err != nil {
		tb.Fatalf("starting the fake Bot API: %v", err)
	}
	tb.Cleanup(func() { _ = fake.Close() })
	f := &fleet.Fleet{
		Dir: tb.TempDir(), Bins: b, RedisURL: srv.URL(), APIURL: fake.URL(),
		Token: telegramfake.DefaultToken, Bots: bots, Updates: o.Updates, Limits: fleet.DefaultLimits(cfg.TimeScale),
		ExtraEnv: append(testGuard(cfg.TimeScale), o.WorkerEnv...), ProducerEnv: o.ProducerEnv,
		WorkerNice: workerNice,
	}
	if o.Paid {
		f.Limits.Paid = fleet.PaidWindows
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	tb.Cleanup(cancel)
	tb.Cleanup(func() {
		f.Close()
		if tb.Failed() {
			DumpLogs(tb, f.Dir)
		}
	})
	if !o.NoProducer {
		if err := f.StartProducer(ctx); err != nil {
			tb.Fatalf("starting the producer: %v", err)
		}
	}
	for i := 0; i < o.Workers; i++ {
		if _, err := f.StartWorker(ctx); err != nil {
			tb.Fatalf("starting worker %d of %d: %v", i+1, o.Workers, err)
		}
	}
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: srv.Addr})
	tb.Cleanup(func() { _ = insp.Close() })
	return &Stack{Fleet: f, Fake: fake, Redis: srv, Insp: insp, Ctx: ctx}
}

// DumpLogs writes the last 3,000 bytes of every process log in dir.
func DumpLogs(tb testing.TB, dir string) {
	tb.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		tb.Logf("%s (tail):\n%s", e.Name(), b)
	}
}

// Burst returns n messages spread round-robin over chats private chats
// (ids 5000, 5001, ...), each text unique and prefixed with label.
func Burst(label string, n, chats int) []fleet.Message {
	ms := make([]fleet.Message, 0, n)
	for i := 0; i < n; i++ {
		chat := strconv.Itoa(5000 + i%chats)
		ms = append(ms, fleet.Message{Chat: chat, Text: fmt.Sprintf("%s %s #%d", label, chat, i)})
	}
	return ms
}

// Counts sums the task states of Herald's queues; a queue that was
// never used counts as empty.
type Counts struct {
	Active, Pending, Scheduled, Retry, Archived, Completed int
}

// Empty reports whether no task is waiting, running or archived.
func (c Counts) Empty() bool {
	return c.Active == 0 && c.Pending == 0 && c.Scheduled == 0 && c.Retry == 0 && c.Archived == 0
}

func (c Counts) String() string {
	return fmt.Sprintf("active=%d pending=%d scheduled=%d retry=%d archived=%d",
		c.Active, c.Pending, c.Scheduled, c.Retry, c.Archived)
}

// Counts reads the current task counts of every Herald queue.
func (s *Stack) Counts() Counts {
	var c Counts
	for _, q := range Queues {
		info, err := s.Insp.GetQueueInfo(q)
		if err != nil {
			continue // a queue never used does not exist yet
		}
		c.Active += info.Active
		c.Pending += info.Pending
		c.Scheduled += info.Scheduled
		c.Retry += info.Retry
		c.Archived += info.Archived
		c.Completed += info.Completed
	}
	return c
}

// WaitDrained waits until no task is active, pending, scheduled or
// retrying in any Herald queue. It fails the test at once if a task was
// archived, and with the counts if the queues have not drained by the
// stack's deadline. asynq keeps its state in Redis and sends no
// notification, so this polls every 200ms.
func (s *Stack) WaitDrained(tb testing.TB) {
	tb.Helper()
	for {
		c := s.Counts()
		if c.Archived != 0 {
			tb.Fatalf("%d tasks archived, want none: %s", c.Archived, c)
		}
		if c.Empty() {
			return
		}
		select {
		case <-s.Ctx.Done():
			tb.Fatalf("queues never drained: %s", c)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// WaitDelivered waits until the fake has accepted every text of ms at
// least once, and fails the test naming a few missing texts otherwise.
func (s *Stack) WaitDelivered(tb testing.TB, ms []fleet.Message) {
	tb.Helper()
	if err := s.Fake.Wait(s.Ctx, len(ms)); err != nil {
		tb.Fatalf("waiting for %d deliveries: %v", len(ms), err)
	}
	for {
		missing := MissingTexts(ms, s.Fake.Messages())
		if len(missing) == 0 {
			return
		}
		// Duplicates can reach len(ms) before every text arrived: wait for
		// the next acceptance.
		n := len(s.Fake.Messages()) + 1
		if err := s.Fake.Wait(s.Ctx, n); err != nil {
			if len(missing) > 5 {
				missing = missing[:5]
			}
			tb.Fatalf("%d messages never delivered (e.g. %q): %v", len(MissingTexts(ms, s.Fake.Messages())), missing, err)
		}
	}
}

// MissingTexts lists the texts of ms the fake has not accepted, sorted.
func MissingTexts(ms []fleet.Message, got []telegramfake.Message) []string {
	seen := make(map[string]bool, len(got))
	for _, m := range got {
		seen[m.Text] = true
	}
	var out []string
	for _, m := range ms {
		if !seen[m.Text] {
			out = append(out, m.Text)
		}
	}
	sort.Strings(out)
	return out
}

// workerNice is the niceness the stack's workers run at (Fleet.WorkerNice):
// with it, the fake stamped 99% of requests within 4 ms of the worker
// writing them during TestGracefulShutdownUnderLoad's burst, against 38 ms
// without (its 429s came from those stamps, not from the sends).
const workerNice = 10

// testGuard widens HERALD_LIMIT_GUARD for a fake that runs Telegram's clock
// faster: its 0.3% tolerance is then a millisecond or less of real time,
// less than this 2-core machine's scheduling delays while a suite's
// processes share it (the fake's handler, too, may run late), so the guard
// alone must absorb them. At scale 10 and below it is 40 ms (two fifths of
// a 100 ms window, twice the default): with several worker processes and
// the fake busy on two cores, deliveries were seen to reach the fake up to
// about 30 ms after their slot, while the one after them came on time. At
// faster clocks it stays 20 ms.
// The worker refuses a guard that is not below its shortest window.
// Options.WorkerEnv, added after it, wins.
func testGuard(scale float64) []string {
	switch {
	case scale <= 1:
		return nil
	case scale <= 10:
		return []string{"HERALD_LIMIT_GUARD=40ms"}
	}
	return []string{"HERALD_LIMIT_GUARD=20ms"}
}
