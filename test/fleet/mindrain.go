package fleet

import (
	"fmt"
	"sort"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// IsGroup reports whether chat names a group, supergroup or channel: a
// negative id or an @name. Other chats are private.
func IsGroup(chat string) bool { return chat != "" && (chat[0] == '-' || chat[0] == '@') }

// MinDrain is the shortest time from the first send to the last in which
// Telegram's documented limits (PrivateWindows, GroupWindows, BotWindows,
// sliding windows with their spans divided by l.Scale) let ms through, all
// of them available at once. It depends on l's Scale only, not on Herald's
// configured windows: it measures Herald against Telegram, not against
// itself.
//
// It is the larger of two figures that agree for the scenarios here: an
// exact greedy schedule (at each instant every eligible chat sends while the
// bot-wide window has room, the chat with the most messages left first,
// since the longest remaining chain decides the end) and the simple lower
// bound, the largest of each chat's own schedule alone and the bot-wide
// schedule alone.
//
// The fake admits a message up to Config.Tolerance of a window early, and
// Herald keeps exactly to the windows plus a small guard, so a drain can at
// best approach MinDrain (and land under it by no more than the tolerance).
//
// Telegram's limits are per bot: messages of several bots (Message.Bot)
// drain side by side, and MinDrain is the longest of the bots' own. With
// paid broadcasts (l.Paid) the bot-wide limit is Telegram's paid one,
// PaidWindows.
func MinDrain(ms []Message, l Limits) time.Duration {
	byBot := map[string][]Message{}
	for _, m := range ms {
		byBot[m.Bot] = append(byBot[m.Bot], m)
	}
	if len(byBot) > 1 {
		var most time.Duration
		for _, bms := range byBot {
			most = max(most, MinDrain(bms, l))
		}
		return most
	}
	per := map[string]int{}
	var order []string
	for _, m := range ms {
		if per[m.Chat] == 0 {
			order = append(order, m.Chat)
		}
		per[m.Chat]++
	}
	chats := make([]drainChat, len(order))
	for i, c := range order {
		chats[i] = drainChat{left: per[c], ws: PrivateWindows}
		if IsGroup(c) {
			chats[i].ws = GroupWindows
		}
	}
	bot := l.botWindows()
	return l.Real(max(greedyDrain(chats, bot), drainBound(chats, bot)))
}

// drainChat is one chat of the schedule: messages left to send, its
// windows and the times of its sends so far (Telegram time).
type drainChat struct {
	left int
	ws   ratelimit.Limit
	sent []time.Duration
}

// earliest is the first time windows ws allow one more event after sent.
// An event exactly Per after the N-th last one is allowed.
func earliest(sent []time.Duration, ws ratelimit.Limit) time.Duration {
	var t time.Duration
	for _, w := range ws {
		if w.N > 0 && len(sent) >= w.N {
			t = max(t, sent[len(sent)-w.N]+w.Per)
		}
	}
	return t
}

// greedyDrain schedules every message of chats under their own windows and
// the bot-wide windows, from time 0, and returns the time of the last send.
func greedyDrain(chats []drainChat, bot ratelimit.Limit) time.Duration {
	chats = cloneChats(chats)
	left := 0
	for _, c := range chats {
		left += c.left
	}
	var botSent []time.Duration
	var t, last time.Duration
	for left > 0 {
		// Send at t while the bot has room: each time the eligible chat
		// with the most messages left (the first such in order on a tie).
		for earliest(botSent, bot) <= t {
			best := -1
			for i := range chats {
				c := &chats[i]
				if c.left > 0 && earliest(c.sent, c.ws) <= t && (best < 0 || c.left > chats[best].left) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			c := &chats[best]
			c.sent = append(c.sent, t)
			c.left--
			left--
			botSent = append(botSent, t)
			last = t
		}
		if left == 0 {
			break
		}
		// Next instant: the first at which a chat is eligible and the bot
		// has room; both stay true once reached while nothing is sent.
		next := time.Duration(-1)
		for i := range chats {
			if c := &chats[i]; c.left > 0 {
				if e := earliest(c.sent, c.ws); next < 0 || e < next {
					next = e
				}
			}
		}
		next = max(next, earliest(botSent, bot))
		if next <= t {
			panic("fleet: MinDrain made no progress") // cannot happen: something was eligible and the bot had room
		}
		t = next
	}
	return last
}

// drainBound is the lower bound: the longest of each chat's schedule alone
// and the bot-wide schedule of all messages alone.
func drainBound(chats []drainChat, bot ratelimit.Limit) time.Duration {
	alone := func(n int, ws ratelimit.Limit) time.Duration {
		var sent []time.Duration
		var t time.Duration
		for range n {
			t = earliest(sent, ws)
			sent = append(sent, t)
		}
		return t
	}
	total := 0
	var worst time.Duration
	for _, c := range chats {
		total += c.left
		worst = max(worst, alone(c.left, c.ws))
	}
	return max(worst, alone(total, bot))
}

func cloneChats(chats []drainChat) []drainChat {
	out := make([]drainChat, len(chats))
	for i, c := range chats {
		out[i] = drainChat{left: c.left, ws: c.ws, sent: append([]time.Duration(nil), c.sent...)}
	}
	return out
}

// CheckWindows checks delivered (the fake's Messages) against Telegram's
// documented limits at scale: every chat's own windows and the bot-wide
// window, each span shortened by tolerance (a fraction, the fake's
// Config.Tolerance), as the fake admits. It returns one line per breach,
// none when every window was kept.
func CheckWindows(delivered []telegramfake.Message, scale, tolerance float64) []string {
	var out []string
	eachGap(delivered, Limits{Scale: scale}, func(who string, w ratelimit.Window, i int, gap, span time.Duration) {
		if least := span - time.Duration(float64(span)*tolerance); gap < least {
			out = append(out, fmt.Sprintf("%s: messages %d and %d %v apart, want at least %v (%d per %v)",
				who, i-w.N, i, gap, least, w.N, span))
		}
	})
	return out
}

// MinSlack is the least, over every documented window and every pair of
// deliveries N apart, of how much longer than the window's span the pair
// was apart, in real time at l's scale: how much of its guard Herald kept
// at Telegram's door. The bot-wide window is PaidWindows when l has paid
// broadcasts. It is negative when a window was broken; zero when nothing
// was delivered N apart.
func MinSlack(delivered []telegramfake.Message, l Limits) time.Duration {
	least, seen := time.Duration(0), false
	eachGap(delivered, l, func(_ string, _ ratelimit.Window, _ int, gap, span time.Duration) {
		if d := gap - span; !seen || d < least {
			least, seen = d, true
		}
	})
	return least
}

// TightestGap says where MinSlack's figure came from: the chat or bot, the
// window, and the two deliveries N apart that came closest to it (the
// fake's times), or "" when nothing was delivered N apart.
func TightestGap(delivered []telegramfake.Message, l Limits) string {
	least, out := time.Duration(0), ""
	eachGap(delivered, l, func(who string, w ratelimit.Window, i int, gap, span time.Duration) {
		if d := gap - span; out == "" || d < least {
			least = d
			out = fmt.Sprintf("%s, window %s: deliveries %d and %d, %s apart (slack %s)", who, w, i-w.N+1, i+1, gap, d)
		}
	})
	return out
}

// eachGap calls fn for every pair of deliveries N apart under each of
// Telegram's documented windows at l's scale: per chat, and for the bot as
// a whole (l.botWindows).
func eachGap(delivered []telegramfake.Message, l Limits, fn func(who string, w ratelimit.Window, i int, gap, span time.Duration)) {
	check := func(who string, at []time.Time, ws ratelimit.Limit) {
		sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
		for _, w := range ws {
			span := l.Real(w.Per)
			for i := w.N; i < len(at); i++ {
				fn(who, w, i, at[i].Sub(at[i-w.N]), span)
			}
		}
	}
	// Telegram's limits are per bot: every window is checked within one
	// bot's deliveries.
	type chatOf struct {
		bot string
		id  int64
	}
	byChat := map[chatOf][]time.Time{}
	byBot := map[string][]time.Time{}
	for _, m := range delivered {
		c := chatOf{m.Bot, m.ChatID}
		byChat[c] = append(byChat[c], m.At)
		byBot[m.Bot] = append(byBot[m.Bot], m.At)
	}
	chats := make([]chatOf, 0, len(byChat))
	for c := range byChat {
		chats = append(chats, c)
	}
	sort.Slice(chats, func(i, j int) bool {
		if chats[i].bot != chats[j].bot {
			return chats[i].bot < chats[j].bot
		}
		return chats[i].id < chats[j].id
	})
	several := len(byBot) > 1
	for _, c := range chats {
		ws := PrivateWindows
		if c.id < 0 {
			ws = GroupWindows
		}
		who := fmt.Sprintf("chat %d", c.id)
		if several {
			who = c.bot + " " + who
		}
		check(who, byChat[c], ws)
	}
	bots := make([]string, 0, len(byBot))
	for b := range byBot {
		bots = append(bots, b)
	}
	sort.Strings(bots)
	for _, b := range bots {
		who := "bot"
		if several {
			who = "bot " + b
		}
		check(who, byBot[b], l.botWindows())
	}
}
