// Command bench measures Herald end to end: it starts redis-server, the fake
// Telegram Bot API at Telegram's documented limits (strict: no burst), the
// producer and N worker processes, sends a scenario through the producer API,
// waits until every message is delivered and prints one table row per run.
//
//	go run ./bench burst                       # every scenario but S4 × 1 and 3 workers × scale 10 and 1
//	go run ./bench burst -scenarios S1,S5 -workers 3 -scales 10
//
// Scenarios: S1 is 200 messages over 4 private chats and a group, S2 is 2,000
// messages over 100 chats (bound by the bot-wide limit), S5 is 3,000
// messages over 200 private chats, 10 to 20 each (the 429-storm case).
// PAUSED posts 400 messages over 40 private chats while every worker is
// stopped (SIGSTOP), waits 3 s of Telegram time and continues them (SIGCONT):
// the backlog-released case; its drain counts from the release. S2-429 is S2
// with a bot-wide flood wait of 5 s (Telegram time) injected once half the
// messages are delivered; its minimum drain includes the wait. S3 sends one
// message every 50 ms and reports enqueue-to-sendMessage latency. "idle"
// measures the Redis commands per second of idle workers. S4 is S1 with
// every message coalescible: it reports the Telegram messages the 200 items
// took, in a table of its own. The fake and Herald's limits run at the same
// time scale, and so do S4's digest windows (10 s grace, 30 s maximum delay
// at scale 1; whole seconds, at least 1 s). BOTS3 serves three bots (each
// with its own token and Telegram's limits at the fake) and gives each an
// S2-shaped burst at once: one row per bot, measured against that bot's own
// minimum drain, then the run as a whole ("all"), with the total rate in a
// comment line. PAID is 20,000 messages over 10,000 private chats, two
// each, from the default bot with paid broadcasts on at 1,000 a second
// (HERALD_PAID_BROADCAST, HERALD_PAID_LIMIT=1000/s) to a fake with paid
// broadcasts enabled and Stars enough: its minimum drain is at Telegram's
// paid limit (fleet.PaidWindows, 19 s at scale 1), and a comment line gives
// the sends the fake charged and their Stars. Like PAUSED, PAID posts with
// the workers stopped and counts the drain from their release, so that it
// measures the fleet's pace and not the cores the posts share with it.
// CEILING lifts the limits out
// of the way, the fake's bot-wide one to 100,000 a second and Herald's
// (HERALD_LIMIT_BOT) to 10,000 per 100 ms, and sends 20,000 messages to
// 20,000 private chats, one each, so that no chat limit binds either: it
// measures how fast Herald's workers go (messages per second, in a comment
// line, and Redis commands per message, the producer's enqueues included;
// -v prints them by command). Like PAUSED it posts with the workers
// stopped and counts the drain from their release, so that the rate is the
// fleet's and not that of 16 HTTP clients sharing the machine's two cores
// with it. It has no minimum drain. PAID-BC is PAID with its messages
// posted as two broadcasts of 10,000 chats (POST /v1/broadcasts, each
// message's text through the template's per-chat values), the way a product
// bot sends an announcement, posted while the workers drain. -v also
// prints the producer's CPU time per accepted message (per broadcast
// recipient for PAID-BC). ASYNQ is CEILING's baseline: the same messages sent
// by plain asynq servers whose handler only posts sendMessage (see
// asynqbase.go). BUDGET is a paid broadcast to 700 chats with a budget of
// 20 Stars (HERALD_PAID_BUDGET=20); its comment line gives what the fake
// charged (between 19 and 20 Stars when the budget counts what Telegram
// bills) and the 429s at the switch to free sends. All five are meant for
// scale 1:
//
//	go run ./bench burst -scenarios PAID,PAID-BC,CEILING,ASYNQ -scales 1   # or: make bench BENCH_SCENARIOS=PAID,PAID-BC,CEILING BENCH_FLAGS="-scales 1"
//
// Columns: "min drain" is fleet.MinDrain, the earliest schedule Telegram's
// documented limits allow (plus the flood wait for S2-429); "ratio" is drain
// over it. "requests" counts every Bot API request the fake received during
// the scenario (sendMessage, and getChat should the workers call it; the
// workers' start-up getMe is left out), "inside wait" the requests that came
// inside a flood wait a 429 had already announced (bot-wide ones in
// brackets when there were any), "requests/msg" requests per delivered
// message (1.000 when every request was an accepted sendMessage). "min
// slack" is fleet.MinSlack: over every documented window, the least time
// by which two deliveries N apart were further apart than the window, as
// the fake saw them (real time; Herald plans them HERALD_LIMIT_GUARD
// further apart, and what is left of that is the margin it kept).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/redistest"
)

