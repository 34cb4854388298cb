package reliability

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
	"github.com/herald-dev/herald/test/redistest"
)

// clusterBots are three bots whose hash tags fall on the three masters of
// redistest's Cluster (slots 865, 8623 and 14438 of the ranges 0-5460,
// 5461-10921 and 10922-16383). Each has a queue of its own name, in its own
// slot. An operator places bots the same way: by name, or by moving a
// tag's slot (CLUSTER KEYSLOT "{<bot>}").
var clusterBots = []string{"alpha", "bravo", "echo"}

// clusterQueues are the fleet's queues: the usual ones and one per bot,
// which a message naming its bot and no queue goes to.
const clusterQueues = "HERALD_QUEUES=critical=6,default=3,alpha=3,bravo=3,echo=3"

// masterCommands reads, from every live master, the commands it ran
// (INFO commandstats) except INFO itself and the replication stream's
// REPLCONF: the work the fleet gave it.
func masterCommands(ctx context.Context, c *redistest.Cluster) (map[string]int64, error) {
	out := map[string]int64{}
	for _, n := range c.Nodes {
		if n.Pid() == 0 {
			continue
		}
		role, err := redistest.Role(ctx, n.Addr)
		if err != nil || role != "master" {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		by, err := redistest.CommandCalls(ctx, cl)
		_ = cl.Close()
		if err != nil {
			return nil, err
		}
		for name, calls := range by {
			if name != "replconf" {
				out[n.Addr] += calls
			}
		}
	}
	return out, nil
}

// TestClusterSpreadsBots: on a six-node Cluster, three bots' state sits on
// three masters. With each bot given a burst at once, no master runs more
// than half of the fleet's commands and every bot keeps Telegram's limits;
// then SIGKILLing the master that holds one bot's state leaves the other
// two bots delivering while the Cluster fails it over, and loses nothing.
func TestClusterSpreadsBots(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster scenario skipped in -short mode")
	}
	c := redistest.StartCluster(t, redistest.ClusterOptions{NodeTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	masters := map[string]string{}
	for _, b := range clusterBots {
		m, err := c.MasterOf(ctx, keys.Bot(b).BotLog(), "")
		if err != nil {
			t.Fatal(err)
		}
		for other, om := range masters {
			if om == m {
				t.Fatalf("bots %s and %s share master %s; the test needs them apart", other, b, m)
			}
		}
		masters[b] = m
	}
	tokens := map[string]string{}
	fcfg := telegramfake.Config{TimeScale: timeScale, Tokens: map[string]string{}}
	for i, b := range clusterBots {
		tokens[b] = fleettest.BotToken(i, b)
		fcfg.Tokens[b] = tokens[b]
	}
	fake, err := telegramfake.Start(fcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	f := &fleet.Fleet{
		Dir: t.TempDir(), Bins: fleettest.Binaries(t), RedisURL: c.URL(), APIURL: fake.URL(),
		Bots: tokens, Limits: fleet.DefaultLimits(timeScale),
		ExtraEnv:    []string{"HERALD_LIMIT_GUARD=20ms", clusterQueues},
		ProducerEnv: []string{clusterQueues},
	}
	t.Cleanup(func() {
		f.Close()
		if t.Failed() {
			fleettest.DumpLogs(t, f.Dir)
		}
	})
	if err := f.StartProducer(ctx); err != nil {
		t.Fatalf("starting the producer: %v", err)
	}
	for i := range 3 {
		if _, err := f.StartWorker(ctx); err != nil {
			t.Fatalf("starting worker %d: %v", i+1, err)
		}
	}

	// Phase 1: a burst for each bot at once; commands by master.
	before, err := masterCommands(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	burst := fleet.ForBots(fleet.PrivateChats("CB1", 5000, 60, 10, 1), clusterBots, 1)
	all, per, err := f.DeliverBots(ctx, fake, burst)
	if err != nil {
		t.Fatal(err)
	}
	after, err := masterCommands(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for a := range after {
		total += after[a] - before[a]
	}
	addrs := make([]string, 0, len(after))
	for a := range after {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	var shares []string
	for _, a := range addrs {
		share := float64(after[a]-before[a]) / float64(total)
		var held []string
		for _, b := range clusterBots {
			if masters[b] == a {
				held = append(held, b)
			}
		}
		shares = append(shares, fmt.Sprintf("%s(%s)=%.1f%%", a, strings.Join(held, ","), 100*share))
		if share > 0.5 {
			t.Errorf("master %s ran %.1f%% of %d commands, want at most 50%%", a, 100*share, total)
		}
	}
	t.Logf("3 bots x %d messages: %d commands (%.1f per message), by master: %s",
		len(burst)/3, total, float64(total)/float64(len(burst)), strings.Join(shares, " "))
	// Six Redis processes, the producer and three workers share this
	// machine's cores: at 10x, the fleet-wide target of at most 0.5% 429s
	// is what holds (the strict 0 is the e2e suite's, at a slower scale).
	if all.Lost != 0 || all.Duplicates != 0 || all.TooMany > int64(len(burst)/200) {
		t.Errorf("burst: lost=%d duplicates=%d 429s=%d, want 0, 0 and at most %d", all.Lost, all.Duplicates, all.TooMany, len(burst)/200)
	}
	for _, b := range clusterBots {
		t.Logf("bot %s: drain %v, min %v", b, per[b].Drain.Round(time.Millisecond), fleet.MinDrain(fleet.OfBot(burst, b), f.Limits).Round(time.Millisecond))
	}
	if v := fleet.CheckWindows(fake.Messages(), timeScale, telegramfake.DefaultTolerance); len(v) > 0 {
		t.Errorf("windows broken: %q", v)
	}

	// Phase 2: kill the master of echo's state and queue while all three
	// bots have a backlog; alpha and bravo go on.
	victim := "echo"
	have := len(fake.Messages())
	burst2 := fleet.ForBots(fleet.PrivateChats("CB2", 7000, 60, 10, 2), clusterBots, 2)
	if _, err := f.PostAll(ctx, burst2, 32); err != nil {
		t.Fatal(err)
	}
	if err := fake.Wait(ctx, have+len(burst2)/6); err != nil {
		t.Fatal(err)
	}
	c.ServerAt(masters[victim]).Kill()
	killedAt := time.Now()
	if _, err := c.WaitNewMaster(ctx, keys.Bot(victim).BotLog(), masters[victim]); err != nil {
		t.Fatal(err)
	}
	promotedAt := time.Now()
	if err := fake.Wait(ctx, have+len(burst2)); err != nil {
		t.Fatalf("after the failover: %v", err)
	}
	during := map[string]int{}
	var victimBack, victimLast time.Time
	for _, m := range fake.Messages() {
		if m.At.After(killedAt) && m.At.Before(promotedAt) {
			during[m.Bot]++
		}
		if m.Bot == victim && m.At.After(promotedAt) {
			if victimBack.IsZero() || m.At.Before(victimBack) {
				victimBack = m.At
			}
			if m.At.After(victimLast) {
				victimLast = m.At
			}
		}
	}
	o := fleet.Tally(burst2, fake.Messages(), telegramfake.Stats{}, killedAt)
	t.Logf("killed %s's master: promoted after %v; delivered meanwhile %v; %s delivering again %v after the promotion, its last %v after; lost=%d duplicates=%d",
		victim, promotedAt.Sub(killedAt).Round(time.Millisecond), during, victim, victimBack.Sub(promotedAt).Round(time.Millisecond),
		victimLast.Sub(promotedAt).Round(time.Millisecond), o.Lost, o.Duplicates)
	for _, b := range clusterBots {
		if b != victim && during[b] == 0 {
			t.Errorf("bot %s delivered nothing while %s's master was down", b, victim)
		}
	}
	if o.Lost != 0 {
		t.Errorf("%d messages lost across the failover", o.Lost)
	}
}
