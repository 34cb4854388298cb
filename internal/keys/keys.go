// Package keys builds every Redis key and channel name that Herald itself uses
// (asynq's own keys are named by internal/broker only).
//
// Herald's keys fall in two groups:
//
//   - One per bot (a [Space]): the limiter's logs and pauses, reservations,
//     send records, chat mappings (migrations, @username ids) and digest
//     claims. Telegram's limits are per bot, and so is every script that
//     decides a send, so each bot's keys share one hash tag: a Lua script
//     reads and updates a bot's whole limiter state atomically, in one
//     round trip, and a Redis Cluster spreads bots over its nodes. The bot
//     "default" keeps the keys "{herald}:..." that single-bot Herald always
//     used, so an upgrade finds its state where it left it; any other bot
//     named N uses "herald:{N}:...". The tag is the bot's name, the same tag
//     as asynq gives the keys of a queue named N (internal/broker): such a
//     queue lives in the bot's hash slot, so that on a Cluster one node holds all of that
//     bot's traffic, and losing a node stops only the bots it holds.
//   - Fleet-wide ones under "{herald}": wake-ups, idempotency claims, the
//     failure log, feeds and heartbeats.
//
// It also holds ClockPrelude, the Lua that the scripts reading Redis's
// clock begin with.
package keys

import "strings"

// Tag is the hash tag of Herald's fleet-wide keys and of the default bot's.
const Tag = "{herald}"

const prefix = Tag + ":"

// DefaultBot is the name of the bot that messages naming none go to.
const DefaultBot = "default"

// Space builds one bot's keys; the zero Space is the default bot's.
type Space struct{ p string }

// Bot returns the key space of the bot named name ("" or DefaultBot: the
// default bot's).
func Bot(name string) Space {
	if name == "" || name == DefaultBot {
		return Space{}
	}
	return Space{p: "herald:{" + name + "}:"}
}

// HashTag is the hash tag that every key of the space carries ("{herald}"
// for the default bot, "{N}" for the bot N); a Redis Cluster keeps the
// bot's state in the slot of this tag.
func (s Space) HashTag() string {
	p := s.prefix()
	return p[strings.IndexByte(p, '{') : strings.IndexByte(p, '}')+1]
}

func (s Space) prefix() string {
	if s.p == "" {
		return prefix
	}
	return s.p
}

// WakeList holds wake-up tokens (queue names) that producers push after an
// enqueue; each wakes one idle worker blocked on it.
func WakeList() string { return prefix + "wake" }

// WakeInbox is one worker process's own wake-up list, for news it learns
// locally while its dequeue round is blocked.
func WakeInbox(id string) string { return prefix + "wake:" + id }

// The limiter's state (the names differ from the GCRA keys of earlier
// versions, which held strings). Each limit is a log: a sorted set of send times
// (Redis microseconds) whose members name the reservation (see
// internal/ratelimit), holding the recent sends and the slots reserved ahead.

// BotLog is the log of the bot-wide limit.
func (s Space) BotLog() string { return s.prefix() + "rl:log:bot" }

// QueueLog is the log of the optional per-queue limit (turns of the queue).
func (s Space) QueueLog(queue string) string { return s.prefix() + "rl:log:queue:" + queue }

// ChatSendsPrefix starts the key of every chat's send log; the normalised
// chat follows it (the limiter's scripts build other chats' keys from it).
func (s Space) ChatSendsPrefix() string { return s.prefix() + "rl:log:chat:" }

// ChatSends is the log of one chat's sends and reserved send slots.
func (s Space) ChatSends(chat string) string { return s.ChatSendsPrefix() + NormChat(chat) }

// ChatTurns is the log of one chat's turns: when each of its messages may
// ask for a bot-wide slot.
func (s Space) ChatTurns(chat string) string { return s.prefix() + "rl:turns:" + NormChat(chat) }

// BotPause holds the end (Redis microseconds) of a bot-wide pause after a 429.
func (s Space) BotPause() string { return s.prefix() + "rl:pause:bot" }