var verbose bool

// repeats is how many times each run is made (-repeat).
var repeats = 1

// workerEnv is extra environment for every worker of every run (-worker-env),
// for trying a setting against the table's defaults.
var workerEnv []string

// updates lets the workers poll the bots' updates (button presses), as
// they do by default; off, the fake sees only the requests that deliver.
var updates bool

func main() {
	if len(os.Args) < 2 || os.Args[1] != "burst" {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench burst [-scenarios S1,S2,S5,PAUSED,S2-429,S3,S4,BOTS3,PAID,PAID-BC,BUDGET,CEILING,ASYNQ,idle] [-repeat n] [-workers 1,3] [-scales 1,10]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("burst", flag.ExitOnError)
	scenarios := fs.String("scenarios", "S1,S2,S5,PAUSED,S2-429,S3,idle", "comma-separated scenarios: S1, S2, S5, PAUSED, S2-429, S3, S4, BOTS3 (3 bots, an S2 burst each), PAID (paid broadcasts at 1000/s), PAID-BC (PAID posted as two broadcasts), BUDGET (a 700-chat paid broadcast with a 20-Star budget), CEILING (limits out of the way), ASYNQ (CEILING sent by plain asynq servers, the baseline), idle")
	workers := fs.String("workers", "1,3", "comma-separated worker process counts")
	scales := fs.String("scales", "10,1", "comma-separated time scales (1 = real Telegram timing)")
	seed := fs.Uint64("seed", 1, "shuffle seed")
	fs.IntVar(&repeats, "repeat", 1, "run each scenario, scale and worker count this many times (a row each)")
	fs.BoolVar(&verbose, "v", false, "print Redis commands by name, and where any 429s came from, for each run to stderr")
	fs.Func("worker-env", "a worker setting NAME=VALUE added to every run's workers (repeat for more), to compare it with the defaults", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want NAME=VALUE, got %q", v)
		}
		workerEnv = append(workerEnv, v)
		return nil
	})
	fs.BoolVar(&updates, "updates", false, "let the workers poll the bots' updates (getUpdates), as they do by default outside the benchmark")
	_ = fs.Parse(os.Args[2:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, split(*scenarios), ints(*workers), floats(*scales), *seed); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scenarios []string, workers []int, scales []float64, seed uint64) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return errors.New("redis-server not found: install it (apt-get install -y redis-server)")
	}
	dir, err := os.MkdirTemp("", "herald-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins, err := fleet.Build(ctx, dir)
	if err != nil {
		return err
	}
	printed := ""
	for _, sc := range scenarios {
		// S4 has a table of its own; a table's header is printed before
		// its first row.
		head := header
		if strings.EqualFold(sc, "S4") {
			head = digestHeader
		}
		if head != printed {
			if printed != "" {
				fmt.Println()
			}
			fmt.Println(head)
			printed = head
		}
		for _, scale := range scales {
			for _, n := range workers {
				for range max(repeats, 1) {
					row, err := runOne(ctx, bin, bins, dir, sc, n, scale, seed)
					if err != nil {
						return fmt.Errorf("%s workers=%d scale=%v: %w", sc, n, scale, err)
					}
					fmt.Println(row)
				}
			}
		}
	}
	return nil
}

