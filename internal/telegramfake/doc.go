// Package telegramfake is a stand-in for the Telegram Bot API that Herald's
// integration tests, its benchmark command and its all-local mode talk to
// instead of api.telegram.org.
//
// The fake answers getMe and sendMessage with the same JSON envelopes the real
// service uses, applies Telegram's flood control (a bot-wide rate, a
// per-private-chat rate and a per-group rate), and lets a test inject the
// failures a real deployment meets: blocked users, kicked bots, migrated
// groups, 5xx answers, HTML gateway pages, hung requests, requests that are
// delivered but never answered, outages and global flood waits.
//
// All durations in Config and in the fault methods are expressed in Telegram
// time. Config.TimeScale compresses Telegram time into real time, so a
// benchmark can replay minutes of traffic in seconds; RetryAfterUnit says how
// long one "second" of retry_after lasts in real time.
//
// Every accepted message is recorded; Messages, Stats and Wait expose the
// records in-process, and Handler adds /fake/... endpoints (read by Remote) for
// a client living in another process.
package telegramfake
