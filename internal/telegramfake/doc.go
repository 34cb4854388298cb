// Package telegramfake is a stand-in for the Telegram Bot API that Herald's
// integration tests, its benchmark command and its all-local mode talk to
// instead of api.telegram.org.
//
// The fake answers getMe, getChat and sendMessage with the same JSON
// envelopes the real service uses, applies Telegram's flood control, and lets
// a test inject the failures a real deployment meets: blocked users, kicked
// bots, migrated groups, 5xx answers, HTML gateway pages, hung requests,
// requests that are delivered but never answered, outages and global flood
// waits.
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
// DefaultBotLimit).
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
// retry_after: until it ends, every sendMessage to the chat (for a chat's
// limit) or of the bot (for the bot-wide limit) is answered 429 with the
// remaining retry_after, even when the windows would already admit it, and
// is counted in Stats.InsideWait. Config.Penalty can make such requests
// lengthen the wait. getChat and getMe are not limited.
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
// Every accepted message is recorded; Messages, Stats and Wait expose the
// records in-process, and Handler adds /fake/... endpoints (read by Remote) for
// a client living in another process.
package telegramfake