// digestHeader is the header of S4's table: items are the scenario's
// messages, "messages" the Telegram messages that carried them.
const digestHeader = "| scenario | scale | workers | items | delivered | lost | dups | messages | items/message | drain | 429s | redis cmds/item | worker peak RSS |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|"

const header = "| scenario | scale | workers | messages | drain | min drain | ratio | 429s | inside wait | requests | requests/msg | lost | dups | min slack | redis cmds/msg | p50 | p95 | p99 | idle cmds/s/worker | worker peak RSS |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

// runOne runs one scenario on a fresh fleet of the given size and time
// scale, and returns its table row.
func runOne(ctx context.Context, redisBin string, bins fleet.Binaries, dir, scenario string, workers int, scale float64, seed uint64) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	if strings.EqualFold(scenario, "ASYNQ") {
		runDir, err := os.MkdirTemp(dir, "run-")
		if err != nil {
			return "", err
		}
		return asynqBaseline(ctx, redisBin, runDir, workers, seed)
	}
	r, err := startRig(ctx, redisBin, bins, dir, scenario, workers, scale)
	if err != nil {
		return "", err
	}
	defer r.close()

	before, err := r.stats.commands(ctx)
	if err != nil {
		return "", err
	}
	beforeBy, _ := r.stats.breakdown(ctx)
	cpuBefore, _ := r.stats.cpu(ctx)
	prodBefore := procCPU(r.f.Producer.Pid())
	name := strings.ToUpper(scenario)
	res, err := r.play(ctx, scenario, seed)
	if err != nil {
		return "", err
	}
	prodCPU := procCPU(r.f.Producer.Pid()) - prodBefore
	var after int64
	if name == "DOWN" {
		after = before // Redis is gone; nothing to count
	} else if after, err = r.stats.commands(ctx); err != nil {
		return "", err
	}
	var redisCPU time.Duration
	if name != "DOWN" {
		cpuAfter, _ := r.stats.cpu(ctx)
		redisCPU = cpuAfter - cpuBefore
	}
	if verbose {
		r.printCommands(ctx, scenario, beforeBy)
		r.printRefusals(scenario)
		r.printTimeline(scenario)
		if res.o.Posting > 0 {
			fmt.Fprintf(os.Stderr, "%s posting: %s for %d messages\n", scenario, res.o.Posting.Round(time.Millisecond), res.o.Sent)
		}
		printProducerCPU(scenario, prodCPU, res.o.Sent)
	}
	r.f.Close()
	rss := r.peakRSS()
	row := []string{scenario, fmt.Sprint(scale), fmt.Sprint(workers)}
	if strings.EqualFold(scenario, "S4") {
		return digestRow(row, res.o, after-before, rss), nil
	}
	if name == "BOTS3" {
		return r.botRows(row, res, after-before, rss), nil
	}
	if name == "IDLE" {
		row = append(row, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", fmt.Sprintf("%.1f", res.idleRate/float64(workers)), mib(rss))
		return "| " + strings.Join(row, " | ") + " |", nil
	}
	return r.deliveryRow(row, name, res, after-before, rss) + comment(name, res.o, after-before, redisCPU), nil
}

