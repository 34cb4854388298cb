// Package chats keeps the fleet-wide record of the chats that blocked or
// removed a bot.
//
// A chat is blocked for a bot when Telegram says the bot can no longer
// write there: a 403 answer to a send ("bot was blocked by the user",
// "bot was kicked from the group chat", source telegram_403), or a
// my_chat_member update whose new status is "kicked" or "left" (source
// my_chat_member). The mark is one Redis string per bot and chat,
// keys.Space.Blocked, in the bot's hash slot, so the worker's rate-limit
// script can test it in the same call that decides a send: while it exists
// a message to the chat fails at once with reason chat_blocked and costs no
// Telegram request. Its value is a JSON [Block] (when, why, what told
// Herald, Telegram's error text); it never expires.
//
// The mark goes away when the chat comes back: a my_chat_member update
// with the bot a member again (a user who unblocked it, a group that added
// it back), or DELETE /v1/chats/{bot}/{chat}/block (source api) when an
// operator knows better.
//
// Block sets the mark only when there is none (SET NX) and reports whether
// it did: the caller that set it is the one that tells the app (a
// chat.blocked callback), once per blocking. Updates from Telegram go
// through [Store.Follow], which applies them in update_id order per chat
// (keys.Space.MemberUpdate remembers the last one for a day): tasks that
// carry a block and then an unblock may run in either order on a fleet,
// and the later change must win.
//
// Chats are named as Herald stores them (keys.ParseChat): a numeric id in
// canonical decimal or an @username, whose letter case does not matter
// (keys.NormChat).
//
// Every write is recorded with durable.Wrote, so a caller that settles its
// writes (the API) waits for the replicas of the bot's slot too.
//
// The metrics herald_chat_blocks_total and herald_chat_unblocks_total
// count the changes, by bot and source ([Metrics], [WithMetrics]); the
// producer's API (internal/producer/chats.go) and CLI show and clear the
// mark, and internal/interact follows the my_chat_member updates.
package chats
