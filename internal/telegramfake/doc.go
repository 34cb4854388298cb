// Package telegramfake is a stand-in for the Telegram Bot API that Herald's
// integration tests, its benchmark command and its all-local mode talk to
// instead of api.telegram.org.
//
// The fake answers getMe, getChat and sendMessage with the same JSON
// envelopes the real service uses, applies Telegram's flood control, and lets
// a test inject the failures a real deployment meets: blocked users, kicked
// bots, migrated groups, 5xx answers, HTML gateway pages, hung requests,
// requests that are delivered but never answered, outages and global flood
// waits. It can serve several bots at once, each with its own token and its
// own limits.
//
// # Several bots
//
// Config.Token is the bot named DefaultBot ("default"); Config.Tokens adds
// bots by name. With neither set the fake serves DefaultToken alone. Every
// token is a separate bot, as on Telegram: its id is the number before the
// token's colon, getMe describes it (Config.BotUsername for the default bot,
// "herald_<name>_bot" for the others), and it has its own flood control. Two
// bots may each send 30 messages a second, may each send one a second to the
// same chat, and a flood wait announced to one does not refuse the other. A
// token the fake does not serve is answered 401.
//
// Chats are shared: a chat id, its @name, its getChat answer, its message
// numbering and its ChatBehavior (a migration included) are the same for
// every bot. Records say which bot sent each message (Message.Bot, its name,
// and Message.BotID), Server.MessagesOf filters them, and Stats.Bots holds
// each bot's own counters beside the totals. The fault methods that act on
// "the bot" (FailNext, SetFaultRates, SetOutage, Force429) take optional bot
// selectors, a bot's name or id; without one they act on every bot.
//
// A token appears in nothing the fake shows: not in records, counters, log
// records, error answers or control errors. Bots are named by name and id.
//
// # Flood control is strict by default
//
// Telegram's Bot FAQ gives three numbers: in a single chat "avoid sending
// more than one message per second"; in a group the bot "will not be able to
// send more than 20 messages per minute"; and in bulk the API "will not allow
// more than about 30 messages per second". The fake reads them as hard
// limits with no burst: private chats 1 per second; groups, supergroups and
// channels 1 per second and 20 per minute; the bot as a whole 30 per second
// over all chats (see DefaultPrivateLimit, DefaultGroupLimit and
// DefaultBotLimit). Every bot is held to them separately: a chat's limit
// counts one bot's sends to it, not every bot's.
//
// Each limit is a set of sliding windows over accepted sends. A window
// {N, Per} admits a send only if fewer than N sends of its scope were
// accepted in the last Per: the accepted send N places back must be at least
// Per×(1−Tolerance) old, where Config.Tolerance is 0.3% unless set (at most
// 0.5%). Refused sends do not count. A client that paces itself exactly at
// Telegram's documented rates is therefore accepted; one that relies on a
// burst is not. Config.Lenient restores some slack (N+1 per chat window, 2×N
// for the bot) for tests written against a more forgiving fake.
//
// A refused send is answered 429 with parameters.retry_after: the time until
// the scope's windows admit again, in whole Telegram seconds rounded up and
// at least 1. That answer announces a flood wait that lasts the whole
// retry_after: until it ends, every sendMessage of that bot to the chat (for
// a chat's limit) or to any chat (for the bot-wide limit) is answered 429
// with the remaining retry_after, even when the windows would already admit
// it, and is counted in Stats.InsideWait. Config.Penalty can make such
// requests lengthen the wait. getChat and getMe are not limited.
//
// A chat named by @username gets a stable -100… id; the name in any letter
// case and that id name one chat and share one flood-control scope.
//
// # Time
//
// All durations in Config and in the fault methods are expressed in Telegram
// time. Config.TimeScale compresses Telegram time into real time, so a
// benchmark can replay minutes of traffic in seconds; RetryAfterUnit says how
// long one "second" of retry_after lasts in real time. Config.Now replaces
// the clock, so tests can step through windows without sleeping.
//
// # Records
//
// Every accepted message is recorded with the name and id of the bot that
// sent it; Messages, MessagesOf, Stats and Wait expose the records
// in-process, and Handler adds /fake/... endpoints (read by Remote) for a
// client living in another process, with the same per-bot breakdown.
package telegramfake
