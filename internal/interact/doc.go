// Package interact turns presses of the buttons under Herald's alerts into
// what they ask for: an acknowledgement, or a silence; follows the chats
// that block the bot or take it back (my_chat_member updates); and
// answers the bot commands Herald knows (/oncall).
//
// # Receiving presses
//
// Telegram hands a bot its callback queries in one of two ways, and the
// fleet uses exactly one per deployment:
//
//   - getUpdates (poller.go, the default): for each bot, the one worker
//     process that holds the bot's lease (keys.Space.UpdatesLease, taken
//     when free and renewed every third of its few seconds by a script
//     that checks the holder) long polls, each poll ending before the
//     lease could run out, so that a dead holder's successor polls within
//     seconds and two holders never poll at once. Standbys try the lease
//     as the one they saw runs out, and at least every 2 s. Every update becomes a task on the
//     queue, and only then does the offset stored in Redis
//     (keys.Space.UpdatesOffset) move past it, so that a holder that dies
//     loses nothing and the next one continues from there without handing
//     the same updates over again.
//   - a webhook (webhook.go, register.go): the workers point each bot's
//     webhook at the producer (setWebhook, with a secret token), and the
//     producer's POST /telegram/{bot}/updates checks the secret and
//     enqueues the same task. The producer never holds a bot token.
//
// Both make a TypeUpdate task (task.go) on the critical queue, whose id is
// derived from the bot and the update id, so that an update Telegram
// delivers twice within a while is queued once.
//
// # Handling a press
//
// The worker's handler (press.go) reads the button's data
// (buttons.ParseData), loads what it acts on (buttons.Load) and checks
// who pressed (buttons.Subject.Allows) and where (the alert's own chat,
// not a copy of the message elsewhere; or the presser's private chat with
// the bot when an escalation sent them the buttons there, which acts on
// the alert's message alike, where.go). The checks fail closed: a press
// from no chat (inline mode) or from one that cannot be matched to the
// alert's is refused like one from another chat. A permitted press is
// recorded once, by its callback query id, in keys.Space.CallbackQuery:
// the record also holds how far the press got, so that a retried task
// finishes the press and a redelivered one does nothing. The record also
// names the one task that answers the query (the recording one, or for a
// press not recorded, the first to answer): Telegram takes one answer,
// and it must be the outcome's. Then:
//
//   - Acknowledge stores who acknowledged this firing of the alert first
//     (keys.Space.Acknowledged, named by the thread key and the id of the
//     thread's first message); later acknowledgements are told who did;
//   - Silence 1h and Silence 24h create a silence of the alert's matchers
//     through the silences store;
//
// the press is answered (answerCallbackQuery, directly: Telegram does not
// count answers toward a bot's message limits), and the thread's first
// message (the message pressed, once the thread is closed) is edited to
// show what happened: a jobs.SendMessage in edit mode on the queue, under
// the fleet-wide limits like any other message.
//
// An acknowledgement also stops the alert's escalation, when it has one
// (escalation.Store.Acknowledge), and the line says how long after the
// alert fired it came.
//
// When the alert came from Alertmanager and its route names that
// Alertmanager (callbacks.Subject.Alertmanager), the first acknowledgement
// also creates a silence of the alert's labels there (alertmanager.go,
// through amsilence), and a second line says so, or that it failed; a
// failure leaves the acknowledgement standing and is not retried.
//
// An acknowledge event from the alert's source (PagerDuty's, Opsgenie's,
// received by package inbound) is acted on as a press of Acknowledge by
// that tool (sourceack.go): the router indexes each buttoned message by
// its alert (keys.Space.AlertButtons), and SourceAcks stores the
// acknowledgement, stops the escalation and queues the same edit.
//
// # Chats that block the bot
//
// The same update tasks carry my_chat_member updates, which Telegram sends
// when the bot's own membership of a chat changes: a user blocked or
// unblocked it in a private chat, a group or channel removed it or took
// it back. The handler (member.go) marks the chat blocked for the bot
// ("kicked", "left", or "restricted" and no longer a member) or clears the
// mark (any status in the chat) through chats.Store.Follow, by the chat's
// id and, for a public group or channel, its @username, in update_id
// order per chat so that two such tasks run in either order leave the
// later change. A chat newly marked is handed to WorkerConfig.OnBlocked
// (the chat.blocked callback). Both the poller and the registrar ask
// Telegram for callback_query, my_chat_member and message updates.
//
// # Commands
//
// Messages arrive the same way (allowed_updates asks for them; a bot in
// privacy mode gets only commands from groups). One that starts with "/"
// becomes a TypeUpdate task too; the handler (command.go) answers the
// commands roster.Commands knows, /oncall (who is on call, from the
// schedules the producers publish), with a message in the chat and topic
// asked from, through the queue. Other messages are confirmed and dropped.
//
// Pressers are named as telegram.UpdateUser.Name has it: by @username, or
// by a name that cannot pass for one, with the user id.
//
// docs/BUTTONS.md describes the settings and what a user sees.
package interact