// comment is the comment line under a PAID or CEILING row: the sends the
// fake charged and their Stars, or the rate Herald reached; "" for the
// other scenarios.
func comment(name string, o fleet.Outcome, commands int64, redisCPU time.Duration) string {
	switch name {
	case "PAID", "PAID-BC":
		return fmt.Sprintf("\n<!-- "+name+": %d paid sends, %d charged (%.1f Stars), %d refused -->", o.PaidSends, o.Charged, o.Stars, o.PaidRefused)
	case "BUDGET":
		return fmt.Sprintf("\n<!-- BUDGET: a budget of %d Stars over a %d-chat paid broadcast: %d paid sends, %d charged (%.1f Stars, %.1f%% of the budget), %d 429s -->",
			budgetStars, budgetChats, o.PaidSends, o.Charged, o.Stars, 100*o.Stars/budgetStars, o.TooMany)
	case "CEILING":
		rate, cmds, cpu := 0.0, 0.0, 0.0
		if o.Drain > 0 && o.Delivered > 0 {
			rate, cmds = float64(o.Delivered)/o.Drain.Seconds(), float64(commands)/float64(o.Delivered)
			cpu = float64(redisCPU.Microseconds()) / float64(o.Delivered)
		}
		return fmt.Sprintf("\n<!-- CEILING: %.0f messages/s delivered, %.1f Redis commands/message, %.0f µs of Redis CPU/message (enqueue included): one Redis core would carry %.0f messages/s -->",
			rate, cmds, cpu, 1e6/max(cpu, 1))
	}
	return ""
}

// rig is what one run measures: its own Redis, the fake Telegram Bot API,
// the producer and workers, and a client counting Redis commands.
type rig struct {
	srv   *redistest.Server
	fake  *telegramfake.Server
	f     *fleet.Fleet
	stats *redisStats
	scale float64
}

// startRig starts a rig in a directory of its own under dir. S4 runs with
// the digest settings at the run's time scale.
func startRig(ctx context.Context, redisBin string, bins fleet.Binaries, dir, scenario string, workers int, scale float64) (_ *rig, err error) {
	r := &rig{scale: scale}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	runDir, err := os.MkdirTemp(dir, "run-")
	if err != nil {
		return nil, err
	}
	srv, err := redistest.Launch(redisBin, redistest.Options{Dir: runDir})
	if err != nil {
		return nil, err
	}
	r.srv = srv
	fcfg := telegramfake.Config{TimeScale: scale} // Telegram's limits are the fake's defaults
	limits := fleet.DefaultLimits(scale)
	switch strings.ToUpper(scenario) {
	case "PAID", "PAID-BC", "BUDGET":
		// Paid broadcasts enabled, and Stars for every message to be charged.
		fcfg.PaidBroadcast = telegramfake.Paid{Enabled: true, Balance: 10000}
		limits.Paid = fleet.PaidWindows
	case "CEILING":
		fcfg.Bot = telegramfake.Rate(ceilingFakeBot, time.Second)
		limits.Bot = ratelimit.Per(ceilingHeraldBot, 100*time.Millisecond)
	}
	var bots map[string]string
	if strings.EqualFold(scenario, "BOTS3") {
		// Three bots, each with its own token and Telegram's limits.
		bots = map[string]string{}
		fcfg.Tokens = map[string]string{}
		for i, name := range benchBots {
			bots[name] = fmt.Sprintf("4%08d:%s-bench-token", i+1, name)
			fcfg.Tokens[name] = bots[name]
		}
	}
	fake, err := telegramfake.Start(fcfg)
	if err != nil {
		return nil, err
	}
	r.fake = fake
	r.f = &fleet.Fleet{Dir: runDir, Bins: bins, RedisURL: r.srv.URL(), APIURL: r.fake.URL(),
		Token: telegramfake.DefaultToken, Bots: bots, Updates: updates, Limits: limits}
	if strings.EqualFold(scenario, "S4") {
		r.f.ExtraEnv = digestEnv(scale)
	}
	if strings.EqualFold(scenario, "BUDGET") {
		r.f.ExtraEnv = append(r.f.ExtraEnv, "HERALD_PAID_BUDGET="+strconv.Itoa(budgetStars))
	}
	r.f.ExtraEnv = append(r.f.ExtraEnv, workerEnv...)
	if err := r.f.StartProducer(ctx); err != nil {
		return nil, err
	}
	for i := 0; i < workers; i++ {
		if _, err := r.f.StartWorker(ctx); err != nil {
			return nil, err
		}
	}
	r.stats = newRedisStats(r.srv.Addr)
	return r, nil
}

