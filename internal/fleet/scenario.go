package fleet

import (
	"context"
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

// S2 is 2,000 messages over 100 private chats, shuffled: bound by the
// bot-wide limit.
func S2(seed uint64) []Message {
	var ms []Message
	for c := 0; c < 100; c++ {
		chat := strconv.Itoa(2000 + c)
		for i := 0; i < 20; i++ {
			ms = append(ms, Message{Chat: chat, Text: fmt.Sprintf("S2 %s #%d", chat, i)})
		}
	}
	shuffle(ms, seed)
	return ms
}

// S4 is S1 with coalescing on: the same 200 messages (labelled S4), every
// one coalescible.
func S4(seed uint64) []Message { return fiveChats("S4", true, seed) }

func shuffle(ms []Message, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
}

// MinDrain is the theoretical minimum time to deliver ms under l: the
// largest of each chat's own schedule and the bot-wide schedule, each
// (n - burst) intervals after the first message.
func MinDrain(ms []Message, l Limits) time.Duration {
	per := map[string]int{}
	for _, m := range ms {
		per[m.Chat]++
	}
	sched := func(n, burst int, interval time.Duration) time.Duration {
		if n <= burst {
			return 0
		}
		return time.Duration(n-burst) * interval
	}
	sec := func(perUnit float64, unit time.Duration) time.Duration {
		return time.Duration(float64(unit) / (perUnit * l.Scale))
	}
	worst := sched(len(ms), l.BotBurst, sec(30, time.Second))
	for chat, n := range per {
		var d time.Duration
		if chat[0] == '-' || chat[0] == '@' {
			d = sched(n, l.GroupBurst, sec(20, time.Minute))
		} else {
			d = sched(n, l.PrivateBurst, sec(1, time.Second))
		}
		worst = max(worst, d)
	}
	return worst
}

// Outcome is what a run delivered.
type Outcome struct {
	Sent       int           // accepted by the producer API
	Delivered  int           // distinct messages the fake accepted
	Lost       int           // sent but never delivered
	Duplicates int           // deliveries beyond the first of a message
	TooMany    int64         // 429 answers
	Drain      time.Duration // first enqueue to last delivery
	Latencies  []time.Duration
	// Messages counts the Telegram messages that carried the scenario's
	// messages (fewer than Delivered when they were coalesced; see
	// TallyItems).
	Messages int
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
	ch := make(chan Message)
	errc := make(chan error, parallel)
	var wg sync.WaitGroup
	for i := 0; i < parallel; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range ch {
				body := map[string]any{"chat": m.Chat, "text": m.Text}
				if m.Queue != "" {
					body["queue"] = m.Queue
				}
				if m.Coalesce {
					body["coalesce"] = true
				}
				if _, _, err := f.Post(ctx, body); err != nil {
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
	return start, err
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
	o := Outcome{Sent: len(ms), TooMany: stats.TooMany}
	o.count(ms, seen, last, start)
	return o
}

// TallyItems is Tally for coalesced scenarios: a message counts as
// delivered when its text shows in the visible text of a delivered message,
// alone or inside a digest, and each further showing is a duplicate.
// Messages counts the delivered messages that showed any.
func TallyItems(ms []Message, delivered []telegramfake.Message, stats telegramfake.Stats, start time.Time) Outcome {
	o := Outcome{Sent: len(ms), TooMany: stats.TooMany}
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
