package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// Message is one message of a scenario; Text is unique within a run so
// deliveries can be matched to requests.
type Message struct {
	Chat  string
	Text  string
	Queue string
	// Coalesce posts the message with "coalesce": true: it may reach the
	// chat inside a digest.
	Coalesce bool
	// Bot names the bot that sends it ("": the default bot).
	Bot string
}

// ForBots gives each bot in bots its own copy of ms, sent by that bot, with
// the bot's name in front of every text, shuffled together with seed.
func ForBots(ms []Message, bots []string, seed uint64) []Message {
	out := make([]Message, 0, len(ms)*len(bots))
	for _, b := range bots {
		for _, m := range ms {
			m.Bot, m.Text = b, b+" "+m.Text
			out = append(out, m)
		}
	}
	shuffle(out, seed)
	return out
}

// OfBot returns the messages of ms that bot sends.
func OfBot(ms []Message, bot string) []Message {
	var out []Message
	for _, m := range ms {
		if m.Bot == bot {
			out = append(out, m)
		}
	}
	return out
}

// S1 is 200 unique messages, shuffled: 40 to each of 4 private chats and 40
// to one group chat.
func S1(seed uint64) []Message { return fiveChats("S1", false, seed) }

// fiveChats is S1's shape: 40 messages to each of 4 private chats and one
// group chat, shuffled. Texts are unique and none is a prefix of another,
// so they can also be found inside digests.
func fiveChats(label string, coalesce bool, seed uint64) []Message {
	var ms []Message
	for _, c := range []string{"1001", "1002", "1003", "1004", "-1001000000001"} {
		for i := 0; i < 40; i++ {
			ms = append(ms, Message{Chat: c, Text: fmt.Sprintf("%s %s #%03d", label, c, i), Coalesce: coalesce})
		}
	}
	shuffle(ms, seed)
	return ms
}

// S2 is 2,000 messages over 100 private chats, 20 each, shuffled: bound by
// the bot-wide limit.
func S2(seed uint64) []Message { return privateChats("S2", 2000, repeat(100, 20), seed) }

// S2FloodWait is S2's messages (labelled S2-429) for the flood-wait case:
// once half are delivered the fake announces a bot-wide flood wait of
// FloodWait (see DeliverWithFloodWait).
func S2FloodWait(seed uint64) []Message { return privateChats("S2-429", 2000, repeat(100, 20), seed) }

// FloodWait is the bot-wide flood wait (Telegram time) S2-429 injects.
const FloodWait = 5 * time.Second

// S5 is 3,000 messages over 200 private chats, 10 to 20 each (15 on
// average; the counts are drawn from seed), shuffled: the 429-storm case,
// far more than the bot-wide limit lets through at once.
func S5(seed uint64) []Message {
	const chats, total, least, most = 200, 3000, 10, 20
	counts := repeat(chats, least)
	r := rand.New(rand.NewPCG(seed^0x5, seed+5))
	for extra := total - chats*least; extra > 0; {
		if c := r.IntN(chats); counts[c] < most {
			counts[c]++
			extra--
		}
	}
	return privateChats("S5", 20000, counts, seed)
}

// Paused is 400 messages over 40 private chats, 10 each, shuffled: the
// backlog-released case. They are posted while every worker is stopped and
// released together PausedHold later (see DeliverPaused).
func Paused(seed uint64) []Message { return privateChats("PAUSED", 7000, repeat(40, 10), seed) }

// PausedHold is how long (Telegram time) the PAUSED scenario keeps the
// workers stopped after posting.
const PausedHold = 3 * time.Second

// PaidBurst is 20,000 messages over 10,000 private chats, 2 each,
// shuffled: the paid-broadcast case, bound by Telegram's 1,000 a second
// (PaidWindows), 19 s at best.
func PaidBurst(seed uint64) []Message { return privateChats("PAID", 100000, repeat(10000, 2), seed) }

// Ceiling is 20,000 messages to 20,000 private chats, one each, shuffled:
// with the bot-wide limits out of the way, no limit binds and the drain
// measures Herald's own ceiling.
func Ceiling(seed uint64) []Message { return privateChats("CEILING", 200000, repeat(20000, 1), seed) }