// close stops whatever the rig started, last started first.
func (r *rig) close() {
	if r.stats != nil {
		r.stats.close()
	}
	if r.f != nil {
		r.f.Close()
	}
	if r.fake != nil {
		r.fake.Close()
	}
	if r.srv != nil {
		r.srv.Kill()
	}
}

// BUDGET is a paid broadcast to budgetChats private chats with a day's
// budget of budgetStars Stars (HERALD_PAID_BUDGET): the budget runs out
// part way and the rest goes at the free limit. Its comment line says
// what the fake charged against the budget and the 429s at the switch.
const (
	budgetChats = 700
	budgetStars = 20
)

// CEILING's bot-wide limits: the fake's per second and Herald's per 100 ms
// (the most sends a window may hold), both far above what Herald reaches.
const (
	ceilingFakeBot   = 100_000
	ceilingHeraldBot = ratelimit.MaxWindowSends
)

// benchBots are the bots of the BOTS3 scenario.
var benchBots = []string{"alpha", "bravo", "charlie"}

// played is what a scenario produced: the messages it sent, what became of
// them (for BOTS3 each bot's too), and for "idle" the Redis commands per
// second.
type played struct {
	ms       []fleet.Message
	o        fleet.Outcome
	perBot   map[string]fleet.Outcome
	idleRate float64
}

// play runs scenario on the rig: sends its messages and waits until they
// are delivered or, for S3, idle and DOWN, takes that scenario's own
// measure instead.
func (r *rig) play(ctx context.Context, scenario string, seed uint64) (played, error) {
	var res played
	var err error
	name := strings.ToUpper(scenario)
	switch name {
	case "S1":
		res.ms = fleet.S1(seed)
	case "S2":
		res.ms = fleet.S2(seed)
	case "S5":
		res.ms = fleet.S5(seed)
	case "PAUSED":
		res.ms = fleet.Paused(seed)
	case "S2-429":
		res.ms = fleet.S2FloodWait(seed)
	case "S4":
		res.ms = fleet.S4(seed)
	case "PAID", "PAID-BC":
		res.ms = fleet.PaidBurst(seed)
	case "CEILING":
		res.ms = fleet.Ceiling(seed)
	case "BUDGET":
		res.ms = fleet.PrivateChats("BUDGET", 300000, budgetChats, 1, seed)
	case "BOTS3":
		// Each bot gets an S2-shaped burst of its own, all at once.
		res.ms = fleet.ForBots(fleet.S2(seed), benchBots, seed)
		res.o, res.perBot, err = r.f.DeliverBots(ctx, r.fake, res.ms)
		return res, err
	case "S3":
		res.ms, res.o, err = latency(ctx, r.f, r.fake, 200, 50*time.Millisecond)
		return res, err
	case "IDLE":
		res.idleRate, err = r.stats.idle(ctx, 10*time.Second)
		return res, err
	case "DOWN":
		// Redis refuses connections: how fast does the API say 503?
		r.srv.Kill()
		res.o, err = refusals(ctx, r.f, 200)
		return res, err
	default:
		return res, fmt.Errorf("unknown scenario %q", scenario)
	}
	switch name {
	case "S1", "S2", "S5":
		res.o, err = r.f.Deliver(ctx, r.fake, res.ms)
	case "PAID-BC", "BUDGET":
		res.o, err = r.f.DeliverBroadcasts(ctx, r.fake, res.ms)
	case "PAUSED", "CEILING", "PAID":
		res.o, err = r.f.DeliverPaused(ctx, r.fake, res.ms)
	case "S2-429":
		res.o, err = r.f.DeliverWithFloodWait(ctx, r.fake, res.ms, fleet.FloodWait)
	case "S4":
		res.o, err = coalesced(ctx, r.f, r.fake, res.ms)
	}
	return res, err
}

