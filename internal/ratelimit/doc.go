// Package ratelimit holds Telegram's limits for a whole worker fleet.
//
// State lives in Redis and every decision is one Lua script run (one round
// trip), so any number of worker processes share the limits exactly. The
// limits are GCRA (generic cell rate algorithm) schedules: each limited thing
// keeps a "theoretical arrival time" (TAT); a message may go at
// max(now, TAT-tolerance) and pushes TAT one emission interval further. The
// tolerance is (burst-1) intervals.
//
// A message passes two stages:
//
//  1. Chat pacing. The chat's arrival schedule hands out the message's turn
//     within its chat. A hot chat's 1,000 messages get turns one interval
//     apart, so they neither crowd the bot-wide stage nor poll: each task is
//     deferred once, straight to its turn.
//  2. Queue pacing, the same way, when the queue has a limit of its own.
//  3. The bot-wide limit, first come first served among messages whose turns
//     have come, plus a check against the chat's actual send times (an
//     earlier message of the chat may have been held back by the bot-wide
//     limit; the chat's spacing must still hold at Telegram). That check
//     forgives a send coming up to a quarter interval (at most LateTolerance)
//     early relative to a late predecessor, so small scheduling delays do not
//     accumulate; a reserved slot is used at most that late, else reserved
//     afresh. Two sends to a chat are thus never closer than half an
//     interval; Telegram's own tolerance is larger.
//
// Each stage reserves only its own schedule, at the time the task reaches it,
// so a message waiting for its chat never holds a bot-wide slot that others
// could use.
//
// A decision is Go (the slot is owned; sleep the short wait, then send),
// Again (sleep the short wait, then ask again) or Defer (the wait is long:
// the task goes back to Redis and returns when its slot is due, holding its
// reservation meanwhile). Only waits up to Config.SleepMax hold a worker slot.
//
// Times come from Redis (TIME), so worker clocks need not agree.
package ratelimit
