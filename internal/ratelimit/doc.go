// Package ratelimit holds Telegram's limits for a whole worker fleet.
//
// State lives in Redis and every decision is one Lua script run (one round
// trip), so any number of worker processes share the limits exactly. Times
// come from Redis (TIME), so worker clocks need not agree.
//
// # Limits are windows
//
// Telegram states its limits as counts per period: about 30 messages per
// second per bot, one per second to a chat, 20 per minute to a group or
// channel. Each limit here is that, literally: a sliding window of N sends
// per span (Window), and a chat, the bot or a queue may have several
// (a group has 1 per second and 20 per minute). A send fits when the send
// N places before it in the same log is at least span+Guard older. There is
// no burst beyond N and no early forgiveness: a group's first 20 messages
// may go a second apart, and the 21st waits until a minute after the first.
//
// Each limited thing keeps a log: a sorted set of send times that holds the
// recent sends and the slots reserved ahead, so a task knows its exact slot
// long before it comes. A chat's logs grow in time order, so the entry N
// places back decides a new slot: one range read of the newest N entries
// for windows of up to 32 sends, and for larger ones (a paid broadcast's
// 1,000 per second) two reads by rank, the last entry and the one N places
// back, so a decision's cost grows with the log's size as O(log n) and not
// with N or with the slots reserved ahead. The bot's log may get a
// slot between two reserved ones: a message that waits a little for its
// chat's spacing takes the first bot-wide slot that fits after it, wherever
// that is, with every window checked on both sides (one range read of the
// entries that can bind), so it neither pushes the end of the schedule nor
// leaves the slots before it unused.
// A bot log whose windows exceed 32 sends is append-only instead: a
// message whose chat is not ready by the next free bot-wide slot comes back
// when it is, holding no slot, so no gap is left that would need filling.
//
// # Three stages
//
//  1. The chat's turn. The chat's turn log hands out its messages' turns
//     under the chat's windows, so a hot chat's 1,000 messages neither crowd
//     the bot-wide stage nor poll: each task is deferred once, to its turn.
//  2. The queue's turn, the same way, when the queue has a limit of its own.
//  3. A bot-wide slot, first come first served among messages whose turns
//     have come, that also fits the chat's windows over its actual sends
//     (an earlier message of the chat may have been held back by the
//     bot-wide limit, or sent a few bot-wide spacings after its turn). Both
//     logs record the slot. A caller that sleeps through short waits
//     (Ask.Ahead) gets it in the same run even when the chat's spacing ends
//     a little later, and sleeps until then: one run per stage.
//
// Each stage reserves only its own log, at the time the task reaches it, so
// a message waiting for its chat never holds a bot-wide slot that others
// could use.
//
// A decision is Go (send now, or after Decision.Wait), Again (sleep the wait,
// then ask again) or Defer (the task goes back to Redis and returns
// SleepMax/2 before its slot, then sleeps the rest, so it is on time however
// the queue is dispatched). A slot is confirmed only when it has come, so a
// pause that a 429 wrote meanwhile, or a slot given to a priority message,
// holds the send back: by asking again, or, for a Go with a wait (Ask.Ahead),
// by Confirm, one ZSCORE that finds the slot moved. With Ask.Ahead the
// reservation of a wait the caller sleeps through stays in its memory
// (Decision.Resume, passed back as Ask.Resume, stored by Hold when the task
// goes back to Redis), which saves a write and a delete per wait. A task
// that comes back later than half the Guard (the other half is for the trip
// to Telegram) gives up its slot (leaving it unused is safe) and takes a new
// one.
//
// # Priority
//
// Messages of priority queues (Config.PriorityQueues) do not queue behind
// the bot-wide slots promised to others: within the Config.Priority
// allowance, one takes the earliest promised slot (after its chat's own
// spacing) of a message that is the last one reserved in its chat, and
// that message moves to the end of the bot-wide schedule. The bot's log
// keeps the same times plus one at its end, so the bot-wide windows hold,
// and so does every chat's order.
//
// # Lanes
//
// Config.Lanes (the broadcast queue) run below the other queues: a lane
// with no limit of its own takes queue turns (stage 2) at N - max(1, 3% of
// N) of each bot-wide window of N, so its backlog never holds the bot's
// schedule more than about a window ahead and a message of another queue
// finds a slot soon, as the first come, first served bot-wide stage alone
// would not give it behind a long broadcast.
//
// # Paid broadcasts
//
// Limiter.WithPaid gives a bot a second, higher bot-wide limit for
// Telegram's paid broadcasts (up to 1,000 sends a second). While no PaidOff
// mark exists the acquire script paces the bot by it and says so
// (Decision.Paid: send with allow_paid_broadcast); a send beyond the free
// ones in the second up to its slot is Decision.Charged. The workers count
// the charged sends made (Limiter.CountCharged, per short batch) per UTC
// day; with a Stars budget each is checked again against the log then,
// the charged slots on their way hold their share until counted, and the
// count that spends the budget writes the mark until midnight. StopPaid writes it when Telegram refuses a paid send, and gives
// up the slots reserved ahead at the paid rate, so nothing goes above the
// free limit while paid broadcasts are off. An Ask.Unpaid (an edit, which
// cannot carry the flag) keeps to the free limit while they are on: its
// slot is appended where the free windows hold, and the paid sends resume
// after it.
//
// # 429: pauses
//
// Telegram's 429 does not say whether the chat or the whole bot is flooded,
// and a request sent during a flood wait is more flooding. Penalize pauses
// the chat for retry_after and the whole bot for min(retry_after,
// Config.BotPauseMax). A bot-wide pause moves every slot reserved from now
// on back by one amount, so none falls inside the pause and the schedule
// keeps its order and spacing; the refused message, then every message of
// its chat holding a slot or a turn, get new turns after the pause, in that
// order. A 429 during a pause extends it.
package ratelimit