// ChatPause holds the end of one chat's pause after a 429.
func (s Space) ChatPause(chat string) string { return s.prefix() + "rl:pause:chat:" + NormChat(chat) }

// PaidOff marks the bot's paid broadcasts off until the key expires: its
// value is the reason (Telegram refused a paid send, or the day's Stars
// budget is spent). While it exists the bot is paced at its free limit.
func (s Space) PaidOff() string { return s.prefix() + "rl:paid:off" }

// Pacing holds the bot-wide pacing its workers apply (the free limit, the
// paid one, the lanes; JSON written by ratelimit.Limiter.Publish), so that
// another process can tell how fast the bot's backlog goes.
func (s Space) Pacing() string { return s.prefix() + "rl:pacing" }

// PaidCharged counts the bot's sends beyond the free allowance since the
// last UTC midnight, when it expires.
func (s Space) PaidCharged() string { return s.prefix() + "rl:paid:charged" }

// PaidHolds holds the charged paid slots handed out and not yet counted in
// PaidCharged (a sorted set of task ids by slot time), so that a Stars
// budget counts the sends on their way as well as those made.
func (s Space) PaidHolds() string { return s.prefix() + "rl:paid:holds" }

// PriorityLog is the log of the priority allowance: the times at which a
// priority message took another message's bot-wide slot.
func (s Space) PriorityLog() string { return s.prefix() + "rl:log:priority" }

// ReservationPrefix starts every reservation key; the task id follows it.
func (s Space) ReservationPrefix() string { return s.prefix() + "resv:" }

// Reservation holds the send slot a deferred task owns.
func (s Space) Reservation(taskID string) string { return s.ReservationPrefix() + taskID }

// Sent is a message's record: while it is being sent, how far its parts got,
// so a redelivered task (a worker crash between send and ack) is not sent
// again; once it is settled, the message ledger's entry (internal/ledger):
// its state, the Telegram message ids of its parts, or why it failed.
func (s Space) Sent(taskID string) string { return s.prefix() + "sent:" + taskID }

// Blocked marks a chat that blocked or removed the bot: messages to it fail
// at once (reason chat_blocked) without a Telegram request, until the chat
// comes back (a my_chat_member update, or the API). Its value is a JSON
// object (internal/chats); it has no expiry.
func (s Space) Blocked(chat string) string { return s.prefix() + "blocked:" + NormChat(chat) }

// MemberUpdate holds the update_id of the last my_chat_member update applied
// to a chat's Blocked mark (internal/chats), so that update tasks handled
// out of order cannot undo a later change; it expires a day after.
func (s Space) MemberUpdate(chat string) string { return s.prefix() + "member:" + NormChat(chat) }

// Cancel marks a message that the API cancelled while a worker held it: the
// worker checks it with its slot and settles the message as cancelled
// instead of sending it.
func (s Space) Cancel(taskID string) string { return s.prefix() + "cancel:" + taskID }

// Idempotency claims an idempotency key (by its task id) across queues; its
// value is the queue the task went to.
func Idempotency(taskID string) string { return prefix + "idem:" + taskID }

// ChatID holds the numeric chat id that getChat returned for an @username
// (lower-cased), so that a channel named by @name and by id shares one
// schedule.
func (s Space) ChatID(username string) string { return s.prefix() + "chatid:" + NormChat(username) }

// Migrations maps a group chat id to the supergroup id Telegram migrated it to.
func (s Space) Migrations() string { return s.prefix() + "migrated" }

// StopChannel is the pub/sub channel on which a cancel says that marks
// were written that stop messages (Space.Cancel): workers wake the
// messages they hold waiting for a slot to look at their marks.
func StopChannel() string { return prefix + "stops" }

// Failures is the durable stream of permanent failures (asynq keeps only a
// bounded number of archived tasks).
func Failures() string { return prefix + "failures" }

// NormChat lower-cases @usernames: Telegram treats them case-insensitively, and
// two spellings of one channel must share one limit.
func NormChat(chat string) string {
	if strings.HasPrefix(chat, "@") {
		return strings.ToLower(chat)
	}
	return chat
}