// PrivateChats returns each messages to each of chats private chats
// (first, first+1, ...), shuffled with seed, each text unique and prefixed
// with label: S2's shape at any size.
func PrivateChats(label string, first, chats, each int, seed uint64) []Message {
	return privateChats(label, first, repeat(chats, each), seed)
}

// privateChats returns counts[i] messages to private chat first+i,
// shuffled, each text unique and prefixed with label.
func privateChats(label string, first int, counts []int, seed uint64) []Message {
	var ms []Message
	for c, n := range counts {
		chat := strconv.Itoa(first + c)
		for i := 0; i < n; i++ {
			ms = append(ms, Message{Chat: chat, Text: fmt.Sprintf("%s %s #%d", label, chat, i)})
		}
	}
	shuffle(ms, seed)
	return ms
}

func repeat(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// S4 is S1 with coalescing on: the same 200 messages (labelled S4), every
// one coalescible.
func S4(seed uint64) []Message { return fiveChats("S4", true, seed) }

func shuffle(ms []Message, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
}

// Outcome is what a run delivered.
type Outcome struct {
	Sent       int   // accepted by the producer API
	Delivered  int   // distinct messages the fake accepted
	Lost       int   // sent but never delivered
	Duplicates int   // deliveries beyond the first of a message
	TooMany    int64 // 429 answers
	// Requests counts the Bot API requests the fake received (every
	// method: sendMessage, and getChat or getMe if the workers call them).
	Requests int64
	// InsideWait counts requests that arrived inside a flood wait already
	// announced by an earlier 429; InsideWaitBot those under a bot-wide
	// (or Force429) wait.
	InsideWait, InsideWaitBot int64
	Drain                     time.Duration // first enqueue to last delivery
	// Posting is how long the producer API took to accept every message
	// (Deliver and DeliverPaused): a drain no shorter than it was bound by
	// the posts.
	Posting   time.Duration
	Latencies []time.Duration
	// Messages counts the Telegram messages that carried the scenario's
	// messages (fewer than Delivered when they were coalesced; see
	// TallyItems).
	Messages int // PaidSends, Charged and Stars are the fake's count of the paid
	// broadcasts it accepted, those it charged and what they cost;
	// PaidRefused the paid sends it refused (no balance, not enabled).
	PaidSends, Charged, PaidRefused int64
	Stars                           float64
}

// Percentile returns the p-th percentile (0..100) of the latencies.
func (o Outcome) Percentile(p float64) time.Duration {
	if len(o.Latencies) == 0 {
		return 0
	}
	l := append([]time.Duration{}, o.Latencies...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	i := int(float64(len(l)-1) * p / 100)
	return l[i]
}

// PostAll posts ms through the producer API with parallel clients, as fast
// as it will take them, and returns when all are accepted.
func (f *Fleet) PostAll(ctx context.Context, ms []Message, parallel int) (time.Time, error) {
	start := time.Now()
	err := Each(ctx, ms, parallel, func(m Message) error {
		body := map[string]any{"chat": m.Chat, "text": m.Text}
		if m.Queue != "" {
			body["queue"] = m.Queue
		}
		if m.Coalesce {
			body["coalesce"] = true
		}
		if m.Bot != "" {
			body["bot"] = m.Bot
		}
		_, _, err := f.Post(ctx, body)
		return err
	})
	return start, err
}

// Each calls do for every message of ms from parallel goroutines and
// returns the first error, after which no further message is handed out.
func Each(ctx context.Context, ms []Message, parallel int, do func(Message) error) error {
	ch := make(chan Message)
	errc := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range ch {
				if err := do(m); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	var err error
loop:
	for _, m := range ms {
		select {
		case ch <- m:
		case err = <-errc:
			break loop
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		}
	}
	close(ch)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

// Deliver posts ms with 32 parallel clients, waits until the fake has
// accepted as many messages more and tallies the run from the first post.
// The counters cover this run only (StatsSince).
func (f *Fleet) Deliver(ctx context.Context, fake *telegramfake.Server, ms []Message) (Outcome, error) {
	base, have := fake.Stats(), len(fake.Messages())
	start, err := f.PostAll(ctx, ms, 32)
	if err != nil {
		return Outcome{}, err
	}
	posting := time.Since(start)
	if err := waitFor(ctx, fake, have+len(ms)); err != nil {
		return Outcome{}, err
	}
	o := Tally(ms, fake.Messages(), StatsSince(fake.Stats(), base), start)
	o.Posting = posting
	return o, nil
}

// DeliverPaused is the PAUSED scenario's run: it stops every worker
// (SIGSTOP), posts ms, waits PausedHold of Telegram time, continues the
// workers (SIGCONT) and waits for every delivery. Drain counts from the
// release, so it compares with MinDrain.
func (f *Fleet) DeliverPaused(ctx context.Context, fake *telegramfake.Server, ms []Message) (o Outcome, err error) {
	base, have := fake.Stats(), len(fake.Messages())
	if err := f.PauseWorkers(); err != nil {
		_ = f.ResumeWorkers()
		return Outcome{}, err
	}
	paused := true
	defer func() {
		if paused {
			err = errors.Join(err, f.ResumeWorkers())
		}
	}()
	posted, err := f.PostAll(ctx, ms, 32)
	if err != nil {
		return Outcome{}, err
	}
	posting := time.Since(posted)
	select {
	case <-time.After(f.Limits.Real(PausedHold)):
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	start := time.Now()
	paused = false
	if err := f.ResumeWorkers(); err != nil {
		return Outcome{}, err
	}
	if err := waitFor(ctx, fake, have+len(ms)); err != nil {
		return Outcome{}, err
	}
	o = Tally(ms, fake.Messages(), StatsSince(fake.Stats(), base), start)
	o.Posting = posting
	return o, nil
}

// DeliverWithFloodWait is the S2-429 scenario's run: it posts ms and, once
// half of them are delivered, has the fake announce a bot-wide flood wait
// of wait (Telegram time, fake.Force429), then waits for every delivery.
// Outcome.InsideWait counts the requests that came inside the announced
// wait; the best drain is MinDrain plus the wait.
func (f *Fleet) DeliverWithFloodWait(ctx context.Context, fake *telegramfake.Server, ms []Message, wait time.Duration) (Outcome, error) {
	base, have := fake.Stats(), len(fake.Messages())
	start, err := f.PostAll(ctx, ms, 32)
	if err != nil {
		return Outcome{}, err
	}
	if err := waitFor(ctx, fake, have+len(ms)/2); err != nil {
		return Outcome{}, err
	}
	fake.Force429(wait)
	if err := waitFor(ctx, fake, have+len(ms)); err != nil {
		return Outcome{}, err
	}
	return Tally(ms, fake.Messages(), StatsSince(fake.Stats(), base), start), nil
}

// waitFor waits until the fake has accepted n messages.
func waitFor(ctx context.Context, fake *telegramfake.Server, n int) error {
	if err := fake.Wait(ctx, n); err != nil {
		return fmt.Errorf("waiting for deliveries: %w (have %d of %d)", err, len(fake.Messages()), n)
	}
	return nil
}

// Tally compares what the fake delivered with what was sent.
func Tally(ms []Message, delivered []telegramfake.Message, stats telegramfake.Stats, start time.Time) Outcome {
	want := map[string]bool{}
	for _, m := range ms {
		want[m.Text] = true
	}
	seen := map[string]int{}
	var last time.Time
	for _, d := range delivered {
		if !want[d.Text] {
			continue
		}
		seen[d.Text]++
		last = later(last, d.At)
	}
	o := fromStats(len(ms), stats)
	o.count(ms, seen, last, start)
	return o
}

// fromStats starts an Outcome from the fake's counters.
func fromStats(sent int, st telegramfake.Stats) Outcome {
	return Outcome{Sent: sent, TooMany: st.TooMany, Requests: st.Requests,
		InsideWait: st.InsideWait, InsideWaitBot: st.InsideWaitBot,
		PaidSends: st.PaidSends, Charged: st.ChargedSends, PaidRefused: st.PaidRefused, Stars: st.StarsSpent}
}

// StatsSince returns the counters of now that accrued after base (a
// snapshot taken earlier from the same fake), so the requests of starting
// the workers are left out. TooManyByChat and Penalties stay zero.
func StatsSince(now, base telegramfake.Stats) telegramfake.Stats {
	return telegramfake.Stats{
		Requests:      now.Requests - base.Requests,
		Accepted:      now.Accepted - base.Accepted,
		TooMany:       now.TooMany - base.TooMany,
		TooManyFlood:  now.TooManyFlood - base.TooManyFlood,
		TooManyBot:    now.TooManyBot - base.TooManyBot,
		ServerErrors:  now.ServerErrors - base.ServerErrors,
		Hangs:         now.Hangs - base.Hangs,
		Rejected:      now.Rejected - base.Rejected,
		Injected:      now.Injected - base.Injected,
		InsideWait:    now.InsideWait - base.InsideWait,
		InsideWaitBot: now.InsideWaitBot - base.InsideWaitBot,
		PaidSends:     now.PaidSends - base.PaidSends,
		ChargedSends:  now.ChargedSends - base.ChargedSends,
		StarsSpent:    now.StarsSpent - base.StarsSpent,
		PaidRefused:   now.PaidRefused - base.PaidRefused,
	}
}

// TallyItems is Tally for coalesced scenarios: a message counts as
// delivered when its text shows in the visible text of a delivered message,
// alone or inside a digest, and each further showing is a duplicate.
// Messages counts the delivered messages that showed any.
func TallyItems(ms []Message, delivered []telegramfake.Message, stats telegramfake.Stats, start time.Time) Outcome {
	o := fromStats(len(ms), stats)
	seen := make(map[string]int, len(ms))
	var last time.Time
	for _, d := range delivered {
		plain, err := markup.Plain(d.Text, markup.Mode(d.ParseMode))
		if err != nil {
			plain = d.Text
		}
		found := false
		for _, m := range ms {
			if n := strings.Count(plain, m.Text); n > 0 {
				seen[m.Text] += n
				found = true
			}
		}
		if found {
			o.Messages++
			last = later(last, d.At)
		}
	}
	o.count(ms, seen, last, start)
	return o
}

// count fills Delivered, Lost, Duplicates and Drain from how often each
// sent text was seen and when the last one arrived.
func (o *Outcome) count(ms []Message, seen map[string]int, last, start time.Time) {
	counted := make(map[string]bool, len(ms))
	for _, m := range ms {
		if counted[m.Text] {
			continue
		}
		counted[m.Text] = true
		switch n := seen[m.Text]; {
		case n == 0:
			o.Lost++
		default:
			o.Delivered++
			o.Duplicates += n - 1
		}
	}
	if !last.IsZero() {
		o.Drain = last.Sub(start)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// DeliverBots is Deliver for messages of several bots (Message.Bot): it
// returns the whole run's outcome and each bot's, all timed from the first
// post.
func (f *Fleet) DeliverBots(ctx context.Context, fake *telegramfake.Server, ms []Message) (Outcome, map[string]Outcome, error) {
	base, have := fake.Stats(), len(fake.Messages())
	start, err := f.PostAll(ctx, ms, 32)
	if err != nil {
		return Outcome{}, nil, err
	}
	if err := waitFor(ctx, fake, have+len(ms)); err != nil {
		return Outcome{}, nil, err
	}
	now, delivered := fake.Stats(), fake.Messages()
	all := Tally(ms, delivered, StatsSince(now, base), start)
	per := map[string]Outcome{}
	for _, m := range ms {
		b := m.Bot
		if _, done := per[b]; done {
			continue
		}
		name := b
		if name == "" {
			name = telegramfake.DefaultBot
		}
		var mine []telegramfake.Message
		for _, d := range delivered {
			if d.Bot == name {
				mine = append(mine, d)
			}
		}
		per[b] = Tally(OfBot(ms, b), mine, StatsSince(now.Bots[name], base.Bots[name]), start)
	}
	return all, per, nil
}