// printCommands prints to stderr, by name, the Redis commands run since
// the counts in before.
func (r *rig) printCommands(ctx context.Context, scenario string, before map[string]int64) {
	afterBy, _ := r.stats.breakdown(ctx)
	for name, n := range afterBy {
		if d := n - before[name]; d > 0 {
			fmt.Fprintf(os.Stderr, "%s %s: %d\n", scenario, name, d)
		}
	}
}

// printProducerCPU prints to stderr the producer's CPU time (user and
// system, /proc) over the run per message it accepted: per POST
// /v1/messages, or per recipient of POST /v1/broadcasts (PAID-BC), its
// background work during the drain included.
func printProducerCPU(scenario string, cpu time.Duration, sent int) {
	if sent == 0 || cpu <= 0 {
		return
	}
	per := "accepted message"
	if strings.EqualFold(scenario, "PAID-BC") {
		per = "broadcast recipient"
	}
	fmt.Fprintf(os.Stderr, "%s producer CPU: %s, %.0f µs per %s\n", scenario, cpu.Round(10*time.Millisecond),
		float64(cpu.Microseconds())/float64(sent), per)
}

// printRefusals prints to stderr where the fake's 429s came from: the
// bot-wide limit or which chat's.
func (r *rig) printRefusals(scenario string) {
	st := r.fake.Stats()
	if st.TooMany > 0 {
		fmt.Fprintf(os.Stderr, "%s 429s: bot=%d by chat=%v inside=%d\n", scenario, st.TooManyBot, st.TooManyByChat, st.InsideWait)
	}
	if scenario != "CEILING" {
		if g := fleet.TightestGap(r.fake.Messages(), r.f.Limits); g != "" {
			fmt.Fprintf(os.Stderr, "%s tightest gap: %s\n", scenario, g)
		}
	}
}

// printTimeline prints to stderr how many messages the fake accepted in
// each second of the run, from its first one: where a drain lost time.
func (r *rig) printTimeline(scenario string) {
	ms := r.fake.Messages()
	if len(ms) == 0 {
		return
	}
	first := ms[0].At
	for _, m := range ms {
		if m.At.Before(first) {
			first = m.At
		}
	}
	var per []int
	for _, m := range ms {
		i := int(m.At.Sub(first) / time.Second)
		for len(per) <= i {
			per = append(per, 0)
		}
		per[i]++
	}
	fmt.Fprintf(os.Stderr, "%s sent per second: %v\n", scenario, per)
}

// peakRSS is the largest peak resident set size of the rig's workers.
func (r *rig) peakRSS() int64 {
	var rss int64
	for _, w := range r.f.Workers {
		rss = max(rss, w.PeakRSS())
	}
	return rss
}

// deliveryRow completes row, the scenario's first columns, with the columns
// of the main table for a scenario that sent messages; commands is the
// number of Redis commands it took.
func (r *rig) deliveryRow(row []string, name string, res played, commands, rss int64) string {
	o := res.o
	cmdsPerMsg, reqPerMsg := "-", "-"
	if o.Delivered > 0 {
		// The producer's own enqueue commands are included: they are part of
		// delivering a message.
		cmdsPerMsg = fmt.Sprintf("%.1f", float64(commands)/float64(o.Delivered))
		reqPerMsg = fmt.Sprintf("%.3f", float64(o.Requests)/float64(o.Delivered))
	}
	drain, minS, ratio := r.drainColumns(name, res)
	inside := fmt.Sprint(o.InsideWait)
	if o.InsideWaitBot > 0 {
		inside += fmt.Sprintf(" (%d bot)", o.InsideWaitBot)
	}
	p50, p95, p99 := "-", "-", "-"
	if len(o.Latencies) > 0 {
		p50, p95, p99 = ms3(o.Percentile(50)), ms3(o.Percentile(95)), ms3(o.Percentile(99))
	}
	row = append(row, fmt.Sprint(o.Sent), drain, minS, ratio, fmt.Sprint(o.TooMany), inside, fmt.Sprint(o.Requests), reqPerMsg,
		fmt.Sprint(o.Lost), fmt.Sprint(o.Duplicates), r.minSlack(name), cmdsPerMsg, p50, p95, p99, "-", mib(rss))
	return "| " + strings.Join(row, " | ") + " |"
}