// FeedState is a hash with one polled feed's state: the HTTP validators
// (ETag, Last-Modified) of its last 200 answer and whether its first poll has
// recorded the items already present.
func FeedState(feed string) string { return prefix + "feed:" + feed + ":state" }

// FeedSeen is a sorted set of the hashed keys of the items already seen in
// one feed, scored by the last time (Unix milliseconds) the poller saw each.
func FeedSeen(feed string) string { return prefix + "feed:" + feed + ":seen" }

// FeedLease is held by the feed poller process polling one feed, so that
// replicas never poll the same feed at the same time.
func FeedLease(feed string) string { return prefix + "feed:" + feed + ":lease" }

// HeartbeatRecords is the hash of heartbeats: field = heartbeat name, value =
// its JSON record (interval, grace, severity, labels, state, last ping).
func HeartbeatRecords() string { return prefix + "hb:beats" }

// HeartbeatDeadlines is the sorted set of heartbeats that are up, scored by
// the time (unix microseconds, Redis clock) after which each is overdue.
func HeartbeatDeadlines() string { return prefix + "hb:deadlines" }

// HeartbeatOutbox is the sorted set of heartbeat notifications (overdue and
// recovered) not yet handed to the dispatcher, scored by the time (unix
// microseconds) from which a checker may claim them.
func HeartbeatOutbox() string { return prefix + "hb:outbox" }

// Thread remembers the first message of a thread (jobs.Thread) in one
// chat: "<message id>:t" for a text, "<message id>:p" for a photo, or
// "pending" while that message is accepted but not yet sent.
func (s Space) Thread(chat, key string) string {
	return s.prefix() + "thread:" + NormChat(chat) + ":" + key
}

// ButtonSubject holds what the buttons of one alert's message act on
// (internal/buttons), by the reference their callback data carries.
func (s Space) ButtonSubject(ref string) string { return s.prefix() + "cb:" + ref }

// AlertButtons is the set of an alert's messages that carry buttons, by
// the alert's identity (alerts.Alert.Identity): members "<chat>\n<ref>",
// ref naming the ButtonSubject. An acknowledgement that comes from the
// alert's source (internal/interact, SourceAcks) finds the messages there.
func (s Space) AlertButtons(identity string) string { return s.prefix() + "alertcb:" + identity }

// ButtonChats is the set of other chats where the buttons of a
// subject may be pressed: the direct messages an escalation sent them to
// (internal/buttons, AllowChat).
func (s Space) ButtonChats(ref string) string { return s.prefix() + "cbchats:" + ref }

// CallbackQuery records one callback query (a press) by its id, so that a
// press Telegram delivers again is acted on once.
func (s Space) CallbackQuery(id string) string { return s.prefix() + "cbq:" + id }

// Acknowledged records who acknowledged the alert of a thread in a chat,
// and when.
func (s Space) Acknowledged(chat, threadKey string) string {
	return s.prefix() + "ack:" + NormChat(chat) + ":" + threadKey
}

// DigestItemClaim records which digest task delivers one coalesced item (its
// value is that digest's task id), so an item that reaches two digests (after
// an aggregation set was reclaimed) is delivered by one of them only.
func (s Space) DigestItemClaim(itemID string) string { return s.prefix() + "digestitem:" + itemID }

// MaxBotName is the longest bot name.
const MaxBotName = 32

// ValidBotName checks a bot's name: 1 to 32 lower-case letters, digits, '_'
// or '-', starting with a letter. Names become part of Redis keys and of
// environment variable names (HERALD_BOT_<NAME>_TOKEN), hence the narrow set.
func ValidBotName(name string) bool {
	if name == "" || len(name) > MaxBotName || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	return NameChars(name)
}

// NameChars reports whether s uses only a-z, 0-9, '_' and '-': the letters
// of the names Herald puts into keys and namespaces (bots, tokens).
func NameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Silences is the hash of silences: field = silence id, value = its JSON
// record (matchers, start, end, comment, creator). Expired silences stay
// here for the retention, then go.
func Silences() string { return prefix + "silences" }

// SilenceEnds is the sorted set of silence ids scored by each one's end
// (unix milliseconds): the silences in force or still to come are those
// scored after now, the expired ones those before.
func SilenceEnds() string { return prefix + "silences:ends" }

// SilenceMeta is the hash of each silence's version and regex program size
// (field = silence id, value = "rev:size"): a cache reload reads it to tell
// which silences changed, and the create script sums the sizes of the live
// ones against the fleet-wide budget.
func SilenceMeta() string { return prefix + "silences:meta" }

// Silenced is the capped stream of the alerts that a silence kept from
// being sent: which silence, when, and what the alert said.
func Silenced() string { return prefix + "silenced" }

// QuietHeld is the hash of the messages held by a route's quiet hours:
// field = the digest item's id, value = its JSON (queue, item, release
// time).
func QuietHeld() string { return prefix + "quiet:held" }

// QuietDue is the sorted set of held message ids scored by the time (unix
// milliseconds) from which a releaser may take each: the end of its quiet
// hours, or the end of the lease of the releaser that took it.
func QuietDue() string { return prefix + "quiet:due" }

// UpdatesLease is held by the one process of the fleet that long-polls the
// bot's updates (getUpdates): its value names the holder, who renews it
// while polling (internal/interact).
func (s Space) UpdatesLease() string { return s.prefix() + "updates:lease" }

// UpdatesOffset holds the getUpdates offset confirmed so far (the last
// update handed to the queue, plus one), so that a new lease holder
// continues where the previous one stopped.
func (s Space) UpdatesOffset() string { return s.prefix() + "updates:offset" }

// PressLines is the list of lines that button presses added below an
// alert's message in a chat ("Acknowledged by ..."), oldest first; each
// edit of the message shows them all. The incident names one firing of the
// alert (internal/interact: its thread key and first message id).
func (s Space) PressLines(chat, incident string) string {
	return s.prefix() + "presslines:" + NormChat(chat) + ":" + incident
}

// Broadcast is the record of one broadcast (internal/broadcast): a JSON
// object with its bot, sender, counts and whether all its messages are
// stored. Kept for the ledger's retention.
func Broadcast(id string) string { return prefix + "bc:" + id }

// BroadcastChats lists the chats a broadcast's messages go to, one per
// line, in the order of its request; a message's task id is the
// broadcast's id and its chat.
func BroadcastChats(id string) string { return prefix + "bc:" + id + ":chats" }

// Audience is a chat list that an app uploaded under a name for its
// broadcasts (one per line), in the namespace of the token that owns it.
func Audience(owner, name string) string { return prefix + "aud:" + owner + ":" + name }

// BroadcastCharged counts the sends of broadcast id that Telegram charges
// for (paid sends beyond the free rate, ratelimit.Decision.Charged), in
// the bot's space, so that the worker that makes such a send can count it
// next to the send's own keys; the broadcast's status shows it in Stars.
func (s Space) BroadcastCharged(id string) string { return s.prefix() + "bc:charged:" + id }

// BroadcastCounts is a hash of where broadcast id's messages are, kept by
// the ledger wherever a message's record or cancel mark is written
// (internal/ledger, counts.go): fields sent, failed, blocked, cancelled,
// other (settled records by state) and cancelling (marked, not settled).
// In the bot's space, beside the records it counts, so that one script
// writes a record and its count together; a status read is one HGETALL.
func (s Space) BroadcastCounts(id string) string { return s.prefix() + "bc:counts:" + id }

// BroadcastTaskID is the task id of broadcast id's message to chat: the
// id, a colon and the chat (keys.NormChat), so that a message's task id
// follows from the broadcast's chat list, and the broadcast from a task id
// (BroadcastOf).
func BroadcastTaskID(id, chat string) string { return id + ":" + NormChat(chat) }

// BroadcastOf returns the broadcast whose message taskID is, false for
// any other task.
func BroadcastOf(taskID string) (string, bool) {
	id, _, ok := strings.Cut(taskID, ":")
	if !ok || !strings.HasPrefix(id, "bc-") {
		return "", false
	}
	return id, true
}