// botRows is BOTS3's rows: one per bot, each against its own minimum
// drain, then the whole run ("all"), whose rate is the bots' sum.
func (r *rig) botRows(row []string, res played, commands, rss int64) string {
	var lines []string
	for _, b := range benchBots {
		br := append([]string{row[0] + "/" + b}, row[1:]...)
		sub := played{ms: fleet.OfBot(res.ms, b), o: res.perBot[b]}
		// Commands are the run's; per bot they are left out.
		line := r.deliveryRow(br, "BOTS3", sub, 0, rss)
		lines = append(lines, strings.Replace(line, "| 0.0 |", "| - |", 1))
	}
	all := append([]string{row[0] + "/all"}, row[1:]...)
	line := r.deliveryRow(all, "BOTS3", res, commands, rss)
	lines = append(lines, line)
	rate := float64(res.o.Delivered) / res.o.Drain.Seconds()
	lines = append(lines, fmt.Sprintf("<!-- BOTS3 all bots: %.1f messages/s delivered in total -->", rate))
	return strings.Join(lines, "\n")
}

// minSlack is the "min slack" column: none for CEILING, whose fake keeps
// no documented bot-wide limit.
func (r *rig) minSlack(name string) string {
	if name == "CEILING" {
		return "-"
	}
	return ms3(fleet.MinSlack(r.fake.Messages(), r.f.Limits))
}

// drainColumns are the "drain", "min drain" and "ratio" columns; S3 and
// DOWN, which do not drain a backlog, have none, and CEILING, which no
// limit binds, only its drain.
func (r *rig) drainColumns(name string, res played) (drain, minS, ratio string) {
	drain, minS, ratio = "-", "-", "-"
	if name == "S3" || name == "DOWN" {
		return drain, minS, ratio
	}
	if name == "CEILING" || name == "BUDGET" {
		return res.o.Drain.Round(time.Millisecond).String(), minS, ratio
	}
	minDrain := fleet.MinDrain(res.ms, r.f.Limits)
	if name == "S2-429" {
		minDrain += r.f.Limits.Real(fleet.FloodWait)
	}
	drain, minS = res.o.Drain.Round(time.Millisecond).String(), minDrain.Round(time.Millisecond).String()
	if minDrain > 0 {
		ratio = fmt.Sprintf("%.3f", res.o.Drain.Seconds()/minDrain.Seconds())
	}
	return drain, minS, ratio
}

func ms3(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

func mib(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func ints(s string) []int {
	var out []int
	for _, p := range split(s) {
		n, err := strconv.Atoi(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %q is not a number\n", p)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

func floats(s string) []float64 {
	var out []float64
	for _, p := range split(s) {
		n, err := strconv.ParseFloat(p, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %q is not a number\n", p)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

// refusals posts n messages one after another while Redis is down and
// records how long each 503 took. Any other answer is an error.
func refusals(ctx context.Context, f *fleet.Fleet, n int) (fleet.Outcome, error) {
	var o fleet.Outcome
	for i := 0; i < n; i++ {
		start := time.Now()
		_, code, _ := f.Post(ctx, map[string]any{"chat": "42", "text": fmt.Sprintf("down #%d", i)})
		if code != http.StatusServiceUnavailable {
			return o, fmt.Errorf("POST with Redis down answered %d, want 503", code)
		}
		o.Latencies = append(o.Latencies, time.Since(start))
	}
	return o, nil
}
